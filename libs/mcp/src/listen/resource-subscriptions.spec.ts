import type { UpstreamListener } from '@app/execution';
import { GatewayError } from '../errors/gateway-error';
import type { NotificationHub } from './notification-hub.service';
import {
  MAX_SUBSCRIPTIONS_PER_SESSION,
  ResourceSubscriptions,
} from './resource-subscriptions.service';

type SessionListener = (upstreamId: string, message: Record<string, unknown>) => void;

function setup(): {
  subscriptions: ResourceSubscriptions;
  updated: (upstreamId: string, uri: unknown) => void;
  written: { sessions: string[]; sourceId: string; message: string }[];
} {
  let listener: SessionListener | undefined;
  const written: { sessions: string[]; sourceId: string; message: string }[] = [];
  const hub = {
    toSessions: (sessions: ReadonlySet<string>, sourceId: string, message: string) => {
      written.push({ sessions: [...sessions].sort(), sourceId, message });
      return sessions.size;
    },
  } as unknown as NotificationHub;
  const upstreams = {
    onSessionMessage: (l: SessionListener) => (listener = l),
  } as unknown as UpstreamListener;
  const subscriptions = new ResourceSubscriptions(hub, upstreams);
  const updated = (upstreamId: string, uri: unknown): void =>
    listener?.(upstreamId, {
      jsonrpc: '2.0',
      method: 'notifications/resources/updated',
      params: { uri },
    });
  return { subscriptions, updated, written };
}

describe('ResourceSubscriptions', () => {
  const later = Date.now() + 3_600_000;

  it('relays an update to the sessions subscribed to that upstream and URI only', () => {
    const { subscriptions, updated, written } = setup();
    subscriptions.add('s1', later, 'up', 'r://a');
    subscriptions.add('s2', later, 'up', 'r://a');
    subscriptions.add('s3', later, 'up', 'r://b');
    subscriptions.add('s4', later, 'other', 'r://a');
    updated('up', 'r://a');
    updated('up', 'r://none');
    updated('up', 42);
    expect(written).toEqual([
      {
        sessions: ['s1', 's2'],
        sourceId: 'up',
        message:
          '{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"r://a"}}',
      },
    ]);
    subscriptions.onApplicationShutdown();
  });

  it('remove says whether another session still subscribes', () => {
    const { subscriptions } = setup();
    subscriptions.add('s1', later, 'up', 'r://a');
    subscriptions.add('s2', later, 'up', 'r://a');
    subscriptions.add('s2', later, 'up', 'r://a'); // twice: one subscription
    expect(subscriptions.size).toBe(2);
    expect(subscriptions.remove('s1', 'up', 'r://a')).toEqual({
      othersRemain: true,
      bridged: false,
    });
    expect(subscriptions.remove('s1', 'up', 'r://a')).toEqual({
      othersRemain: true,
      bridged: false,
    });
    expect(subscriptions.remove('s2', 'up', 'r://a')).toEqual({
      othersRemain: false,
      bridged: false,
    });
    expect(subscriptions.size).toBe(0);
    subscriptions.onApplicationShutdown();
  });

  it('a session holds at most MAX_SUBSCRIPTIONS_PER_SESSION', () => {
    const { subscriptions } = setup();
    for (let i = 0; i < MAX_SUBSCRIPTIONS_PER_SESSION; i++)
      subscriptions.add('s1', later, 'up', `r://${i}`);
    expect(() => subscriptions.add('s1', later, 'up', 'r://one-more')).toThrow(GatewayError);
    expect(() => subscriptions.add('s2', later, 'up', 'r://one-more')).not.toThrow();
    subscriptions.onApplicationShutdown();
  });

  it("an expired session's subscriptions are dropped and get no update", () => {
    const { subscriptions, updated, written } = setup();
    subscriptions.add('old', Date.now() - 1, 'up', 'r://a');
    subscriptions.add('new', later, 'up', 'r://b'); // sweeps the expired one
    updated('up', 'r://a');
    expect(written).toEqual([]);
    expect(subscriptions.size).toBe(1);
    subscriptions.onApplicationShutdown();
  });
});
