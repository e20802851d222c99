import type { GatewayConfig } from '@app/config';
import { RelayIds } from './relay-ids';

const withKey = (key?: Buffer): GatewayConfig =>
  ({ sessionKeys: key === undefined ? [] : [{ kid: 'k', key }] }) as unknown as GatewayConfig;

describe('RelayIds (issue 10 §5: the relayed request id carries, sealed, what routing needs)', () => {
  const key = Buffer.alloc(32, 7);

  it('opens what it sealed, on any replica holding the same session key', () => {
    const a = new RelayIds(withKey(key));
    const b = new RelayIds(withKey(key));
    const id = a.seal({ upstream: 'ref', session: 'sess-1', id: 42 });
    expect(id.startsWith('gw-relay.')).toBe(true);
    expect(id).not.toContain('sess-1');
    expect(b.open(id)).toEqual({ upstream: 'ref', session: 'sess-1', id: 42 });
    expect(b.open(a.seal({ upstream: 'v2', id: 'x' }))).toEqual({ upstream: 'v2', id: 'x' });
  });

  it('refuses plain ids, forged or altered tokens and tokens sealed with another key', () => {
    const ids = new RelayIds(withKey(key));
    const token = ids.seal({ upstream: 'ref', id: 1 });
    expect(ids.open(1)).toBeUndefined();
    expect(ids.open('abc')).toBeUndefined();
    expect(ids.open('gw-relay.')).toBeUndefined();
    // one character of the sealed body changed (always to a different one)
    const at = 20;
    const flipped = token.slice(0, at) + (token[at] === 'A' ? 'B' : 'A') + token.slice(at + 1);
    expect(flipped).not.toBe(token);
    expect(ids.open(flipped)).toBeUndefined();
    expect(new RelayIds(withKey(Buffer.alloc(32, 8))).open(token)).toBeUndefined();
    // without a session key the key is random per process
    expect(
      new RelayIds(withKey()).open(new RelayIds(withKey()).seal({ upstream: 'u', id: 1 })),
    ).toBeUndefined();
  });
});
