import type { UpstreamListener } from '@app/execution';
import { GatewayError } from '../errors/gateway-error';
import type { NotificationHub } from './notification-hub.service';
import type { GatewayConfig, UpstreamDefinition } from '@app/config';
import {
  FULL_ACCESS,
  type AuthOutcome,
  type CallerAccess,
  type CallerIdentity,
  type ResourceServer,
} from '@app/identity';
import {
  MAX_BRIDGED_LISTENS_PER_CALLER,
  MAX_SUBSCRIPTIONS_PER_CALLER,
  MAX_SUBSCRIPTIONS_PER_SESSION,
  ResourceSubscriptions,
} from './resource-subscriptions.service';
import type { ResourceBusMessage, ResourceUpdateBus } from './resource-update-bus';

type SessionListener = (upstreamId: string, message: Record<string, unknown>) => void;

const def = (id: string): UpstreamDefinition =>
  ({ id, url: 'http://127.0.0.1:1/mcp', forwardHeaders: [] }) as unknown as UpstreamDefinition;

function setup(): {
  subscriptions: ResourceSubscriptions;
  updated: (upstreamId: string, uri: unknown) => void;
  written: { sessions: string[]; sourceId: string; message: string }[];
  /** The resources/unsubscribe the gateway sent upstream on its own: [upstream id, uri]. */
  unsubscribed: [string, string][];
  /** Tells the subscriptions that the gateway's session with this upstream was renewed. */
  renew: (upstreamId: string) => void;
  /** What was subscribed again on a renewed session: [upstream id, uris]. */
  resubscribed: [string, string[]][];
} {
  let listener: SessionListener | undefined;
  let renewed: ((upstreamId: string) => void) | undefined;
  const resubscribed: [string, string[]][] = [];
  const written: { sessions: string[]; sourceId: string; message: string }[] = [];
  const hub = {
    toSessions: (sessions: ReadonlySet<string>, sourceId: string, message: string) => {
      written.push({ sessions: [...sessions].sort(), sourceId, message });
      return new Set<string>();
    },
  } as unknown as NotificationHub;
  const unsubscribed: [string, string][] = [];
  const upstreams = {
    onSessionMessage: (l: SessionListener) => (listener = l),
    onSessionRenewed: (l: (upstreamId: string) => void) => (renewed = l),
    unsubscribe: (upstream: UpstreamDefinition, uri: string) => {
      unsubscribed.push([upstream.id, uri]);
      return Promise.resolve();
    },
    resubscribe: (upstream: UpstreamDefinition, uris: readonly string[]) => {
      resubscribed.push([upstream.id, [...uris]]);
      return Promise.resolve();
    },
  } as unknown as UpstreamListener;
  const subscriptions = new ResourceSubscriptions(hub, upstreams);
  const updated = (upstreamId: string, uri: unknown): void =>
    listener?.(upstreamId, {
      jsonrpc: '2.0',
      method: 'notifications/resources/updated',
      params: { uri },
    });
  return {
    subscriptions,
    updated,
    written,
    unsubscribed,
    renew: (upstreamId) => renewed?.(upstreamId),
    resubscribed,
  };
}

