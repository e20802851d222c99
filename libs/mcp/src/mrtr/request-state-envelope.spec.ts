import { randomBytes } from 'node:crypto';
import type { GatewayConfig } from '@app/config';
import { GatewayError } from '../errors/gateway-error';
import { MrtrSeal } from '../sealing/mrtr-seal';
import { RequestStateEnvelope, type StateBinding } from './request-state-envelope';
import { sealedCallerKey } from '../sealing/sealed-caller';
import { bindingOf, type UpstreamMrtrRequest } from './upstream-mrtr-request';
import type { UpstreamDefinition } from '@app/config';

const KEY_A = randomBytes(32);
const KEY_B = randomBytes(32);

function config(keys: { kid: string; key: Buffer }[], identity = 'gw'): GatewayConfig {
  return {
    sessionKeys: keys,
    mcp: { identity, session: { requestStateTtlSeconds: 600 } },
  } as unknown as GatewayConfig;
}

function envelope(keys = [{ kid: 'a', key: KEY_A }], identity = 'gw'): RequestStateEnvelope {
  const c = config(keys, identity);
  return new RequestStateEnvelope(new MrtrSeal(c), c);
}

const binding: StateBinding = { upstream: 'calc', tool: 'calc__deploy', caller: null };

function invalidParams(run: () => unknown): GatewayError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).code).toBe('invalid_params');
    return err as GatewayError;
  }
  throw new Error('expected -32602');
}

