import type { UpstreamDefinition } from '@app/config';
import type { UpstreamListener } from '@app/execution';
import type { CallerIdentity } from '@app/identity';
import type { RegistryService } from '@app/registry';
import type { NotificationHub } from './notification-hub.service';
import { ResourceSubscriptions } from './resource-subscriptions.service';

/**
 * Each 2025 subscription ends with its own subscribing token (docs/security.md "Side paths
 * bound to the caller"), also when it is bridged to a 2026 upstream's `subscriptions/listen`:
 * the session's one listen there carries the latest subscribing credential for all its URIs,
 * so what it delivers is checked against each subscription's end, and the listen is narrowed
 * at that end rather than at the once-a-minute sweep.
 */
interface Held {
  readonly upstream: string;
  readonly uris: readonly string[];
  readonly authorization: unknown;
  readonly headers: Record<string, unknown>;
  readonly signal: AbortSignal;
  readonly notify: (uri: string) => void;
}

const def = (id: string): UpstreamDefinition =>
  ({ id, url: `http://127.0.0.1:1/${id}`, forwardHeaders: [] }) as unknown as UpstreamDefinition;

function setup() {
  let round: (() => void) | undefined;
  let sessionListener: ((upstreamId: string, message: Record<string, unknown>) => void) | undefined;
  const owners = new Map<string, UpstreamDefinition>();
  const held: Held[] = [];
  const written: { sessions: string[]; message: string }[] = [];
  const sent: string[] = [];
  const hub = {
    toSessions: (sessions: ReadonlySet<string>, _sourceId: string, message: string) => {
      written.push({ sessions: [...sessions], message });
      return new Set<string>(sessions);
    },
  } as unknown as NotificationHub;
  const upstreams = {
    onSessionMessage: (l: typeof sessionListener) => (sessionListener = l),
    onSessionRenewed: () => undefined,
    support: (upstream: UpstreamDefinition) =>
      upstream.id.startsWith('u26') ? { resourceSubscriptions: true } : undefined,
    subscribe: (upstream: UpstreamDefinition, uri: string) => {
      sent.push(`subscribe ${upstream.id} ${uri}`);
      return Promise.resolve();
    },
    unsubscribe: (upstream: UpstreamDefinition, uri: string) => {
      sent.push(`unsubscribe ${upstream.id} ${uri}`);
      return Promise.resolve();
    },
    hold: (
      upstream: UpstreamDefinition,
      filter: { resourceSubscriptions: string[] },
      context: {
        headers: Record<string, unknown>;
        signal: AbortSignal;
        onNotification: (method: string, params: Record<string, unknown>) => void;
      },
    ) => {
      held.push({
        upstream: upstream.id,
        uris: filter.resourceSubscriptions,
        authorization: context.headers.authorization,
        headers: context.headers,
        signal: context.signal,
        notify: (uri) => context.onNotification('notifications/resources/updated', { uri }),
      });
      return new Promise(() => undefined);
    },
  } as unknown as UpstreamListener;
  const registry = {
    current: () => ({ extras: { resourceOwner: (uri: string) => owners.get(uri) } }),
    onRoundApplied: (l: () => void) => (round = l),
  } as unknown as RegistryService;
  const subscriptions = new ResourceSubscriptions(hub, upstreams, null, null, null, registry);
  const updatedOnSession = (upstreamId: string, uri: string): void =>
    sessionListener?.(upstreamId, {
      jsonrpc: '2.0',
      method: 'notifications/resources/updated',
      params: { uri },
    });
  return {
    subscriptions,
    owners,
    held,
    written,
    sent,
    updatedOnSession,
    round: () => round?.(),
  };
}

const sessionEnd = () => Date.now() + 3_600_000;

function who(token: string, seconds: number) {
  const caller = {
    subject: 'alice',
    expiresAt: Math.floor(Date.now() / 1000) + seconds,
  } as CallerIdentity;
  return { headers: { authorization: `Bearer ${token}` }, caller };
}

/** A subscribe of `uri` bridged to `upstream`, as ResourcesSubscribeHandler does it. */
function subscribe(
  subscriptions: ResourceSubscriptions,
  upstream: UpstreamDefinition,
  uri: string,
  by: ReturnType<typeof who>,
): void {
  subscriptions.add('s1', sessionEnd(), upstream, uri, by.caller, by.headers);
  subscriptions.bridge('s1', upstream, uri, by);
}

const updates = (written: { message: string }[]): string[] =>
  written.map((w) => (JSON.parse(w.message) as { params: { uri: string } }).params.uri);