describe('ResourceSubscriptions', () => {
  const later = Date.now() + 3_600_000;

  it("subscribes a renewed upstream session again to each URI still held for it here, once, and nothing of another upstream's or of an ended subscription", () => {
    const { subscriptions, renew, resubscribed } = setup();
    subscriptions.add('s1', later, def('up'), 'r://a');
    subscriptions.add('s2', later, def('up'), 'r://a');
    subscriptions.add('s2', later, def('up'), 'r://b');
    subscriptions.add('s3', later, def('other'), 'r://c');
    subscriptions.add('s4', Date.now() - 1, def('up'), 'r://ended');
    renew('up');
    expect(resubscribed).toEqual([['up', ['r://a', 'r://b']]]);
    renew('idle');
    expect(resubscribed).toHaveLength(1);
    subscriptions.onApplicationShutdown();
  });

  it('relays an update to the sessions subscribed to that upstream and URI only', () => {
    const { subscriptions, updated, written } = setup();
    subscriptions.add('s1', later, def('up'), 'r://a');
    subscriptions.add('s2', later, def('up'), 'r://a');
    subscriptions.add('s3', later, def('up'), 'r://b');
    subscriptions.add('s4', later, def('other'), 'r://a');
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
    subscriptions.add('s1', later, def('up'), 'r://a');
    subscriptions.add('s2', later, def('up'), 'r://a');
    subscriptions.add('s2', later, def('up'), 'r://a'); // twice: one subscription
    expect(subscriptions.size).toBe(2);
    expect(subscriptions.remove('s1', 'r://a')).toEqual({
      boundTo: def('up'),
      othersRemain: true,
      bridged: false,
    });
    expect(subscriptions.remove('s1', 'r://a')).toEqual({
      othersRemain: true,
      bridged: false,
    });
    expect(subscriptions.remove('s2', 'r://a')).toEqual({
      boundTo: def('up'),
      othersRemain: false,
      bridged: false,
    });
    expect(subscriptions.size).toBe(0);
    subscriptions.onApplicationShutdown();
  });

  it('a session holds at most MAX_SUBSCRIPTIONS_PER_SESSION', () => {
    const { subscriptions } = setup();
    for (let i = 0; i < MAX_SUBSCRIPTIONS_PER_SESSION; i++)
      subscriptions.add('s1', later, def('up'), `r://${i}`);
    expect(() => subscriptions.add('s1', later, def('up'), 'r://one-more')).toThrow(GatewayError);
    expect(() => subscriptions.add('s2', later, def('up'), 'r://one-more')).not.toThrow();
    subscriptions.onApplicationShutdown();
  });

  const caller = (subject: string, expiresInSeconds = 3600): CallerIdentity =>
    ({ subject, expiresAt: Math.floor(Date.now() / 1000) + expiresInSeconds }) as CallerIdentity;

  it('with auth a caller holds at most MAX_SUBSCRIPTIONS_PER_CALLER over all its sessions, and the others are not locked out', () => {
    const { subscriptions } = setup();
    const alice = caller('alice');
    for (let i = 0; i < MAX_SUBSCRIPTIONS_PER_CALLER; i++)
      subscriptions.add(`a${Math.floor(i / 100)}`, later, def('up'), `r://${i % 100}`, alice);
    expect(() => subscriptions.add('a-new', later, def('up'), 'r://x', caller('alice'))).toThrow(
      /a caller may hold 1000/,
    );
    expect(() => subscriptions.add('b1', later, def('up'), 'r://x', caller('bob'))).not.toThrow();
    // one given back makes room again
    subscriptions.remove('a0', 'r://0');
    expect(() =>
      subscriptions.add('a-new', later, def('up'), 'r://x', caller('alice')),
    ).not.toThrow();
    subscriptions.onApplicationShutdown();
  });

  it('without auth only the totals apply', () => {
    const { subscriptions } = setup();
    for (let i = 0; i < MAX_SUBSCRIPTIONS_PER_CALLER + 1; i++)
      subscriptions.add(`s${Math.floor(i / 100)}`, later, def('up'), `r://${i % 100}`);
    expect(subscriptions.size).toBe(MAX_SUBSCRIPTIONS_PER_CALLER + 1);
    subscriptions.onApplicationShutdown();
  });

  it("a subscription ends with the subscribing token's expiry, sooner than the session's", () => {
    const { subscriptions, updated, written } = setup();
    subscriptions.add('s1', later, def('up'), 'r://a', caller('alice', -1));
    subscriptions.add('s2', later, def('up'), 'r://b', caller('bob')); // sweeps the expired one
    updated('up', 'r://a');
    expect(written).toEqual([]);
    expect(subscriptions.size).toBe(1);
    subscriptions.onApplicationShutdown();
  });

  it("an update after the subscribing token's expiry reaches no one, before any sweep, and the upstream is told to unsubscribe", () => {
    jest.useFakeTimers({ now: Date.now() });
    try {
      const { subscriptions, updated, written, unsubscribed } = setup();
      subscriptions.add('s1', later, def('up'), 'r://a', caller('alice', 2));
      jest.setSystemTime(Date.now() + 3000);
      updated('up', 'r://a');
      expect(written).toEqual([]);
      expect(subscriptions.size).toBe(0);
      expect(unsubscribed).toEqual([['up', 'r://a']]);
      subscriptions.onApplicationShutdown();
    } finally {
      jest.useRealTimers();
    }
  });

  it('the upstream is told to unsubscribe when the last subscription here ends without a client unsubscribe, not before', () => {
    const { subscriptions, unsubscribed } = setup();
    subscriptions.add('kept', later, def('up'), 'r://shared');
    subscriptions.add('gone1', Date.now() - 1, def('up'), 'r://shared');
    subscriptions.add('gone2', Date.now() - 1, def('up'), 'r://alone');
    subscriptions.add('new', later, def('other'), 'r://x'); // sweeps the expired ones
    // r://shared is still held by `kept`; r://alone had no one else
    expect(unsubscribed).toEqual([['up', 'r://alone']]);
    subscriptions.onApplicationShutdown();
  });

  it("a client's own unsubscribe sends nothing from here: its handler forwards it when no one else holds the URI", () => {
    const { subscriptions, unsubscribed } = setup();
    subscriptions.add('s1', later, def('up'), 'r://a');
    expect(subscriptions.remove('s1', 'r://a')).toEqual({
      boundTo: def('up'),
      othersRemain: false,
      bridged: false,
    });
    expect(unsubscribed).toEqual([]);
    subscriptions.onApplicationShutdown();
  });

  it("an unsubscribe another replica received ends the last subscription here and tells this replica's upstream session", () => {
    let fromBus: ((message: ResourceBusMessage) => void) | undefined;
    const bus: ResourceUpdateBus = {
      publish: () => undefined,
      onMessage: (handler) => (fromBus = handler),
    };
    const unsubscribed: [string, string][] = [];
    const upstreams = {
      onSessionMessage: () => undefined,
      onSessionRenewed: () => undefined,
      unsubscribe: (upstream: UpstreamDefinition, uri: string) => {
        unsubscribed.push([upstream.id, uri]);
        return Promise.resolve();
      },
    } as unknown as UpstreamListener;
    const hub = { toSessions: () => new Set<string>() } as unknown as NotificationHub;
    const subscriptions = new ResourceSubscriptions(hub, upstreams, bus);
    subscriptions.add('s1', later, def('up'), 'r://a');
    subscriptions.add('s2', later, def('up'), 'r://a');
    fromBus?.({ op: 'forget', session: 's1', upstreamId: 'up', uri: 'r://a' });
    expect(unsubscribed).toEqual([]);
    fromBus?.({ op: 'forget', session: 's2', upstreamId: 'up', uri: 'r://a' });
    expect(unsubscribed).toEqual([['up', 'r://a']]);
    expect(subscriptions.size).toBe(0);
    subscriptions.onApplicationShutdown();
  });

  it("an expired session's subscriptions are dropped and get no update", () => {
    const { subscriptions, updated, written } = setup();
    subscriptions.add('old', Date.now() - 1, def('up'), 'r://a');
    subscriptions.add('new', later, def('up'), 'r://b'); // sweeps the expired one
    updated('up', 'r://a');
    expect(written).toEqual([]);
    expect(subscriptions.size).toBe(1);
    subscriptions.onApplicationShutdown();
  });
});