describe('the requestState envelope: AEAD, bound to upstream, tool and caller (docs/operations.md §11 "Multi round-trip and era bridging")', () => {
  it('round-trips the upstream state, which never shows in the envelope', () => {
    const e = envelope();
    const token = e.wrap(binding, { kind: 'relayed', state: 'opaque-state-staging' });
    expect(token).not.toContain('opaque');
    expect(e.unwrap(token, binding)).toEqual({ kind: 'relayed', state: 'opaque-state-staging' });
  });

  it('round-trips a parked call (owner replica and key)', () => {
    const e = envelope();
    const token = e.wrap(binding, { kind: 'parked', owner: 'r1', key: 'k1' });
    expect(e.unwrap(token, binding)).toEqual({ kind: 'parked', owner: 'r1', key: 'k1' });
  });

  it('any other replica with the same keys opens it; a rotated-in key still opens old envelopes', () => {
    const token = envelope([{ kid: 'a', key: KEY_A }]).wrap(binding, {
      kind: 'relayed',
      state: 's',
    });
    const rotated = envelope([
      { kid: 'b', key: KEY_B },
      { kid: 'a', key: KEY_A },
    ]);
    expect(rotated.unwrap(token, binding)).toEqual({ kind: 'relayed', state: 's' });
  });

  it.each<[string, (t: string) => unknown]>([
    ['one character changed', (t) => `${t.slice(0, -2)}${t.at(-2) === 'A' ? 'B' : 'A'}${t.at(-1)}`],
    ['cut short', (t) => t.slice(0, -4)],
    ['another key id', (t) => t.replace('.a.', '.z.')],
    ['a non-canonical base64 spelling', (t) => `${t}=`],
    ['a number', () => 7],
    ['an upstream state', () => 'opaque-state-staging'],
  ])('a tampered envelope (%s) is -32602', (_kind, spoil) => {
    const e = envelope();
    const token = e.wrap(binding, { kind: 'relayed', state: 's' });
    invalidParams(() => e.unwrap(spoil(token), binding));
  });

  it('an envelope sealed with other keys, or by a gateway of another identity, is -32602', () => {
    const token = envelope([{ kid: 'a', key: KEY_B }]).wrap(binding, {
      kind: 'relayed',
      state: 's',
    });
    invalidParams(() => envelope().unwrap(token, binding));
    const other = envelope(undefined, 'other-gw').wrap(binding, { kind: 'relayed', state: 's' });
    invalidParams(() => envelope().unwrap(other, binding));
  });

  it('an expired envelope is -32602', () => {
    const e = envelope();
    const token = e.wrap(binding, { kind: 'relayed', state: 's' }, 1);
    const seal = new MrtrSeal(config([{ kid: 'a', key: KEY_A }]));
    expect(seal.open('request-state', token, Date.now() + 10)).toBeUndefined();
    invalidParams(() =>
      new RequestStateEnvelope(
        { open: (p: 'request-state', t: unknown) => seal.open(p, t, Date.now() + 10) } as MrtrSeal,
        config([]),
      ).unwrap(token, binding),
    );
  });

  it.each<[string, Partial<StateBinding>]>([
    ['another tool', { tool: 'calc__other' }],
    ['another upstream', { upstream: 'repo' }],
    [
      'another caller',
      { caller: sealedCallerKey({ subject: 'mallory', scopes: [], claims: {}, token: 't' }) },
    ],
  ])('an envelope presented for %s is -32602 (foreign)', (_kind, change) => {
    const e = envelope();
    const token = e.wrap(
      {
        ...binding,
        caller: sealedCallerKey({ subject: 'alice', scopes: [], claims: {}, token: 't' }),
      },
      { kind: 'relayed', state: 's' },
    );
    const expected = {
      ...binding,
      caller: sealedCallerKey({ subject: 'alice', scopes: [], claims: {}, token: 't' }),
      ...change,
    };
    expect(invalidParams(() => e.unwrap(token, expected)).message).toMatch(/another/);
  });

  it('a bridge id never opens as a requestState (purpose bound)', () => {
    const seal = new MrtrSeal(config([{ kid: 'a', key: KEY_A }]));
    const id = seal.seal('bridge-id', { exp: Date.now() + 60_000 });
    expect(seal.open('request-state', id)).toBeUndefined();
    expect(seal.open('bridge-id', id)).toBeDefined();
  });

  it('binds the caller by subject and client id; no caller (auth off) is null', () => {
    expect(sealedCallerKey(undefined)).toBeNull();
    const a = sealedCallerKey({ subject: 'u', clientId: 'c1', scopes: [], claims: {}, token: 'x' });
    const b = sealedCallerKey({ subject: 'u', clientId: 'c2', scopes: [], claims: {}, token: 'y' });
    expect(a).not.toBe(b);
    expect(
      sealedCallerKey({ subject: 'u', clientId: 'c1', scopes: ['s'], claims: {}, token: 'z' }),
    ).toBe(a);
  });

  describe('bindingOf: what a request binds (wire notes §4 "State and security")', () => {
    const request = (
      over: Partial<UpstreamMrtrRequest> & { url?: string } = {},
    ): UpstreamMrtrRequest => ({
      upstream: { id: 'reg', url: over.url ?? 'http://a.example/mcp' } as UpstreamDefinition,
      method: 'tools/call',
      target: 'reg__deploy',
      arguments: { env: 'staging', n: 1 },
      params: {},
      ...over,
    });

    it('opens for the same request again, whatever object carries the same arguments', () => {
      const e = envelope();
      const token = e.wrap(bindingOf(request(), null), { kind: 'relayed', state: 's' });
      expect(
        e.unwrap(token, bindingOf(request({ arguments: { env: 'staging', n: 1 } }), null)),
      ).toEqual({
        kind: 'relayed',
        state: 's',
      });
    });

    it.each([
      ['other arguments', { arguments: { env: 'prod', n: 1 } }],
      ['no arguments', { arguments: undefined }],
      ['another server registered under the same id', { url: 'http://b.example/mcp' }],
      ['a prompt of the same name', { method: 'prompts/get' as const }],
      ['another resource', { method: 'resources/read' as const, target: 'file:///x' }],
    ])('refuses %s', (_what, over) => {
      const e = envelope();
      const token = e.wrap(bindingOf(request(), null), { kind: 'relayed', state: 's' });
      invalidParams(() => e.unwrap(token, bindingOf(request(over), null)));
    });
  });
});
