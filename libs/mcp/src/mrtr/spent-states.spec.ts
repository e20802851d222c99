import type { InputHandoff } from './input-handoff';
import { SpentStates } from './spent-states';

/**
 * InputHandoff without Redis (undefined), or with a Redis that already took some keys; what is
 * written back lands in `restored`, and `renew()` says Redis may have lost what was spent.
 */
function handoff(
  takenElsewhere: ReadonlySet<string> = new Set(),
  shared = false,
  restored: [string, number][] = [],
): InputHandoff & { renew(): void } {
  let renewed: () => void = () => undefined;
  return {
    shared,
    takeOnce: (key: string) => Promise.resolve(shared ? !takenElsewhere.has(key) : undefined),
    onStoreRenewed: (listener: () => void) => (renewed = listener),
    restoreSpent: (entries: [string, number][]) => {
      restored.push(...entries);
      return Promise.resolve();
    },
    renew: () => renewed(),
  } as unknown as InputHandoff & { renew(): void };
}

describe('SpentStates (one-time requestState envelopes)', () => {
  const later = () => Date.now() + 60_000;

  it('spends a nonce once on this replica', async () => {
    const spent = new SpentStates(handoff());
    try {
      expect(await spent.spend('n1', later())).toBe(true);
      expect(await spent.spend('n1', later())).toBe(false);
      expect(await spent.spend('n2', later())).toBe(true);
    } finally {
      spent.onModuleDestroy();
    }
  });

  it('two racing retries of one envelope: only the first wins', async () => {
    const spent = new SpentStates(handoff());
    try {
      const both = await Promise.all([spent.spend('n', later()), spent.spend('n', later())]);
      expect(both.sort()).toEqual([false, true]);
    } finally {
      spent.onModuleDestroy();
    }
  });

  it('a nonce another replica spent (Redis said taken) is refused here too', async () => {
    const spent = new SpentStates(handoff(new Set(['theirs']), true));
    try {
      expect(await spent.spend('theirs', later())).toBe(false);
      expect(await spent.spend('mine', later())).toBe(true);
    } finally {
      spent.onModuleDestroy();
    }
  });

  it('past its memory cap it forgets the oldest and refuses, as spent, every envelope expiring no later (fail closed)', async () => {
    class SmallSpentStates extends SpentStates {
      protected override readonly maxRemembered = 3;
    }
    const spent = new SmallSpentStates(handoff());
    const t0 = Date.now() + 60_000;
    try {
      for (let i = 1; i <= 3; i++) expect(await spent.spend(`n${i}`, t0 + i)).toBe(true);
      // the fourth pushes n1 (expiring t0+1) out: n1 must not become spendable again
      expect(await spent.spend('n4', t0 + 4)).toBe(true);
      expect(await spent.spend('n1', t0 + 1)).toBe(false);
      // an unseen envelope expiring no later than the forgotten one is refused too
      expect(await spent.spend('fresh-early', t0)).toBe(false);
      // one expiring later is not
      expect(await spent.spend('fresh-late', t0 + 10)).toBe(true);
      expect(await spent.spend('n4', t0 + 4)).toBe(false);
    } finally {
      spent.onModuleDestroy();
    }
  });

  it('past its memory cap with Redis, Redis decides for what it forgot: a spent one is refused, an unseen one spends', async () => {
    class SmallSpentStates extends SpentStates {
      protected override readonly maxRemembered = 3;
    }
    // Redis holds n1 as spent (this replica spent it, then forgot it)
    const spent = new SmallSpentStates(handoff(new Set(['n1']), true));
    const t0 = Date.now() + 60_000;
    try {
      for (let i = 2; i <= 4; i++) expect(await spent.spend(`n${i}`, t0 + i)).toBe(true);
      expect(await spent.spend('n5', t0 + 5)).toBe(true);
      // n2 forgotten here; n1, which Redis holds as spent, is refused by Redis
      expect(await spent.spend('n1', t0 + 1)).toBe(false);
      // another caller's envelope expiring before what was forgotten is not refused for it
      expect(await spent.spend('fresh-early', t0)).toBe(true);
    } finally {
      spent.onModuleDestroy();
    }
  });

  it('writes back what it still remembers (not the expired, not the refunded) when Redis may have lost it', async () => {
    const restored: [string, number][] = [];
    const bus = handoff(new Set(), true, restored);
    const spent = new SpentStates(bus);
    try {
      expect(await spent.spend('kept', later())).toBe(true);
      expect(await spent.spend('refunded', later())).toBe(true);
      (bus as unknown as { giveBack: () => Promise<void> }).giveBack = () => Promise.resolve();
      await spent.refund('refunded');
      expect(await spent.spend('expiring', Date.now() + 50)).toBe(true);
      await new Promise((r) => setTimeout(r, 80));
      bus.renew();
      await new Promise((r) => setImmediate(r));
      expect(restored.map(([nonce]) => nonce)).toEqual(['kept']);
      expect(restored[0]![1]).toBeGreaterThan(50_000);
      expect(restored[0]![1]).toBeLessThanOrEqual(60_000);
    } finally {
      spent.onModuleDestroy();
    }
  });

  it('with callers, one past its share (a tenth) makes only its own envelopes fail closed', async () => {
    class SmallSpentStates extends SpentStates {
      protected override readonly maxRemembered = 30;
    }
    const spent = new SmallSpentStates(handoff());
    const t0 = Date.now() + 60_000;
    try {
      // bob holds an envelope issued first (expiring first), not yet retried
      expect(await spent.spend('bob-1', t0, 'sub:bob')).toBe(true);
      for (let i = 1; i <= 50; i++)
        expect(await spent.spend(`a${i}`, t0 + i, 'sub:alice')).toBe(true);
      // alice's share is 3: her oldest are forgotten, and her envelopes expiring no later refused
      expect(await spent.spend('a1', t0 + 1, 'sub:alice')).toBe(false);
      expect(await spent.spend('alice-unseen', t0 + 2, 'sub:alice')).toBe(false);
      // bob's are his: his first retry of an unseen envelope expiring as early still spends
      expect(await spent.spend('bob-2', t0, 'sub:bob')).toBe(true);
      expect(await spent.spend('bob-1', t0, 'sub:bob')).toBe(false);
    } finally {
      spent.onModuleDestroy();
    }
  });

  it('with callers, past the total the caller that holds the most forgets first', async () => {
    class SmallSpentStates extends SpentStates {
      protected override readonly maxRemembered = 20;
    }
    const spent = new SmallSpentStates(handoff());
    const t0 = Date.now() + 60_000;
    try {
      // ten callers at their share of 2 each: 20 remembered
      for (let c = 0; c < 10; c++)
        for (let i = 0; i < 2; i++)
          expect(await spent.spend(`c${c}-${i}`, t0 + c * 10 + i, `sub:c${c}`)).toBe(true);
      // an eleventh caller's first nonce passes the total: one of the heaviest forgets its oldest
      expect(await spent.spend('new-0', t0 + 500, 'sub:new')).toBe(true);
      // the new caller keeps what it spent
      expect(await spent.spend('new-0', t0 + 500, 'sub:new')).toBe(false);
      // c0 (the first of the heaviest) forgot its oldest: refused as spent, fail closed
      expect(await spent.spend('c0-0', t0, 'sub:c0')).toBe(false);
      // the others kept theirs
      expect(await spent.spend('c5-0', t0 + 50, 'sub:c5')).toBe(false);
      expect(await spent.spend('c5-unseen', t0 + 55, 'sub:c5')).toBe(true);
    } finally {
      spent.onModuleDestroy();
    }
  });
});
