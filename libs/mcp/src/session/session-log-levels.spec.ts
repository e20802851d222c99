import { SessionLogLevels } from './session-log-levels';
import { SHARED_SESSION_FRESH_MS, SharedValueNotStoredError } from './session-values';
import type { SharedSessionStore } from './shared-session-store';

/** A store in memory, as Redis keeps keys: the tests drive what every replica shares. */
class MemoryStore implements SharedSessionStore {
  readonly values = new Map<string, string>();
  reads = 0;
  down = false;

  set(key: string, level: string): Promise<void> {
    if (this.down) return Promise.reject(new Error('connection refused'));
    this.values.set(key, level);
    return Promise.resolve();
  }

  get(key: string): Promise<string | null> {
    this.reads++;
    if (this.down) return Promise.reject(new Error('connection refused'));
    return Promise.resolve(this.values.get(key) ?? null);
  }

  delete(key: string): Promise<void> {
    this.values.delete(key);
    return Promise.resolve();
  }
}

describe('SessionLogLevels', () => {
  const now = 1_000_000;

  it('without a shared store: this replica only, answered without a promise, until the session expires', async () => {
    const levels = new SessionLogLevels();
    expect(levels.get('s', now)).toBeUndefined();
    await levels.set('s', 'warning', now + 5_000, now);
    expect(levels.get('s', now + 4_999)).toBe('warning');
    expect(levels.get('s', now + 5_000)).toBeUndefined();
  });

  it('with a shared store: a level set on one replica is read on another, then kept fresh for a second', async () => {
    const store = new MemoryStore();
    const a = new SessionLogLevels(store);
    const b = new SessionLogLevels(store);
    await a.set('s', 'error', now + 60_000, now);
    expect(a.get('s', now)).toBe('error');
    expect(store.reads).toBe(0);
    await expect(b.get('s', now)).resolves.toBe('error');
    expect(b.get('s', now + SHARED_SESSION_FRESH_MS - 1)).toBe('error');
    expect(store.reads).toBe(1);
    // a later change on a: b sees it once its entry is stale
    await a.set('s', 'debug', now + 60_000, now + 10);
    expect(b.get('s', now + 10)).toBe('error');
    await expect(b.get('s', now + SHARED_SESSION_FRESH_MS + 1)).resolves.toBe('debug');
  });

  it('with a shared store: a session that set none is asked about at most once a second', async () => {
    const store = new MemoryStore();
    const levels = new SessionLogLevels(store);
    await expect(levels.get('none', now)).resolves.toBeUndefined();
    expect(levels.get('none', now + 500)).toBeUndefined();
    expect(store.reads).toBe(1);
    await expect(levels.get('none', now + SHARED_SESSION_FRESH_MS + 1)).resolves.toBeUndefined();
    expect(store.reads).toBe(2);
  });

  it('a store that cannot be reached: reads as no level, and set says the level stays on this replica', async () => {
    const store = new MemoryStore();
    store.down = true;
    const levels = new SessionLogLevels(store);
    await expect(levels.get('s', now)).resolves.toBeUndefined();
    await expect(levels.set('s', 'error', now + 60_000, now)).rejects.toBeInstanceOf(
      SharedValueNotStoredError,
    );
    expect(levels.get('s', now)).toBe('error');
    // while the store stays away, this replica keeps what it was told, second after second
    await expect(levels.get('s', now + 5 * SHARED_SESSION_FRESH_MS)).resolves.toBe('error');
    expect(levels.get('s', now + 5 * SHARED_SESSION_FRESH_MS + 1)).toBe('error');
  });

  it('keys the store by a digest of the session id, never the id itself', async () => {
    const store = new MemoryStore();
    await new SessionLogLevels(store).set('sealed.session.token', 'info', now + 60_000, now);
    const [key] = [...store.values.keys()];
    expect(key).not.toContain('sealed');
    expect(key).toMatch(/^log-level:[A-Za-z0-9_-]{43}$/);
  });
});

describe('SessionLogLevels with a slow shared store', () => {
  /** A store whose reads wait until the test lets them answer. */
  class SlowStore implements SharedSessionStore {
    readonly values = new Map<string, string>();
    reads = 0;
    private readonly waiting: (() => void)[] = [];

    set(key: string, level: string): Promise<void> {
      this.values.set(key, level);
      return Promise.resolve();
    }

    get(key: string): Promise<string | null> {
      this.reads++;
      const value = this.values.get(key) ?? null;
      return new Promise((resolve) => this.waiting.push(() => resolve(value)));
    }

    delete(key: string): Promise<void> {
      this.values.delete(key);
      return Promise.resolve();
    }

    answer(): void {
      for (const release of this.waiting.splice(0)) release();
    }
  }

  const now = 2_000_000;

  it('concurrent calls of one session share one read', async () => {
    const store = new SlowStore();
    const levels = new SessionLogLevels(store);
    const reads = Array.from({ length: 20 }, () => levels.get('s', now));
    // every one of them waits on the store: a promise each, one read in all
    expect(reads.every((r) => r instanceof Promise)).toBe(true);
    expect(store.reads).toBe(1);
    store.answer();
    await expect(Promise.all(reads.map((r) => Promise.resolve(r)))).resolves.toEqual(
      Array(20).fill(undefined),
    );
  });

  it('a level set on this replica while a read is in flight is not overwritten by the older answer', async () => {
    const store = new SlowStore();
    const levels = new SessionLogLevels(store);
    const read = levels.get('s', now);
    await levels.set('s', 'critical', now + 60_000, now);
    store.answer();
    await expect(read).resolves.toBe('critical');
    expect(levels.get('s', now + 1)).toBe('critical');
  });
});
