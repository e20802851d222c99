import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { GatewayConfig } from '@app/config';
import { CallCancellation } from '@app/execution';
import type { CallerIdentity, ResourceServer } from '@app/identity';
import { GatewayMetrics } from '@app/observability';
import type { RegistryService } from '@app/registry';
import type { ServerCapabilities } from '../handlers/server-capabilities';
import { SessionTokenService } from '../session/session-token.service';
import { NotificationHub, type OpenStream } from './notification-hub.service';
import { NotificationStream } from './notification-stream';
import { SessionStreams } from './session-streams.service';

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
        ...listen,
      },
    },
  } as unknown as GatewayConfig;
}

const registry = { onPublished: () => undefined } as unknown as RegistryService;

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
    const sessions = new SessionTokenService(new ConfigService<GatewayConfig, true>(cfg));
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

  it("opens for the session's own caller only (404 for another), and 429 past the caller's cap", () => {
    const { sessions, get } = streams(new GatewayMetrics(), { maxStreamsPerCaller: 1 });
    const sid = sessions.issue('2025-11-25', undefined, undefined, caller('alice'));
    expect(get.open(headers(sid), new CallCancellation(), caller('bob')).status).toBe(404);
    expect(get.open(headers(sid), new CallCancellation(), caller('alice')).status).toBe(200);
    expect(get.open(headers(sid), new CallCancellation(), caller('alice')).status).toBe(429);
  });

  it('a GET stream whose client does not read is cut at maxQueuedBytes and released', async () => {
    jest.useFakeTimers();
    const metrics = new GatewayMetrics();
    const { sessions, hub, get } = streams(metrics);
    const answer = get.open(
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
