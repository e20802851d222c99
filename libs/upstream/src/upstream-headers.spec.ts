import type { UpstreamDefinition } from '@app/config';
import { gatewayRequestHeaders, upstreamRequestHeaders } from './upstream-headers';

function definition(authorization: unknown): UpstreamDefinition {
  return { forwardHeaders: ['x-tenant'], authorization } as unknown as UpstreamDefinition;
}

const CALLER = { authorization: 'Bearer caller', 'x-tenant': 'tenant-a' };

describe("gatewayRequestHeaders: the gateway's own headers for session-level traffic", () => {
  it('static: its configured value, and no forwardHeaders', () => {
    const up = definition({ mode: 'static', value: 'Bearer own' });
    expect(gatewayRequestHeaders(up)).toEqual({ authorization: 'Bearer own' });
    expect(upstreamRequestHeaders(up, CALLER)).toEqual({
      authorization: 'Bearer own',
      'x-tenant': 'tenant-a',
    });
  });

  it("tokenExchange: the gateway's client-credentials token, never the caller's", () => {
    const up = definition({ mode: 'tokenExchange' });
    expect(gatewayRequestHeaders(up, 'cc-token')).toEqual({ authorization: 'Bearer cc-token' });
    expect(gatewayRequestHeaders(up)).toEqual({});
  });

  it('passthrough and none: nothing, whatever the caller sent', () => {
    expect(gatewayRequestHeaders(definition({ mode: 'passthrough' }))).toEqual({});
    expect(gatewayRequestHeaders(definition({ mode: 'none' }))).toEqual({});
    expect(upstreamRequestHeaders(definition({ mode: 'passthrough' }), CALLER)).toEqual(CALLER);
  });
});
