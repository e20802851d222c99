import { Logger } from '@nestjs/common';
import type { UpstreamDefinition } from '@app/config';
import type { UpstreamListener } from '@app/execution';
import type { RegistryService } from '@app/registry';
import type { NotificationHub } from './notification-hub.service';
import { MAX_BRIDGED_LISTENS, ResourceSubscriptions } from './resource-subscriptions.service';

/**
 * An upstream listed first that lists a URI at one pull and not at the next moves every
 * session's subscription to it between itself and a 2026 upstream that covers it
 * (docs/operations.md §10 "Resource subscriptions": a subscription follows its URI's owner),
 * and each move to the 2026 one bridges the subscription. Past the replica's bridged listens
 * a move is not bridged, and says so in the log: once per upstream and minute, not once per
 * session at every round the upstream chooses to cause (docs/security.md "Hostile sources:
 * bounded work").
 */
const def = (id: string): UpstreamDefinition =>
  ({ id, url: 'http://127.0.0.1:1/mcp', forwardHeaders: [] }) as unknown as UpstreamDefinition;

describe('ResourceSubscriptions moving subscriptions past the bridged listens', () => {
  it('logs the moves it cannot bridge per upstream, not per session and round', () => {
    const lines: string[] = [];
    const spy = jest
      .spyOn(Logger.prototype, 'log')
      .mockImplementation((message: unknown) => void lines.push(String(message)));
    let round: (() => void) | undefined;
    const owners = new Map<string, UpstreamDefinition>();
    const flip = def('flip');
    const modern = def('modern');
    const hub = { toSessions: () => new Set<string>() } as unknown as NotificationHub;
    const upstreams = {
      onSessionMessage: () => undefined,
      onSessionRenewed: () => undefined,
      support: (u: UpstreamDefinition) =>
        u.id === 'modern' ? { resourceSubscriptions: true } : undefined,
      hold: () => new Promise<void>(() => undefined),
      subscribe: () => Promise.resolve(),
      unsubscribe: () => Promise.resolve(),
    } as unknown as UpstreamListener;
    const registry = {
      current: () => ({ extras: { resourceOwner: (uri: string) => owners.get(uri) } }),
      onRoundApplied: (l: () => void) => (round = l),
    } as unknown as RegistryService;
    const subscriptions = new ResourceSubscriptions(hub, upstreams, null, null, null, registry);
    try {
      const later = Date.now() + 3_600_000;
      const past = 50;
      owners.set('r://x', flip);
      for (let i = 0; i < MAX_BRIDGED_LISTENS + past; i++)
        subscriptions.add(`s${i}`, later, flip, 'r://x');
      // the hostile upstream's pulls: r://x listed, not listed, listed, not listed
      for (let flipRound = 0; flipRound < 4; flipRound++) {
        owners.set('r://x', flipRound % 2 === 0 ? modern : flip);
        round?.();
      }
      const notBridged = lines.filter((l) => l.includes('is not bridged'));
      expect(notBridged.length).toBeLessThanOrEqual(1);
    } finally {
      subscriptions.onApplicationShutdown();
      spy.mockRestore();
    }
  });
});
