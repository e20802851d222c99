import { EndedSessions, MAX_ENDED_SESSIONS } from './ended-sessions';
import type { SharedSessionStore } from './shared-session-store';

/** What Redis holds, by key, and how often it was read. */
function memoryStore(): SharedSessionStore & { stored: Map<string, string>; reads: number } {
  const stored = new Map<string, string>();
  const store = {
    stored,
    reads: 0,
    set: (key: string, value: string) => Promise.resolve(void stored.set(key, value)),
    get: (key: string) => {
      store.reads++;
      return Promise.resolve(stored.get(key) ?? null);
    },
    delete: (key: string) => Promise.resolve(void stored.delete(key)),
  };
  return store;
}

describe('EndedSessions (DELETE /mcp, docs/operations.md §9 "Ending a session")', () => {
  const LATER = Date.now() + 3_600_000;

  it('without Redis: nothing ended answers at once (no promise, no lookup); an ended id is ended until its expiry', async () => {
    const ended = new EndedSessions();
    expect(ended.isEnded('s1')).toBe(false);
    await ended.set('s1', true, Date.now() + 1_000, Date.now(), 'sub:alice');
    expect(ended.isEnded('s1')).toBe(true);
    expect(ended.isEnded('s2')).toBe(false);
    // past the sealed id's own expiry the marker is gone (the id no longer opens anyway)
    expect(ended.get('s1', Date.now() + 2_000)).toBeUndefined();
  });

  it("a caller's markers count against its share: ending many sessions pushes out its own oldest, never another caller's", async () => {
    const ended = new EndedSessions();
    await ended.set('victim', true, LATER, Date.now(), 'sub:victim');
    const share = MAX_ENDED_SESSIONS / 10;
    for (let i = 0; i <= share; i++)
      await ended.set(`mallory-${i}`, true, LATER, Date.now(), 'sub:mallory');
    expect(ended.isEnded('victim')).toBe(true);
    expect(ended.isEnded(`mallory-${share}`)).toBe(true);
    expect(ended.isEnded('mallory-0')).toBe(false);
  });

  it('with Redis: another replica reads the marker at most once a second per session; what the bus told is known at once', async () => {
    const store = memoryStore();
    const a = new EndedSessions(store);
    const b = new EndedSessions(store);
    const now = Date.now();
    expect(await b.isEnded('s1')).toBe(false);
    await a.set('s1', true, LATER, now, 'sub:alice');
    // B trusts its "not ended" for SHARED_SESSION_FRESH_MS, then asks Redis again
    expect(b.get('s1', now + 500)).toBeUndefined();
    expect(await b.get('s1', now + 1_500)).toBe(true);
    const reads = store.reads;
    expect(b.get('s1', now + 1_600)).toBe(true);
    expect(store.reads).toBe(reads);
    const c = new EndedSessions(store);
    c.learn('s2', true, LATER);
    expect(c.isEnded('s2')).toBe(true);
  });

  it("delete forgets a session's value here and in Redis", async () => {
    const store = memoryStore();
    const values = new EndedSessions(store);
    await values.set('s1', true, LATER);
    expect(store.stored.size).toBe(1);
    await values.delete('s1');
    expect(store.stored.size).toBe(0);
    expect(values.get('s1')).toBeInstanceOf(Promise);
  });
});
