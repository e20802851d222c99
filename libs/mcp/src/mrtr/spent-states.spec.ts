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
});
