import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import type { GatewayConfig } from '@app/config';
import { CallCancellation } from '@app/execution';
import type { AuthOutcome, CallerAccess, CallerIdentity, ResourceServer } from '@app/identity';
import { GatewayMetrics } from '@app/observability';
import { CatalogExtras, CatalogSnapshot, type RegistryService } from '@app/registry';
import type { UpstreamAnnouncedListener } from '@app/registry';
import type { ServerCapabilities } from '../servers/server-capabilities';
import { SessionTokenService } from '../session/session-token.service';
import { NotificationHub, type OpenStream } from './notification-hub.service';
import { NotificationStream } from './notification-stream';
import { SessionStreams } from './session-streams.service';
import type { VirtualServers } from '../servers/virtual-servers.service';

Logger.overrideLogger(false);

const NOW_S = Math.floor(Date.now() / 1000);

function config(listen: Partial<GatewayConfig['mcp']['listen']> = {}): GatewayConfig {
  return {
    sessionKeys: [{ kid: 'k', key: Buffer.alloc(32, 7) }],
    sessionKeysEphemeral: false,
    mcp: {
      identity: 'gw-test',
      session: { ttlSeconds: 3600 },
      auth: { clockSkewSeconds: 0 },
      listen: {
        maxStreams: 10,
        maxStreamsPerCaller: 2,
        maxQueuedBytes: 4096,
        keepAliveMillis: 100,
        recheckSeconds: 60,
        ...listen,
      },
    },
  } as unknown as GatewayConfig;
}

const registry = {
  onPublished: () => undefined,
  onUpstreamAnnounced: () => undefined,
} as unknown as RegistryService;

const caller = (subject: string, expiresAt?: number): CallerIdentity => ({
  subject,
  scopes: [],
  claims: {},
  expiresAt,
  token: `t-${subject}`,
});

/** A stream as the listen and GET services build them: closing releases it from the hub. */
class Stream implements OpenStream {
  closed?: boolean;
  constructor(
    private readonly hub: NotificationHub,
    readonly stream: NotificationStream = hub.newStream(),
  ) {}
  listChanged(): void {}
  keepAlive(): void {
    this.stream.comment('keepalive');
  }
  close(graceful: boolean): void {
    this.closed ??= graceful;
    this.stream.end();
    this.hub.remove(this);
  }
}

async function series(metrics: GatewayMetrics, name: string): Promise<number> {
  const text = await metrics.registry.metrics();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? 0 : Number(line.slice(name.length + 1));
}

afterEach(() => jest.useRealTimers());

