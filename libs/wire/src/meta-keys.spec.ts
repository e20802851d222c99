import { RawJson } from './raw-json';
import { MetaKey, withoutRequestEnvelope } from './meta-keys';

const envelope = {
  [MetaKey.protocolVersion]: '2026-07-28',
  [MetaKey.clientCapabilities]: { sampling: {} },
  [MetaKey.clientInfo]: { name: 'agent', version: '1' },
  [MetaKey.logLevel]: 'debug',
};

describe('withoutRequestEnvelope: a 2026 request as a 2025 session sends it', () => {
  it('takes out every envelope key and keeps every other _meta key and param', () => {
    const args = new RawJson('{"a":1}');
    expect(
      withoutRequestEnvelope({
        name: 'add',
        arguments: args,
        _meta: { ...envelope, progressToken: 'p1', traceparent: '00-abc-def-01' },
      }),
    ).toEqual({
      name: 'add',
      arguments: args,
      _meta: { progressToken: 'p1', traceparent: '00-abc-def-01' },
    });
  });

  it('leaves out an _meta that held the envelope only', () => {
    expect(withoutRequestEnvelope({ name: 'add', _meta: envelope })).toEqual({ name: 'add' });
  });

  it('returns the same object when there is nothing to take out', () => {
    const plain = { name: 'add', _meta: { progressToken: 7 } };
    expect(withoutRequestEnvelope(plain)).toBe(plain);
    const noMeta = { name: 'add' };
    expect(withoutRequestEnvelope(noMeta)).toBe(noMeta);
    expect(withoutRequestEnvelope(undefined)).toBeUndefined();
  });

  it('a single envelope key is enough to be taken out', () => {
    expect(
      withoutRequestEnvelope({ _meta: { [MetaKey.protocolVersion]: '2026-07-28', k: 1 } }),
    ).toEqual({
      _meta: { k: 1 },
    });
  });
});

describe('withoutRequestEnvelope: a member named __proto__', () => {
  it("stays the client's own _meta member, sent on as written", () => {
    const params = JSON.parse(
      `{"name":"t","_meta":{"${MetaKey.protocolVersion}":"2026-07-28","__proto__":{"x":1},"k":2}}`,
    ) as Record<string, unknown>;
    const sent = withoutRequestEnvelope(params);
    const meta = sent?._meta as Record<string, unknown>;
    expect(Object.getPrototypeOf(meta)).toBe(Object.prototype);
    expect(Object.keys(meta)).toEqual(['__proto__', 'k']);
    expect(JSON.stringify(sent)).toBe('{"name":"t","_meta":{"__proto__":{"x":1},"k":2}}');
  });
});