describe('ResourceSubscriptions: a bridged listen carries a caller credential only while it is valid', () => {
  interface Held {
    readonly headers: Record<string, unknown>;
    readonly uris: unknown;
    readonly signal: AbortSignal;
  }

  function bridging(
    recheck?: (authorization: unknown) => Promise<AuthOutcome>,
    access: CallerAccess = FULL_ACCESS,
  ): { subscriptions: ResourceSubscriptions; held: Held[] } {
    const held: Held[] = [];
    const hub = { toSessions: () => new Set<string>() } as unknown as NotificationHub;
    const upstreams = {
      onSessionMessage: () => undefined,
      onSessionRenewed: () => undefined,
      hold: (
        _upstream: unknown,
        filter: { resourceSubscriptions: unknown },
        options: { headers: Record<string, unknown>; signal: AbortSignal },
      ) => {
        held.push({
          headers: options.headers,
          uris: filter.resourceSubscriptions,
          signal: options.signal,
        });
        return new Promise(() => undefined);
      },
    } as unknown as UpstreamListener;
    const config = { mcp: { listen: { recheckSeconds: 1 } } } as unknown as GatewayConfig;
    const server =
      recheck === undefined
        ? null
        : ({
            enabled: true,
            authenticate: recheck,
            policy: { accessFor: () => access },
          } as unknown as ResourceServer);
    return {
      subscriptions: new ResourceSubscriptions(hub, upstreams, null, config, server),
      held,
    };
  }

  const upstream = { id: 'u26', url: 'http://127.0.0.1:1/mcp' } as never;
  const who = (token: string, expiresInSeconds: number) => ({
    headers: { authorization: `Bearer ${token}` },
    caller: {
      subject: 's',
      expiresAt: Math.floor(Date.now() / 1000) + expiresInSeconds,
    } as never,
  });

  afterEach(() => jest.useRealTimers());

  it('a caller holds at most MAX_BRIDGED_LISTENS_PER_CALLER bridged listens; another caller is not locked out', () => {
    const { subscriptions } = bridging();
    for (let i = 0; i < MAX_BRIDGED_LISTENS_PER_CALLER; i++)
      subscriptions.bridge(`s${i}`, upstream, 'r://a', who('t', 60));
    expect(() => subscriptions.bridge('s-new', upstream, 'r://a', who('t', 60))).toThrow(
      /a caller may hold 100/,
    );
    const other = { ...who('o', 60), caller: { subject: 'other' } as never };
    expect(() => subscriptions.bridge('s-other', upstream, 'r://a', other)).not.toThrow();
    expect(subscriptions.unbridge('s0', 'u26', 'r://a')).toBe(true);
    expect(() => subscriptions.bridge('s-new', upstream, 'r://a', who('t', 60))).not.toThrow();
    subscriptions.onApplicationShutdown();
  });

  it('ends the upstream listen when the token expires, and a subscribe with a fresh token opens it again with that token', () => {
    jest.useFakeTimers();
    const { subscriptions, held } = bridging();
    subscriptions.bridge('s1', upstream, 'r://a', who('first', 60));
    expect(held).toHaveLength(1);
    expect(held[0]?.signal.aborted).toBe(false);
    jest.advanceTimersByTime(61_000);
    expect(held[0]?.signal.aborted).toBe(true);
    expect(held).toHaveLength(1);
    // the same URI again, with a fresh token: the listen is open again, with it
    subscriptions.bridge('s1', upstream, 'r://a', who('second', 60));
    expect(held).toHaveLength(2);
    expect(held[1]?.headers).toEqual({ authorization: 'Bearer second' });
    expect(held[1]?.signal.aborted).toBe(false);
    subscriptions.onApplicationShutdown();
  });

  it('a recheck that refuses the token (revoked) ends the listen; one the authorization server cannot answer (503) does not; a fresh subscribe opens it again', async () => {
    jest.useFakeTimers();
    const answers: AuthOutcome[] = [];
    const authenticate = jest.fn(() => Promise.resolve(answers.shift()!));
    const { subscriptions, held } = bridging(authenticate);
    const bob = who('bob-token', 3600);
    const authenticated = (subject: string): AuthOutcome =>
      ({ kind: 'authenticated', caller: { subject } }) as AuthOutcome;
    answers.push({ kind: 'refused', status: 503 } as AuthOutcome, authenticated('s'));
    answers.push({ kind: 'refused', status: 401 } as AuthOutcome);
    subscriptions.bridge('s1', upstream, 'r://a', bob);
    await jest.advanceTimersByTimeAsync(1_000);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(held[0]?.signal.aborted).toBe(false);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(authenticate).toHaveBeenCalledTimes(3);
    expect(authenticate).toHaveBeenLastCalledWith('Bearer bob-token');
    expect(held[0]?.signal.aborted).toBe(true);
    // no more rechecks of an ended listen
    await jest.advanceTimersByTimeAsync(5_000);
    expect(authenticate).toHaveBeenCalledTimes(3);
    answers.push(authenticated('s'));
    subscriptions.bridge('s1', upstream, 'r://a', who('fresh', 3600));
    expect(held).toHaveLength(2);
    expect(held[1]?.signal.aborted).toBe(false);
    subscriptions.onApplicationShutdown();
  });

  it('a recheck that finds another caller, or a grant without the upstream, ends the listen', async () => {
    jest.useFakeTimers();
    for (const [outcome, access] of [
      [{ kind: 'authenticated', caller: { subject: 'mallory' } }, FULL_ACCESS],
      [
        { kind: 'authenticated', caller: { subject: 's' } },
        { all: false, sources: new Set(['other']) },
      ],
    ] as [AuthOutcome, CallerAccess][]) {
      const { subscriptions, held } = bridging(() => Promise.resolve(outcome), access);
      subscriptions.bridge('s1', upstream, 'r://a', who('t', 3600));
      await jest.advanceTimersByTimeAsync(1_000);
      expect(held[0]?.signal.aborted).toBe(true);
      subscriptions.onApplicationShutdown();
    }
  });

  it('never opens a listen with a token that has already expired', () => {
    const { subscriptions, held } = bridging();
    subscriptions.bridge('s1', upstream, 'r://a', who('stale', -5));
    expect(held).toHaveLength(0);
    subscriptions.onApplicationShutdown();
  });

  it('a new URI re-opens the listen with the latest subscribing credential', () => {
    const { subscriptions, held } = bridging();
    subscriptions.bridge('s1', upstream, 'r://a', who('first', 60));
    subscriptions.bridge('s1', upstream, 'r://b', who('renewed', 600));
    expect(held).toHaveLength(2);
    expect(held[0]?.signal.aborted).toBe(true);
    expect(held[1]).toMatchObject({
      headers: { authorization: 'Bearer renewed' },
      uris: ['r://a', 'r://b'],
    });
    subscriptions.onApplicationShutdown();
  });
});

