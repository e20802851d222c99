import { randomBytes } from 'node:crypto';
import { Logger, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import {
  openRedis,
  quitRedis,
  redisFailureText,
  redisUseOptions,
  type RedisClient,
} from '@app/redis';

/** DI token of the bus resource updates cross replicas on; null without Redis. */
export const RESOURCE_UPDATE_BUS = Symbol('RESOURCE_UPDATE_BUS');

/**
 * What crosses replicas (docs/operations.md §10 "Resource subscriptions"): an update for client
 * sessions whose GET stream may be held by another replica, or a session's unsubscribe received
 * by a replica that does not hold the subscription.
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
    };

export interface ResourceUpdateBus {
  /** Sends to every other replica (best effort: a Redis that is away loses it). */
  publish(message: ResourceBusMessage): void;
  /** What other replicas published. */
  onMessage(handler: (message: ResourceBusMessage) => void): void;
}

interface Envelope {
  readonly from: string;
  readonly body: ResourceBusMessage;
}

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
  return (
    m.op === 'forget' &&
    typeof m.session === 'string' &&
    typeof m.upstreamId === 'string' &&
    typeof m.uri === 'string'
  );
}

/**
 * Redis pub/sub on `<keyPrefix>:{<identity>}:resource-updates`, one channel every replica of the
 * gateway identity subscribes to; a replica ignores what it published itself.
 */
export class RedisResourceUpdateBus implements ResourceUpdateBus, OnApplicationShutdown {
  private readonly logger = new Logger('Listen');
  private readonly replicaId = randomBytes(9).toString('base64url');
  private readonly channel: string;
  private readonly handlers: ((message: ResourceBusMessage) => void)[] = [];

  constructor(
    private readonly publisher: RedisClient,
    private readonly subscriber: RedisClient,
    config: GatewayConfig,
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
    const envelope: Envelope = { from: this.replicaId, body: message };
    this.publisher.publish(this.channel, JSON.stringify(envelope)).catch((err: Error) => {
      this.logger.debug(`Redis: a resource update was not shared (${err.message})`);
    });
  }

  onMessage(handler: (message: ResourceBusMessage) => void): void {
    this.handlers.push(handler);
  }

  onApplicationShutdown(): Promise<void> {
    return quitRedis(this.subscriber, this.publisher);
  }

  private receive(text: string): void {
    let envelope: Partial<Envelope>;
    try {
      envelope = JSON.parse(text) as Partial<Envelope>;
    } catch {
      return;
    }
    if (envelope.from === this.replicaId || !isBusMessage(envelope.body)) return;
    for (const handler of this.handlers) handler(envelope.body);
  }
}

/** The bus when the gateway has Redis (ioredis loaded only then), else null: one replica's streams. */
export const resourceUpdateBusProvider: Provider = {
  provide: RESOURCE_UPDATE_BUS,
  useFactory: async (config: GatewayConfig): Promise<ResourceUpdateBus | null> => {
    if (config.redisServer === undefined) return null;
    const r = config.mcp.redis;
    return new RedisResourceUpdateBus(
      await openRedis(config.redisServer, redisUseOptions('busPublisher', r)),
      await openRedis(config.redisServer, redisUseOptions('busSubscriber', r)),
      config,
    );
  },
  inject: [GATEWAY_CONFIG],
};