describe('NotificationHub: the lifecycle rules of every notification stream', () => {
  it('caps streams per caller (maxStreamsPerCaller) and in all (maxStreams); a closed stream gives its room back', async () => {
    const metrics = new GatewayMetrics();
    const hub = new NotificationHub(config({ maxStreams: 3 }), registry, metrics);
    const a1 = new Stream(hub);
    expect(hub.add(a1, caller('alice'))).toBe('open');
    expect(hub.add(new Stream(hub), caller('alice'))).toBe('open');
    expect(hub.room(caller('alice'))).toBe('caller_limit');
    expect(hub.add(new Stream(hub), caller('alice'))).toBe('caller_limit');
    expect(hub.add(new Stream(hub), caller('bob'))).toBe('open');
    expect(hub.add(new Stream(hub), caller('carol'))).toBe('replica_limit');
    a1.close(false);
    expect(hub.add(new Stream(hub), caller('alice'))).toBe('open');
    expect(
      await series(
        metrics,
        'mcp_gateway_notification_streams_refused_total{reason="caller_limit"}',
      ),
    ).toBe(2);
    expect(
      await series(
        metrics,
        'mcp_gateway_notification_streams_refused_total{reason="replica_limit"}',
      ),
    ).toBe(1);
    expect(await series(metrics, 'mcp_gateway_notification_streams_open')).toBe(3);
  });

  it('without a caller (mcp.auth off) only maxStreams applies', () => {
    const hub = new NotificationHub(config({ maxStreams: 3, maxStreamsPerCaller: 1 }), registry);
    for (let i = 0; i < 3; i++) expect(hub.add(new Stream(hub), undefined)).toBe('open');
    expect(hub.add(new Stream(hub), undefined)).toBe('replica_limit');
  });

  it("closes a stream when its caller's token expires, without the graceful close, and counts it", async () => {
    jest.useFakeTimers({ now: NOW_S * 1000 });
    const metrics = new GatewayMetrics();
    const hub = new NotificationHub(config(), registry, metrics);
    const expiring = new Stream(hub);
    const lasting = new Stream(hub);
    hub.add(expiring, caller('alice', NOW_S + 5));
    hub.add(lasting, caller('bob', NOW_S + 3600));
    jest.advanceTimersByTime(4_900);
    expect(expiring.closed).toBeUndefined();
    jest.advanceTimersByTime(200);
    expect(expiring.closed).toBe(false);
    expect(lasting.closed).toBeUndefined();
    expect(hub.size).toBe(1);
    expect(
      await series(
        metrics,
        'mcp_gateway_notification_streams_closed_total{reason="token_expired"}',
      ),
    ).toBe(1);
  });

  it("rechecks a stream's caller every recheckSeconds: a refused token or a changed grant closes it (counted), a 503 does not", async () => {
    jest.useFakeTimers({ now: NOW_S * 1000 });
    const metrics = new GatewayMetrics();
    const dev: CallerAccess = { all: false, key: '0', sources: new Set(['sec']), tools: new Set() };
    const ops: CallerAccess = { all: false, key: '1', sources: new Set(), tools: new Set() };
    const who = (subject: string, group: string): CallerIdentity => ({
      ...caller(subject),
      claims: { group },
    });
    /** What the authorization server says of each Authorization value now. */
    const verdicts = new Map<string, AuthOutcome>();
    const unavailable: AuthOutcome = {
      kind: 'refused',
      status: 503,
      error: 'temporarily_unavailable',
      description: 'down',
    };
    const resourceServer = {
      enabled: true,
      policy: { accessFor: (c: CallerIdentity) => (c.claims.group === 'dev' ? dev : ops) },
      authenticate: (value: string) => Promise.resolve(verdicts.get(value) ?? unavailable),
    } as unknown as ResourceServer;
    const hub = new NotificationHub(
      config({ recheckSeconds: 1 }),
      registry,
      metrics,
      resourceServer,
    );
    class Granted extends Stream {
      readonly access = dev;
    }
    const revoked = new Granted(hub);
    const regranted = new Granted(hub);
    const unchecked = new Granted(hub);
    const kept = new Granted(hub);
    for (const [stream, value] of [
      [revoked, 'Bearer r'],
      [regranted, 'Bearer g'],
      [unchecked, 'Bearer u'],
      [kept, 'Bearer k'],
    ] as const) {
      verdicts.set(value, { kind: 'authenticated', caller: who(value, 'dev') });
      expect(hub.add(stream, who(value, 'dev'), value)).toBe('open');
    }
    verdicts.delete('Bearer u'); // the authorization server cannot answer for it: 503
    await jest.advanceTimersByTimeAsync(1_100);
    expect([revoked, regranted, unchecked, kept].map((s) => s.closed)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    verdicts.set('Bearer r', { kind: 'refused', status: 401, description: 'inactive' });
    verdicts.set('Bearer g', { kind: 'authenticated', caller: who('Bearer g', 'ops') });
    await jest.advanceTimersByTimeAsync(1_000);
    expect(revoked.closed).toBe(false);
    expect(regranted.closed).toBe(false);
    expect(unchecked.closed).toBeUndefined();
    expect(kept.closed).toBeUndefined();
    expect(hub.size).toBe(2);
    expect(
      await series(
        metrics,
        'mcp_gateway_notification_streams_closed_total{reason="token_revoked"}',
      ),
    ).toBe(1);
    expect(
      await series(
        metrics,
        'mcp_gateway_notification_streams_closed_total{reason="grant_changed"}',
      ),
    ).toBe(1);
    // after the outage, the recheck that failed is tried again and decides
    verdicts.set('Bearer u', { kind: 'refused', status: 401, description: 'inactive' });
    await jest.advanceTimersByTimeAsync(1_000);
    expect(unchecked.closed).toBe(false);
    expect(kept.closed).toBeUndefined();
    kept.close(false);
  });

  it('a stream whose client does not read is cut at maxQueuedBytes, released and counted', async () => {
    jest.useFakeTimers();
    const metrics = new GatewayMetrics();
    const hub = new NotificationHub(config({ maxQueuedBytes: 4096 }), registry, metrics);
    const stalled = new Stream(hub);
    hub.add(stalled, undefined);
    // keep-alive comments pile up: nobody takes them
    jest.advanceTimersByTime(100 * 500);
    expect(stalled.stream.isEnded).toBe(true);
    expect(stalled.closed).toBe(false);
    expect(hub.size).toBe(0);
    expect(
      await series(
        metrics,
        'mcp_gateway_notification_streams_closed_total{reason="slow_consumer"}',
      ),
    ).toBe(1);
  });
});

describe('SessionStreams: a 2025 GET stream keeps the same rules', () => {
  function streams(metrics: GatewayMetrics, listen: Partial<GatewayConfig['mcp']['listen']> = {}) {
    const cfg = config(listen);
    const sessions = new SessionTokenService(cfg);
    const hub = new NotificationHub(cfg, registry, metrics);
    const capabilities = { current: () => ({ tools: {} }) } as unknown as ServerCapabilities;
    // no mcp.access: every caller's grant is everything
    const resourceServer = {
      policy: { accessFor: () => undefined },
    } as unknown as ResourceServer;
    return { sessions, hub, get: new SessionStreams(sessions, hub, capabilities, resourceServer) };
  }
  const headers = (sid: string) => ({
    accept: 'text/event-stream',
    'mcp-session-id': sid,
    'mcp-protocol-version': '2025-11-25',
  });

  it("opens for the session's own caller only (404 for another), and 429 past the caller's cap", async () => {
    const { sessions, get } = streams(new GatewayMetrics(), { maxStreamsPerCaller: 1 });
    const sid = sessions.issue('2025-11-25', undefined, undefined, caller('alice'));
    expect((await get.open(headers(sid), new CallCancellation(), caller('bob'))).status).toBe(404);
    expect((await get.open(headers(sid), new CallCancellation(), caller('alice'))).status).toBe(
      200,
    );
    expect((await get.open(headers(sid), new CallCancellation(), caller('alice'))).status).toBe(
      429,
    );
  });

  it('a GET stream whose client does not read is cut at maxQueuedBytes and released', async () => {
    jest.useFakeTimers();
    const metrics = new GatewayMetrics();
    const { sessions, hub, get } = streams(metrics);
    const answer = await get.open(
      headers(sessions.issue('2025-11-25')),
      new CallCancellation(),
      undefined,
    );
    expect(answer.status).toBe(200);
    const cut = jest.fn();
    answer.stream?.onCut?.(cut);
    expect(hub.size).toBe(1);
    jest.advanceTimersByTime(100 * 500);
    expect(cut).toHaveBeenCalledTimes(1);
    expect(hub.size).toBe(0);
    expect(
      await series(
        metrics,
        'mcp_gateway_notification_streams_closed_total{reason="slow_consumer"}',
      ),
    ).toBe(1);
  });
});

describe('NotificationHub: an upstream list change the catalog did not show', () => {
  /** A stream that records what it was told, with a grant and the upstreams it relays itself. */
  class Told implements OpenStream {
    readonly kinds: string[] = [];
    readonly stream: NotificationStream;
    constructor(
      hub: NotificationHub,
      readonly access?: CallerAccess,
      private readonly relays: readonly string[] = [],
    ) {
      this.stream = hub.newStream();
    }
    relaysFrom(upstreamId: string): boolean {
      return this.relays.includes(upstreamId);
    }
    listChanged(kind: string): void {
      this.kinds.push(kind);
    }
    keepAlive(): void {}
    close(): void {}
  }

  it('is told to the streams granted the upstream that do not relay it, for the lists the pull left unchanged', async () => {
    let announce: UpstreamAnnouncedListener = () => undefined;
    const hub = new NotificationHub(config(), {
      onPublished: () => undefined,
      onUpstreamAnnounced: (listener: UpstreamAnnouncedListener) => (announce = listener),
    } as unknown as RegistryService);
    const open = new Told(hub);
    const granted = new Told(hub, {
      all: false,
      sources: new Set(['up']),
    } as unknown as CallerAccess);
    const other = new Told(hub, {
      all: false,
      sources: new Set(['ub']),
    } as unknown as CallerAccess);
    const relaying = new Told(hub, undefined, ['up']);
    for (const s of [open, granted, other, relaying]) hub.add(s, undefined);
    const catalog = await CatalogSnapshot.build([], 'c', new Date(0), {}, CatalogExtras.EMPTY);
    announce(
      'up',
      ['notifications/tools/list_changed', 'notifications/prompts/list_changed'],
      catalog,
      catalog,
    );
    expect(open.kinds).toEqual(['tools', 'prompts']);
    expect(granted.kinds).toEqual(['tools', 'prompts']);
    expect(other.kinds).toEqual([]);
    expect(relaying.kinds).toEqual([]);
  });
});

describe('NotificationHub: resource updates on a virtual server path follow its view', () => {
  it("a 2025 session's stream on a server path is told a source's update only while the view the catalog served now resolves holds that source", async () => {
    const before = await CatalogSnapshot.build([], 'a', new Date(0), {}, CatalogExtras.EMPTY);
    const after = await CatalogSnapshot.build([], 'b', new Date(0), {}, CatalogExtras.EMPTY);
    let current = before;
    const hub = new NotificationHub(
      config(),
      {
        onPublished: () => undefined,
        onUpstreamAnnounced: () => undefined,
        current: () => current,
      } as unknown as RegistryService,
      null,
      null,
      // the view holds source `up` whole in the first catalog, not in the second (a tool of it
      // was re-tagged out of the server's tags)
      {
        onServersGone: () => undefined,
        narrowFor: (access: CallerAccess | undefined, catalog: CatalogSnapshot | undefined) =>
          ({
            ...access,
            sources: new Set(catalog === before ? ['up'] : []),
            resolvedFor: catalog,
          }) as unknown as CallerAccess,
      } as unknown as VirtualServers,
    );
    const pushed: string[] = [];
    const stream: OpenStream = {
      stream: { push: (m: string) => pushed.push(m), onCut: () => undefined } as never,
      access: { all: false, server: 'team', sources: new Set(['up']) } as unknown as CallerAccess,
      sessionId: 's1',
      listChanged: () => undefined,
      keepAlive: () => undefined,
      close: () => undefined,
    };
    expect(hub.add(stream, undefined)).toBe('open');
    hub.toSessions(new Set(['s1']), 'up', 'first');
    current = after;
    hub.toSessions(new Set(['s1']), 'up', 'second');
    expect(pushed).toEqual(['first']);
    hub.onApplicationShutdown();
  });
});

describe("NotificationHub: a 2025 session's message goes on one of its GET streams", () => {
  /** A session's GET stream (on `/mcp`) that records what is written on it. */
  function sessionStream(sessionId: string, pushed: string[], told: string[]): OpenStream {
    return {
      stream: { push: (m: string) => pushed.push(m), onCut: () => undefined } as never,
      sessionId,
      listChanged: (kind) => told.push(kind),
      keepAlive: () => undefined,
      close: () => undefined,
    };
  }

  it('the one opened last; when it closes, the one opened before it; another session keeps its own', () => {
    const hub = new NotificationHub(config({ maxStreamsPerCaller: 10 }), {
      onPublished: () => undefined,
      onUpstreamAnnounced: () => undefined,
      current: () => undefined,
    } as unknown as RegistryService);
    const older: string[] = [];
    const newer: string[] = [];
    const other: string[] = [];
    const first = sessionStream('s1', older, []);
    const second = sessionStream('s1', newer, []);
    const third = sessionStream('s2', other, []);
    for (const s of [first, second, third]) expect(hub.add(s, undefined)).toBe('open');

    hub.toSessions(new Set(['s1', 's2']), 'up', 'update');
    expect(hub.toSession('s1', undefined, 'selected')).toBe(1);
    expect({ older, newer, other }).toEqual({
      older: [],
      newer: ['update', 'selected'],
      other: ['update'],
    });

    hub.remove(second);
    hub.toSessions(new Set(['s1']), 'up', 'later');
    expect(older).toEqual(['later']);
    hub.onApplicationShutdown();
  });
});