describe('ResourceSubscriptions: renewing before the token expires', () => {
  afterEach(() => jest.useRealTimers());

  it('a subscribe with a fresh token for a URI already bridged re-opens the listen with it, and it outlives the old expiry', () => {
    jest.useFakeTimers();
    const held: { headers: Record<string, unknown>; signal: AbortSignal }[] = [];
    const hub = { toSessions: () => new Set<string>() } as unknown as NotificationHub;
    const upstreams = {
      onSessionMessage: () => undefined,
      onSessionRenewed: () => undefined,
      hold: (
        _u: unknown,
        _f: unknown,
        o: { headers: Record<string, unknown>; signal: AbortSignal },
      ) => {
        held.push({ headers: o.headers, signal: o.signal });
        return new Promise(() => undefined);
      },
    } as unknown as UpstreamListener;
    const subscriptions = new ResourceSubscriptions(hub, upstreams);
    const upstream = { id: 'u26', url: 'http://127.0.0.1:1/mcp' } as never;
    const who = (token: string, seconds: number) => ({
      headers: { authorization: `Bearer ${token}` },
      caller: { subject: 's', expiresAt: Math.floor(Date.now() / 1000) + seconds } as never,
    });
    subscriptions.bridge('s1', upstream, 'r://a', who('old', 60));
    jest.advanceTimersByTime(30_000);
    subscriptions.bridge('s1', upstream, 'r://a', who('new', 3600));
    expect(held).toHaveLength(2);
    expect(held[1]?.headers).toEqual({ authorization: 'Bearer new' });
    jest.advanceTimersByTime(31_000 + 1_000);
    expect(held[1]?.signal.aborted).toBe(false);
    subscriptions.onApplicationShutdown();
  });
});

