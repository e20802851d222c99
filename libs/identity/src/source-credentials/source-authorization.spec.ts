import type { ResolvedAuthorization } from '@app/config';
import { callerAuthorization, gatewayAuthorization } from './source-authorization';

const modes: Record<ResolvedAuthorization['mode'], ResolvedAuthorization> = {
  none: { mode: 'none' },
  passthrough: { mode: 'passthrough' },
  static: { mode: 'static', value: 'Bearer configured' },
  tokenExchange: {
    mode: 'tokenExchange',
    tokenEndpoint: 'https://idp.example/token',
    clientId: 'gw',
    clientSecret: 's',
    audience: 'svc',
    scope: undefined,
  },
};

describe('the Authorization a source gets, by its authorization.mode (bundles and upstreams)', () => {
  it.each([
    ['none', undefined],
    ['passthrough', 'Bearer caller'],
    ['static', 'Bearer configured'],
    ['tokenExchange', 'Bearer issued-for-source'],
  ] as const)('on a caller request, %s → %s', (mode, expected) => {
    expect(callerAuthorization(modes[mode], 'Bearer caller', 'issued-for-source')).toBe(expected);
  });

  it('passthrough sends the first of repeated values, and nothing when the caller sent none', () => {
    expect(callerAuthorization(modes.passthrough, ['Bearer a', 'Bearer b'])).toBe('Bearer a');
    expect(callerAuthorization(modes.passthrough, undefined)).toBeUndefined();
  });

  it('tokenExchange without an issued token sends nothing, never the caller’s own', () => {
    expect(callerAuthorization(modes.tokenExchange, 'Bearer caller')).toBeUndefined();
  });

  it.each([
    ['none', undefined],
    ['passthrough', undefined],
    ['static', 'Bearer configured'],
    ['tokenExchange', 'Bearer gateway-own'],
  ] as const)('on the gateway’s own traffic, %s → %s', (mode, expected) => {
    expect(gatewayAuthorization(modes[mode], 'gateway-own')).toBe(expected);
  });
});
