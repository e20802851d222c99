import type { UpstreamDefinition } from '@app/config';
import type { UpstreamListener } from '@app/execution';
import type { RegistryService } from '@app/registry';
import type { NotificationHub } from './notification-hub.service';
import { ResourceSubscriptions } from './resource-subscriptions.service';

/**
 * A subscription follows its URI's owner (docs/operations.md §10 "Resource subscriptions";
 * docs/security.md "Routing of resource URIs"): rebound after the round that changed the
 * owner, ended at the old owner and made at the new one; only the owner's updates relayed.
 */
type SessionListener = (upstreamId: string, message: Record<string, unknown>) => void;

const def = (id: string): UpstreamDefinition =>
  ({ id, url: 'http://127.0.0.1:1/mcp', forwardHeaders: [] }) as unknown as UpstreamDefinition;

function setup() {
  let listener: SessionListener | undefined;
  let round: (() => void) | undefined;
  const owners = new Map<string, UpstreamDefinition>();
  const written: { sessions: string[]; sourceId: string }[] = [];
  const sent: string[] = [];
  const hub = {
    toSessions: (sessions: ReadonlySet<string>, sourceId: string) => {
      written.push({ sessions: [...sessions].sort(), sourceId });
      return new Set<string>();
    },
  } as unknown as NotificationHub;
  const upstreams = {
    onSessionMessage: (l: SessionListener) => (listener = l),
    onSessionRenewed: () => undefined,
    support: () => undefined,
    subscribe: (upstream: UpstreamDefinition, uri: string) => {
      sent.push(`subscribe ${upstream.id} ${uri}`);
      return Promise.resolve();
    },
    unsubscribe: (upstream: UpstreamDefinition, uri: string) => {
      sent.push(`unsubscribe ${upstream.id} ${uri}`);
      return Promise.resolve();
    },
  } as unknown as UpstreamListener;
  const registry = {
    current: () => ({ extras: { resourceOwner: (uri: string) => owners.get(uri) } }),
    onRoundApplied: (l: () => void) => (round = l),
  } as unknown as RegistryService;
  const subscriptions = new ResourceSubscriptions(hub, upstreams, null, null, null, registry);
  const updated = (upstreamId: string, uri: string): void =>
    listener?.(upstreamId, {
      jsonrpc: '2.0',
      method: 'notifications/resources/updated',
      params: { uri },
    });
  return { subscriptions, owners, updated, written, sent, round: () => round?.() };
}

describe('ResourceSubscriptions when a URI changes owner', () => {
  const later = Date.now() + 3_600_000;

  it('moves the subscriptions: once unsubscribed at the old owner and subscribed at the new', () => {
    const { subscriptions, owners, sent, round } = setup();
    owners.set('r://x', def('a'));
    subscriptions.add('s1', later, def('a'), 'r://x');
    subscriptions.add('s2', later, def('a'), 'r://x');
    round();
    expect(sent).toEqual([]);
    owners.set('r://x', def('b'));
    round();
    round();
    expect(sent).toEqual(['unsubscribe a r://x', 'subscribe b r://x']);
    subscriptions.onApplicationShutdown();
  });

  it("relays only the current owner's updates", () => {
    const { subscriptions, owners, updated, written, round } = setup();
    owners.set('r://x', def('a'));
    subscriptions.add('s1', later, def('a'), 'r://x');
    owners.set('r://x', def('b'));
    // before the round: the catalog already says b, so a's update is not relayed
    updated('a', 'r://x');
    expect(written).toEqual([]);
    round();
    updated('a', 'r://x');
    updated('b', 'r://x');
    expect(written).toEqual([{ sessions: ['s1'], sourceId: 'b' }]);
    subscriptions.onApplicationShutdown();
  });

  it('an unsubscribe ends the subscription wherever it is bound, and says where', () => {
    const { subscriptions, owners, round } = setup();
    owners.set('r://x', def('a'));
    subscriptions.add('s1', later, def('a'), 'r://x');
    owners.set('r://x', def('b'));
    round();
    expect(subscriptions.remove('s1', 'r://x')).toEqual({
      boundTo: def('b'),
      othersRemain: false,
      bridged: false,
    });
    expect(subscriptions.size).toBe(0);
    subscriptions.onApplicationShutdown();
  });

  it('a subscribe of a URI held on its old owner moves it (the handler subscribes the new one)', () => {
    const { subscriptions, sent } = setup();
    subscriptions.add('s1', later, def('a'), 'r://x');
    subscriptions.add('s1', later, def('b'), 'r://x');
    expect({ size: subscriptions.size, sent }).toEqual({
      size: 1,
      sent: ['unsubscribe a r://x'],
    });
    expect(subscriptions.remove('s1', 'r://x').boundTo?.id).toBe('b');
    subscriptions.onApplicationShutdown();
  });

  it('a URI nobody owns keeps its binding', () => {
    const { subscriptions, owners, sent, round } = setup();
    owners.set('r://x', def('a'));
    subscriptions.add('s1', later, def('a'), 'r://x');
    owners.delete('r://x');
    round();
    expect(sent).toEqual([]);
    expect(subscriptions.remove('s1', 'r://x').boundTo?.id).toBe('a');
    subscriptions.onApplicationShutdown();
  });
});