describe('ResourceSubscriptions with a bus between replicas', () => {
  type Bus = import('./resource-update-bus').ResourceUpdateBus;
  type Message = import('./resource-update-bus').ResourceBusMessage;

  function replica(local: ReadonlySet<string> = new Set()): {
    subscriptions: ResourceSubscriptions;
    published: Message[];
    receive: (m: Message) => void;
    written: { sessions: string[]; sourceId: string }[];
    updated: (upstreamId: string, uri: string) => void;
  } {
    const published: Message[] = [];
    let handler: ((m: Message) => void) | undefined;
    const bus: Bus = { publish: (m) => published.push(m), onMessage: (h) => (handler = h) };
    const written: { sessions: string[]; sourceId: string }[] = [];
    const hub = {
      toSessions: (sessions: ReadonlySet<string>, sourceId: string) => {
        written.push({ sessions: [...sessions], sourceId });
        return new Set([...sessions].filter((s) => local.has(s)));
      },
    } as unknown as NotificationHub;
    let listener: ((upstreamId: string, message: Record<string, unknown>) => void) | undefined;
    const upstreams = {
      onSessionMessage: (l: typeof listener) => (listener = l),
      onSessionRenewed: () => undefined,
      unsubscribe: () => Promise.resolve(),
    } as unknown as UpstreamListener;
    const subscriptions = new ResourceSubscriptions(hub, upstreams, bus);
    return {
      subscriptions,
      published,
      receive: (m) => handler?.(m),
      written,
      updated: (upstreamId, uri) =>
        listener?.(upstreamId, {
          jsonrpc: '2.0',
          method: 'notifications/resources/updated',
          params: { uri },
        }),
    };
  }

  const later = Date.now() + 3_600_000;

  it('an update is written here and shared; one shared by another replica is written here only', () => {
    const a = replica();
    a.subscriptions.add('s1', later, def('up'), 'r://a');
    a.updated('up', 'r://a');
    expect(a.written).toEqual([{ sessions: ['s1'], sourceId: 'up' }]);
    expect(a.published).toEqual([
      {
        op: 'deliver',
        sessions: ['s1'],
        sourceId: 'up',
        message:
          '{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"r://a"}}',
      },
    ]);
    const b = replica();
    b.receive(a.published[0] as Message);
    expect(b.written).toEqual([{ sessions: ['s1'], sourceId: 'up' }]);
    expect(b.published).toEqual([]);
    a.subscriptions.onApplicationShutdown();
    b.subscriptions.onApplicationShutdown();
  });

  it('sessions whose GET stream is on this replica are not shared: the others are, and with none elsewhere nothing is published', () => {
    const a = replica(new Set(['s1']));
    a.subscriptions.add('s1', later, def('up'), 'r://a');
    a.subscriptions.add('s2', later, def('up'), 'r://a');
    a.updated('up', 'r://a');
    expect(a.published).toEqual([expect.objectContaining({ op: 'deliver', sessions: ['s2'] })]);
    const b = replica(new Set(['s1', 's2']));
    b.subscriptions.add('s1', later, def('up'), 'r://b');
    b.subscriptions.add('s2', later, def('up'), 'r://b');
    b.updated('up', 'r://b');
    expect(b.written).toHaveLength(1);
    expect(b.published).toEqual([]);
    a.subscriptions.onApplicationShutdown();
    b.subscriptions.onApplicationShutdown();
  });

  it('an unsubscribe is shared, and one from another replica ends the relay here', () => {
    const a = replica();
    const b = replica();
    a.subscriptions.add('s1', later, def('up'), 'r://a');
    b.subscriptions.remove('s1', 'r://a');
    // b held none: the forget names the session and the URI, whatever upstream a has it on
    expect(b.published).toEqual([{ op: 'forget', session: 's1', upstreamId: '', uri: 'r://a' }]);
    a.receive(b.published[0] as Message);
    expect(a.subscriptions.size).toBe(0);
    a.updated('up', 'r://a');
    expect(a.written).toEqual([]);
    a.subscriptions.onApplicationShutdown();
    b.subscriptions.onApplicationShutdown();
  });
});
