import { SessionValues, type SessionValueKind } from './session-values';
import type { SharedSessionStore } from './shared-session-store';

const KIND: SessionValueKind<string> = {
  name: 'test',
  maxSessions: 100,
  write: (v) => v,
  read: (v) => v,
};

describe('SessionValues in memory: one caller holds at most a tenth of a replica', () => {
  const LATER = Date.now() + 3_600_000;

  it("a caller's many sessions push out its own oldest values, never another caller's", async () => {
    const values = new SessionValues(KIND, null);
    await values.set('victim-session', 'mine', LATER, Date.now(), 'sub:victim');
    for (let i = 0; i < 500; i++)
      await values.set(`mallory-${i}`, `m${i}`, LATER, Date.now(), 'sub:mallory');
    expect(values.get('victim-session')).toBe('mine');
    // mallory keeps her newest ten (100 / 10), her older ones are gone
    expect(values.get('mallory-499')).toBe('m499');
    expect(values.get('mallory-490')).toBe('m490');
    expect(values.get('mallory-489')).toBeUndefined();
  });

  it('a session set again stays one entry of its caller', async () => {
    const values = new SessionValues(KIND, null);
    for (let i = 0; i < 30; i++) await values.set('one', `v${i}`, LATER, Date.now(), 'sub:a');
    await values.set('two', 'w', LATER, Date.now(), 'sub:a');
    expect(values.get('one')).toBe('v29');
    expect(values.get('two')).toBe('w');
  });

  it('without a caller (auth off) the replica-wide bound alone applies', async () => {
    const values = new SessionValues(KIND, null);
    for (let i = 0; i < 150; i++) await values.set(`s${i}`, `v${i}`, LATER);
    expect(values.get('s49')).toBeUndefined();
    expect(values.get('s50')).toBe('v50');
  });
});

describe('SessionValues with a shared store: the share bounds what a caller keeps there too', () => {
  const LATER = Date.now() + 3_600_000;
  /** What Redis holds, by key. */
  const stored = new Map<string, string>();
  const store: SharedSessionStore = {
    set: (key, value) => Promise.resolve(void stored.set(key, value)),
    get: (key) => Promise.resolve(stored.get(key) ?? null),
    delete: (key) => Promise.resolve(void stored.delete(key)),
  };

  it("a caller's values pushed out of its share are removed from the store; another caller's stay", async () => {
    const values = new SessionValues(KIND, store);
    await values.set('victim-session', 'mine', LATER, Date.now(), 'sub:victim');
    for (let i = 0; i < 500; i++)
      await values.set(`mallory-${i}`, `m${i}`, LATER, Date.now(), 'sub:mallory');
    await new Promise((resolve) => setImmediate(resolve));
    expect([...stored.values()].filter((v) => /^m\d+$/.test(v))).toHaveLength(10);
    expect([...stored.values()]).toContain('mine');
    expect([...stored.values()]).toContain('m499');
  });
});