describe('ResourceSubscriptions: each bridged subscription ends with its own token', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_700_000_000_000 }));
  afterEach(() => jest.useRealTimers());

  it("an update of a URI whose token expired is not delivered, though the listen goes on with another URI's fresher token", () => {
    const { subscriptions, owners, held, written } = setup();
    const u26 = def('u26');
    owners.set('r://x', u26).set('r://y', u26);
    subscribe(subscriptions, u26, 'r://x', who('short', 5));
    subscribe(subscriptions, u26, 'r://y', who('long', 600));
    const listen = held.at(-1)!;
    expect(listen).toMatchObject({ uris: ['r://x', 'r://y'], authorization: 'Bearer long' });
    listen.notify('r://x');
    expect(updates(written)).toEqual(['r://x']);
    // past x's token, before any timer ran: the open listen still asks for x
    jest.setSystemTime(Date.now() + 5_001);
    listen.notify('r://x');
    listen.notify('r://y');
    expect(updates(written)).toEqual(['r://x', 'r://y']);
    subscriptions.onApplicationShutdown();
  });

  it("at a subscription's end the listen is re-opened without its URI, and ended with the last one", () => {
    const { subscriptions, owners, held, sent } = setup();
    const u26 = def('u26');
    owners.set('r://x', u26).set('r://y', u26);
    subscribe(subscriptions, u26, 'r://x', who('short', 5));
    subscribe(subscriptions, u26, 'r://y', who('mid', 20));
    expect(held).toHaveLength(2);
    jest.advanceTimersByTime(5_000);
    expect(held[1]?.signal.aborted).toBe(true);
    expect(held[2]).toMatchObject({ uris: ['r://y'], authorization: 'Bearer mid' });
    expect(subscriptions.size).toBe(1);
    jest.advanceTimersByTime(15_000);
    expect(held[2]?.signal.aborted).toBe(true);
    expect(held).toHaveLength(3);
    expect(subscriptions.size).toBe(0);
    expect(subscriptions.bridgedListens).toBe(0);
    // a 2026 upstream has no resources/unsubscribe: nothing is sent on the gateway's session
    expect(sent).toEqual([]);
  });

  it("a later subscribe with a shorter token does not cut an older one short: the listen keeps the longest-lived subscription's credential", () => {
    const { subscriptions, owners, held, written } = setup();
    const u26 = def('u26');
    owners.set('r://x', u26).set('r://y', u26);
    subscribe(subscriptions, u26, 'r://x', who('long', 600));
    subscribe(subscriptions, u26, 'r://y', who('short', 5));
    // never opened with the token that expires first
    expect(held.map((h) => h.authorization)).toEqual(['Bearer long', 'Bearer long']);
    expect(held.at(-1)?.uris).toEqual(['r://x', 'r://y']);
    jest.advanceTimersByTime(5_000);
    // at y's end: re-opened for x alone, with x's own token
    expect(held[1]?.signal.aborted).toBe(true);
    expect(held).toHaveLength(3);
    expect(held[2]).toMatchObject({ uris: ['r://x'], authorization: 'Bearer long' });
    expect(held[2]?.signal.aborted).toBe(false);
    held[2]?.notify('r://x');
    expect(updates(written)).toEqual(['r://x']);
    // it lasts to x's token's expiry, then ends with the last subscription
    jest.advanceTimersByTime(594_000);
    expect(held[2]?.signal.aborted).toBe(false);
    jest.advanceTimersByTime(1_000);
    expect(held[2]?.signal.aborted).toBe(true);
    expect(held).toHaveLength(3);
    expect(subscriptions.bridgedListens).toBe(0);
  });

  it('a subscription keeps only the headers its upstream is sent of its subscribe', () => {
    const { subscriptions, owners, held } = setup();
    const u26 = { ...def('u26'), forwardHeaders: ['x-tenant'] } as unknown as UpstreamDefinition;
    owners.set('r://x', u26);
    const { caller } = who('t', 600);
    // the whole request's headers, as ResourcesSubscribeHandler passes them
    const headers = { authorization: 'Bearer t', 'x-tenant': 'a', cookie: 'c', 'user-agent': 'ua' };
    subscriptions.add('s1', sessionEnd(), u26, 'r://x', caller, headers);
    subscriptions.bridge('s1', u26, 'r://x', { headers, caller });
    expect(held).toHaveLength(1);
    expect(held[0]?.headers).toEqual({ authorization: 'Bearer t', 'x-tenant': 'a' });
    subscriptions.onApplicationShutdown();
  });

  it("a session's subscriptions made with one token keep one copy of its credential, not one each", () => {
    const { subscriptions, owners, held } = setup();
    const u26 = def('u26');
    owners.set('r://x', u26);
    owners.set('r://y', u26);
    const { caller } = who('t', 600);
    // two requests with the same token: equal strings, not one string
    const token = (): string => ['Bearer', 't'.repeat(64)].join(' ');
    subscribe(subscriptions, u26, 'r://x', { headers: { authorization: token() }, caller });
    subscribe(subscriptions, u26, 'r://y', { headers: { authorization: token() }, caller });
    expect(held.map((h) => h.uris)).toEqual([['r://x'], ['r://x', 'r://y']]);
    expect(held[1]?.headers).toBe(held[0]?.headers);
    subscriptions.onApplicationShutdown();
  });

  it('a subscribe of the same URI with a fresh token keeps it past the old end', () => {
    const { subscriptions, owners, held } = setup();
    const u26 = def('u26');
    owners.set('r://x', u26);
    subscribe(subscriptions, u26, 'r://x', who('short', 5));
    jest.advanceTimersByTime(2_000);
    subscribe(subscriptions, u26, 'r://x', who('fresh', 600));
    jest.advanceTimersByTime(10_000);
    expect(subscriptions.size).toBe(1);
    expect(held.at(-1)).toMatchObject({ uris: ['r://x'], authorization: 'Bearer fresh' });
    expect(held.at(-1)?.signal.aborted).toBe(false);
    subscriptions.onApplicationShutdown();
  });

  it('a subscription that moves to a 2026 owner keeps its own end there', () => {
    const { subscriptions, owners, held, written, sent, round } = setup();
    const u25 = def('u25');
    const u26 = def('u26');
    owners.set('r://x', u25).set('r://y', u25);
    const short = who('short', 5);
    const long = who('long', 600);
    subscriptions.add('s1', sessionEnd(), u25, 'r://x', short.caller, short.headers);
    subscriptions.add('s1', sessionEnd(), u25, 'r://y', long.caller, long.headers);
    owners.set('r://x', u26).set('r://y', u26);
    round();
    // bridged with the session's latest credential, for both URIs
    const listen = held.at(-1)!;
    expect(listen).toMatchObject({ uris: ['r://x', 'r://y'], authorization: 'Bearer long' });
    jest.setSystemTime(Date.now() + 5_001);
    listen.notify('r://x');
    expect(written).toEqual([]);
    // the narrowing timer (setSystemTime moves the clock, not the timers)
    jest.advanceTimersByTime(5_000);
    expect(held.at(-1)).toMatchObject({ uris: ['r://y'], authorization: 'Bearer long' });
    expect(sent).toEqual(['unsubscribe u25 r://x', 'unsubscribe u25 r://y']);
    subscriptions.onApplicationShutdown();
  });

  it('a subscription that ended before its URI moved is not bridged to the new owner', () => {
    const { subscriptions, owners, held, sent, round } = setup();
    const u25 = def('u25');
    const u26 = def('u26');
    owners.set('r://x', u25).set('r://y', u25);
    const short = who('short', 5);
    const long = who('long', 600);
    subscriptions.add('s1', sessionEnd(), u25, 'r://x', short.caller, short.headers);
    subscriptions.add('s1', sessionEnd(), u25, 'r://y', long.caller, long.headers);
    jest.setSystemTime(Date.now() + 5_001);
    owners.set('r://x', u26).set('r://y', u26);
    round();
    expect(held).toHaveLength(1);
    expect(held[0]).toMatchObject({ uris: ['r://y'], authorization: 'Bearer long' });
    expect(sent).toEqual(['unsubscribe u25 r://x', 'unsubscribe u25 r://y']);
    subscriptions.onApplicationShutdown();
  });

  it("on a 2025 owner, an update after the subscription's token expired reaches no one, though another URI's token is fresh", () => {
    const { subscriptions, owners, written, sent, updatedOnSession } = setup();
    const u25 = def('u25');
    owners.set('r://x', u25).set('r://y', u25);
    const short = who('short', 5);
    const long = who('long', 600);
    subscriptions.add('s1', sessionEnd(), u25, 'r://x', short.caller, short.headers);
    subscriptions.add('s1', sessionEnd(), u25, 'r://y', long.caller, long.headers);
    updatedOnSession('u25', 'r://x');
    jest.setSystemTime(Date.now() + 5_001);
    updatedOnSession('u25', 'r://x');
    updatedOnSession('u25', 'r://y');
    expect(updates(written)).toEqual(['r://x', 'r://y']);
    expect(sent).toEqual(['unsubscribe u25 r://x']);
    subscriptions.onApplicationShutdown();
  });
});
