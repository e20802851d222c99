import { randomBytes } from 'node:crypto';
import { Logger, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import {
  openRedis,
  quitRedis,
  redisFailureText,
  redisUseOptions,
  storedJsonLimit,
  type RedisClient,
} from '@app/redis';
import { CountedWarning, GatewayMetrics } from '@app/observability';
import { MrtrSeal } from '../sealing/mrtr-seal';

/** DI token of the bus resource updates cross replicas on; null without Redis. */
export const RESOURCE_UPDATE_BUS = Symbol('RESOURCE_UPDATE_BUS');

/**
 * What crosses replicas (docs/operations.md §10 "Resource subscriptions"): an update for client
 * sessions whose GET stream may be held by another replica, a session's unsubscribe received
 * by a replica that does not hold the subscription, or a session its client ended (§9 "Ending a
 * session": its streams and subscriptions on every replica end).
 */
export type ResourceBusMessage =
  | {
      readonly op: 'deliver';
      readonly sessions: readonly string[];
      readonly sourceId: string;
      readonly message: string;
    }
  | {
      readonly op: 'forget';
      readonly session: string;
      readonly upstreamId: string;
      readonly uri: string;
    }
  | {
      /** The session's client ended it (DELETE /mcp): until `expiresAtMs`, its id's expiry. */
      readonly op: 'end';
      readonly session: string;
      readonly expiresAtMs: number;
    };

export interface ResourceUpdateBus {
  /** Sends to every other replica (best effort: a Redis that is away loses it). */
  publish(message: ResourceBusMessage): void;
  /** What other replicas published. */
  onMessage(handler: (message: ResourceBusMessage) => void): void;
}

/**
 * A `deliver` names at most this many characters of session ids (each counted with its JSON
 * quotes and comma); more sessions are published as several messages. A session id is an
 * `Mcp-Session-Id` header, far shorter than this (Node's header limit is 16 KB), so a message
 * always takes at least one.
 */
export const MAX_BUS_SESSION_CHARS = 256 * 1024;
/**
 * The longest message read from the channel: what a replica publishes is a sealed (base64url,
 * 4/3 longer) JSON envelope of at most MAX_BUS_SESSION_CHARS of session ids and one relayed
 * update (a subscribed URI of at most 8192 characters and a `_meta` of at most 1 KB:
 * update-params.ts), bounded as stored JSON is. Anything longer is no replica's and is not
 * opened.
 */
export const MAX_BUS_MESSAGE_CHARS = Math.ceil(
  (storedJsonLimit(MAX_BUS_SESSION_CHARS + 8192 + 1024) * 4) / 3 + 1024,
);
/**
 * How long a published message opens: replicas' clocks are a few seconds apart at most, and
 * pub/sub delivers at once or never; a message replayed later is not acted on.
 */
const BUS_MESSAGE_TTL_MS = 30_000;

function isBusMessage(value: unknown): value is ResourceBusMessage {
  if (typeof value !== 'object' || value === null) return false;
  const m = value as Record<string, unknown>;
  if (m.op === 'deliver')
    return (
      Array.isArray(m.sessions) &&
      m.sessions.every((s) => typeof s === 'string') &&
      typeof m.sourceId === 'string' &&
      typeof m.message === 'string'
    );
  if (m.op === 'end') return typeof m.session === 'string' && typeof m.expiresAtMs === 'number';
  return (
    m.op === 'forget' &&
    typeof m.session === 'string' &&
    typeof m.upstreamId === 'string' &&
    typeof m.uri === 'string'
  );
}

/**
 * The sessions of a `deliver` in groups of at most MAX_BUS_SESSION_CHARS (one session at least).
 */
export function sessionGroups(sessions: readonly string[]): string[][] {
  const groups: string[][] = [];
  let group: string[] = [];
  let chars = 0;
  for (const session of sessions) {
    const size = session.length + 3;
    if (group.length > 0 && chars + size > MAX_BUS_SESSION_CHARS) {
      groups.push(group);
      group = [];
      chars = 0;
    }
    group.push(session);
    chars += size;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

/**
 * Redis pub/sub on `<keyPrefix>:{<identity>}:resource-updates`, one channel every replica of the
 * gateway identity subscribes to; a replica ignores what it published itself. Every message is
 * sealed with the keys of MCP_SESSION_KEYS (MrtrSeal, the gateway identity authenticated): anyone
 * else who can PUBLISH on that Redis could otherwise write any JSON-RPC message on a session's
 * GET stream, or end its subscriptions (docs/security.md "Update work"). What does not open, or
 * is longer than MAX_BUS_MESSAGE_CHARS, is dropped, counted and logged.
 */
export class RedisResourceUpdateBus implements ResourceUpdateBus, OnApplicationShutdown {
  private readonly logger = new Logger('Listen');
  private readonly replicaId = randomBytes(9).toString('base64url');
  private readonly channel: string;
  private readonly handlers: ((message: ResourceBusMessage) => void)[] = [];
  /** The length of the last message dropped, for the line about them. */
  private lastDroppedChars = 0;
  /** Messages that are no replica's: counted, one line a minute at most (a flood costs one). */
  private readonly drops = new CountedWarning(
    (count) =>
      `Dropped ${count} message(s) on the resource-update channel (the last ${this.lastDroppedChars} characters long) that this gateway's replicas did not publish: not sealed with MCP_SESSION_KEYS for this identity, expired, malformed or too long (another gateway sharing the key prefix, an older version, or a hostile publisher on Redis)`,
    this.logger,
  );

  constructor(
    private readonly publisher: RedisClient,
    private readonly subscriber: RedisClient,
    config: GatewayConfig,
    private readonly seal: MrtrSeal,
    private readonly metrics?: GatewayMetrics,
  ) {
    this.channel = `${config.mcp.redis.keyPrefix}:{${config.mcp.identity}}:resource-updates`;
    for (const client of [publisher, subscriber])
      client.on('error', (err: Error) => this.logger.debug(`Redis: ${err.message}`));
    subscriber.on('message', (_channel: string, text: string) => this.receive(text));
    // subscribed here on every connect (ioredis' own resubscribe is off: redis-uses.ts); a
    // Redis that is down must not hold the boot
    subscriber.on('ready', () => void this.subscribe());
    void this.subscribe();
  }

  private async subscribe(): Promise<void> {
    try {
      await this.subscriber.subscribe(this.channel);
    } catch (err) {
      this.logger.warn(
        `Redis is not reachable: resource updates reach only GET streams on the replica that subscribed (${redisFailureText(err)})`,
      );
    }
  }

  publish(message: ResourceBusMessage): void {
    const bodies: ResourceBusMessage[] =
      message.op === 'deliver'
        ? sessionGroups(message.sessions).map((sessions) => ({ ...message, sessions }))
        : [message];
    for (const body of bodies) {
      const envelope = { exp: Date.now() + BUS_MESSAGE_TTL_MS, from: this.replicaId, body };
      const sealed = this.seal.seal('resource-bus', envelope);
      this.publisher.publish(this.channel, sealed).catch((err: Error) => {
        this.logger.debug(`Redis: a resource update was not shared (${err.message})`);
      });
    }
  }

  onMessage(handler: (message: ResourceBusMessage) => void): void {
    this.handlers.push(handler);
  }

  onApplicationShutdown(): Promise<void> {
    return quitRedis(this.subscriber, this.publisher);
  }

  private receive(text: string): void {
    const envelope =
      text.length > MAX_BUS_MESSAGE_CHARS
        ? undefined
        : this.seal.open('resource-bus', text, Date.now(), MAX_BUS_MESSAGE_CHARS);
    if (envelope === undefined || !isBusMessage(envelope.body)) {
      this.lastDroppedChars = text.length;
      this.drops.count();
      this.metrics?.busMessageDropped('resource_updates');
      return;
    }
    if (envelope.from === this.replicaId) return;
    for (const handler of this.handlers) handler(envelope.body);
  }
}

/** The bus when the gateway has Redis (ioredis loaded only then), else null: one replica's streams. */
export const resourceUpdateBusProvider: Provider = {
  provide: RESOURCE_UPDATE_BUS,
  useFactory: async (
    config: GatewayConfig,
    seal: MrtrSeal,
    metrics: GatewayMetrics,
  ): Promise<ResourceUpdateBus | null> => {
    if (config.redisServer === undefined) return null;
    const r = config.mcp.redis;
    return new RedisResourceUpdateBus(
      await openRedis(config.redisServer, redisUseOptions('busPublisher', r)),
      await openRedis(config.redisServer, redisUseOptions('busSubscriber', r)),
      config,
      seal,
      metrics,
    );
  },
  inject: [GATEWAY_CONFIG, MrtrSeal, GatewayMetrics],
};
