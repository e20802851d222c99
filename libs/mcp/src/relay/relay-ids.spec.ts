import type { GatewayConfig } from '@app/config';
import type { CallerAccess, CallerIdentity } from '@app/identity';
import { MrtrSeal } from '../sealing/mrtr-seal';
import { answerBinding, type AnswerBinding } from './answer-binding';
import { RelayIds } from './relay-ids';

function config(key?: Buffer, identity = 'gw', pendingInputMillis = 120_000): GatewayConfig {
  return {
    sessionKeys: key === undefined ? [] : [{ kid: 'k', key }],
    mcp: { identity, session: { pendingInputMillis } },
  } as unknown as GatewayConfig;
}

function relayIds(key?: Buffer, identity = 'gw', pendingInputMillis = 120_000): RelayIds {
  const c = config(key, identity, pendingInputMillis);
  return new RelayIds(new MrtrSeal(c), c);
}

const caller = (subject: string): CallerIdentity => ({
  subject,
  scopes: [],
  claims: { sub: subject },
  token: 't',
});
const granted = (key: string): CallerAccess => ({
  all: false,
  key,
  sources: new Set(['ref']),
  tools: new Set(),
});
const alice: AnswerBinding = answerBinding(caller('alice'), granted('0'), undefined);
const anonymous: AnswerBinding = answerBinding(undefined, undefined, undefined);

describe('RelayIds: the relayed request id carries, sealed, what routing needs (docs/operations.md §10 "Relaying")', () => {
  const key = Buffer.alloc(32, 7);

  it('opens what it sealed, on any replica holding the same session key', () => {
    const a = relayIds(key);
    const b = relayIds(key);
    const id = a.seal({ upstream: 'ref', session: 'sess-1', id: 42 }, alice);
    expect(id.startsWith('gw-relay.')).toBe(true);
    expect(id).not.toContain('sess-1');
    expect(b.open(id, alice)).toEqual({
      kind: 'origin',
      origin: { upstream: 'ref', session: 'sess-1', id: 42 },
    });
    expect(b.open(a.seal({ upstream: 'v2', id: 'x' }, anonymous), anonymous)).toEqual({
      kind: 'origin',
      origin: { upstream: 'v2', id: 'x' },
    });
  });

  it('plain ids are not relay ids; forged or altered tokens and tokens sealed with another key are foreign', () => {
    const ids = relayIds(key);
    const token = ids.seal({ upstream: 'ref', id: 1 }, alice);
    const foreign = { kind: 'foreign' };
    expect(ids.open(1, alice)).toBeUndefined();
    expect(ids.open('abc', alice)).toBeUndefined();
    expect(ids.open('gw-relay.', alice)).toEqual(foreign);
    // one character of the sealed body changed (always to a different one)
    const at = 20;
    const flipped = token.slice(0, at) + (token[at] === 'A' ? 'B' : 'A') + token.slice(at + 1);
    expect(flipped).not.toBe(token);
    expect(ids.open(flipped, alice)).toEqual(foreign);
    expect(relayIds(Buffer.alloc(32, 8)).open(token, alice)).toEqual(foreign);
    // without a session key the key is random per process
    expect(
      relayIds().open(relayIds().seal({ upstream: 'u', id: 1 }, anonymous), anonymous),
    ).toEqual(foreign);
  });

  it('a relay id put to a 2025 session is answered from that session only: another, or none, gets other-session', () => {
    const ids = relayIds(key);
    const token = ids.seal(
      { upstream: 'ref', id: 1 },
      answerBinding(caller('alice'), granted('0'), 'session-a'),
    );
    expect(ids.open(token, answerBinding(caller('alice'), granted('0'), 'session-a'))).toEqual({
      kind: 'origin',
      origin: { upstream: 'ref', id: 1 },
    });
    for (const session of ['session-b', undefined])
      expect(ids.open(token, answerBinding(caller('alice'), granted('0'), session))).toEqual({
        kind: 'other-session',
      });
    // another caller is told so first, whatever its session
    expect(ids.open(token, answerBinding(caller('bob'), granted('0'), 'session-a'))).toEqual({
      kind: 'other-caller',
    });
    // one put to a client without a session (stateless mode) is bound to none
    const sessionless = ids.seal({ upstream: 'ref', id: 2 }, alice);
    expect(
      ids.open(sessionless, answerBinding(caller('alice'), granted('0'), 'session-a')),
    ).toEqual({
      kind: 'origin',
      origin: { upstream: 'ref', id: 2 },
    });
  });

  it('a relay id is bound to the caller and its grant: another sub, or the same sub with another grant, gets other-caller', () => {
    const ids = relayIds(key);
    const token = ids.seal({ upstream: 'ref', id: 1 }, alice);
    expect(ids.open(token, answerBinding(caller('bob'), granted('0'), undefined))).toEqual({
      kind: 'other-caller',
    });
    expect(ids.open(token, answerBinding(caller('alice'), granted('1'), undefined))).toEqual({
      kind: 'other-caller',
    });
    expect(ids.open(token, answerBinding(caller('alice'), { all: true }, undefined))).toEqual({
      kind: 'other-caller',
    });
    expect(ids.open(token, anonymous)).toEqual({ kind: 'other-caller' });
  });

  it('a relay id of another gateway identity never opens, even with the same session keys', () => {
    const token = relayIds(key, 'gw-one').seal({ upstream: 'ref', id: 1 }, alice);
    expect(relayIds(key, 'gw-two').open(token, alice)).toEqual({ kind: 'foreign' });
    expect(relayIds(key, 'gw-one').open(token, alice)?.kind).toBe('origin');
  });

  it('a relay id expires after session.pendingInputMillis', () => {
    jest.useFakeTimers({ now: 1_000_000 });
    try {
      const ids = relayIds(key, 'gw', 5_000);
      const token = ids.seal({ upstream: 'ref', id: 1 }, alice);
      jest.setSystemTime(1_000_000 + 4_999);
      expect(ids.open(token, alice)?.kind).toBe('origin');
      jest.setSystemTime(1_000_000 + 5_000);
      expect(ids.open(token, alice)).toEqual({ kind: 'expired' });
    } finally {
      jest.useRealTimers();
    }
  });
});
