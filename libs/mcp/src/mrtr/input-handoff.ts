import { randomBytes } from 'node:crypto';
import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import {
  openRedis,
  quitRedis,
  redisUseOptions,
  storedJsonLimit,
  type RedisClient,
} from '@app/redis';
import { CountedWarning, GatewayMetrics } from '@app/observability';
import { MCP_MAX_BODY_BYTES } from '@app/wire';
import type { TakeOnce } from '../relay/take-once';
import { MrtrSeal } from '../sealing/mrtr-seal';
import { holderStopped } from './holder-watch';

/**
 * Takes the input a client sent for a pending call (JSON) and resolves with what the caller
 * is to get back (JSON); must not reject.
 */
export type HandoffHandler = (input: unknown) => Promise<unknown>;

/**
 * What `resume` got: the handler's value, nothing because no replica holds the key,
 * (`unreachable`) nothing because the shared store did not take the message: the holder may
 * still have the call (a Redis failover, an outage), and a later retry may reach it, or (`lost`)
 * nothing because the holder acknowledged the input, so may have acted on it, and then stopped
 * or did not reply within the bound: what became of the input is unknown.
 */
export type HandoffOutcome =
  | { readonly kind: 'ok'; readonly value: unknown }
  | { readonly kind: 'gone' }
  | { readonly kind: 'unreachable' }
  | { readonly kind: 'lost' };

interface ResumeMessage {
  readonly op: 'resume';
  readonly key: string;
  readonly input: unknown;
  readonly replyTo: string;
  readonly corr: string;
  /** When it was sent (the sender's clock, ms since the epoch): a stale one is not acted on. */
  readonly sentAtMs?: number;
}

/**
 * A resume whose publish failed (Redis did not answer: it may deliver it later) is waited on this
 * long more for a reply before the retry is told the holder cannot be reached; the holder does not
 * act on a resume older than STALE_RESUME_MILLIS, well inside it (replica clocks a few seconds
 * apart at most), so a call is never consumed by a retry that was told to come again. A stale
 * resume is answered `unreachable`, so a sender still waiting (the holder's event loop was held)
 * tells its client to retry at once instead of waiting for the handoff's timeout.
 */
const UNREACHABLE_GRACE_MILLIS = 8000;
const STALE_RESUME_MILLIS = 5000;
/**
 * A resume no replica received is published again every REPUBLISH_MILLIS for this long before
 * the call counts as held by no replica: after Redis comes back each replica's subscriber
 * subscribes again within ioredis' reconnect backoff (2 s at most) and its connect.
 */
const NO_SUBSCRIBER_GRACE_MILLIS = 4000;
/**
 * A resume the holder has not acknowledged within this is `unreachable` (its client told to
 * retry, the retry given back), not waited on to the timeout and then taken for `gone`: the
 * holder's subscription may sit on a node that hangs (a Cluster, where a publish's receiver
 * count proves nothing). Longer than STALE_RESUME_MILLIS, so a resume acknowledged late is one
 * the holder does not act on.
 */
const NO_ACK_MILLIS = 6000;
const REPUBLISH_MILLIS = 200;
/**
 * How long the holder keeps the value a resume from another replica ran to, for the same retry
 * sent again: its acknowledgement or its reply may not have reached the sender (on a Cluster a
 * publish's receiver count proves nothing; pub/sub keeps nothing), whose client was then told
 * to retry with the same requestState. That retry gets the value instead of "no longer
 * pending", so the call's outcome is not lost with the reply. Bounded per value and in all.
 */
const REPLAY_MILLIS = 60_000;
const REPLAY_MAX_VALUE_CHARS = 1 << 20;
const REPLAY_MAX_TOTAL_CHARS = 16 << 20;
/** How often a sender looks whether the holder that acknowledged its resume still listens. */
const HOLDER_WATCH_MILLIS = 1000;
/**
 * How long a published message opens (its seal's `exp`): a reply may follow its resume by the
 * call's time, but it is sealed when published, and pub/sub delivers at once or never; replica
 * clocks are a few seconds apart at most.
 */
const MESSAGE_TTL_MILLIS = 30_000;
/** How often the store's epoch is looked at (a store emptied under a live connection), ms. */
const EPOCH_CHECK_MS = 10_000;

interface ReplyMessage {
  readonly op: 'reply';
  readonly corr: string;
  readonly gone?: boolean;
  /** The resume was not acted on (it came too late), or could not be published. */
  readonly unreachable?: boolean;
  /** Acknowledged, then its holder stopped (no reply will come): HandoffOutcome `lost`. */
  readonly lost?: boolean;
  readonly value?: unknown;
}

/** The holder got a resume (sent before it acts on it): its sender stops waiting for this. */
interface AckMessage {
  readonly op: 'ack';
  readonly corr: string;
}

interface WaitingReply {
  readonly resolve: (outcome: HandoffOutcome) => void;
  /** The replica the resume went to (its channel is watched once it acknowledged). */
  readonly owner: string;
  readonly timer: NodeJS.Timeout;
  /** Settles the resume `unreachable` unless the holder acknowledges it first. */
  ackTimer?: NodeJS.Timeout;
  /** The holder acknowledged it (perhaps before the publish's own answer came). */
  acked?: boolean;
}

/**
 * Where a client's input for a pending call meets the call
 * (docs/operations.md §11 "Multi round-trip and era bridging"): the call waits on the replica that
 * holds its upstream stream (or its client's SSE answer), under a key; the input may arrive at any
 * replica. `resume(owner, key, input)` runs the key's handler on the owner: here directly, on
 * another replica through Redis pub/sub (one channel per replica,
 * `<redis.keyPrefix>:{<identity>}:mrtr:<replicaId>`, request and reply). Without REDIS_URL only
 * this replica's keys can be resumed; another's are `gone` (docs/operations.md). Redis is touched
 * only by a retry that lands on a replica that does not hold the call.
 */
@Injectable()
export class InputHandoff implements OnModuleInit, OnApplicationShutdown, TakeOnce {
  /** This process's id among the replicas (random per start). */
  readonly replicaId = randomBytes(9).toString('base64url');
  private readonly logger = new Logger('Mrtr');
  /** The length of the last message that did not open, for the line about them. */
  private lastDroppedChars = 0;
  /** Messages that did not open: counted, one line a minute at most (a flood costs one). */
  private readonly drops = new CountedWarning(
    (count) =>
      `Dropped ${count} message(s) on this replica's retry channel (the last ${this.lastDroppedChars} characters long) that no replica of this gateway sent: not sealed with MCP_SESSION_KEYS for this identity, expired, malformed or too long (another gateway sharing the key prefix, an older version, or a hostile publisher on Redis)`,
    this.logger,
  );
  private readonly handlers = new Map<string, HandoffHandler>();
  private readonly waiting = new Map<string, WaitingReply>();
  /** Values resumes from other replicas ran to, by key, oldest first (REPLAY_MILLIS). */
  private readonly replays = new Map<
    string,
    { readonly value: unknown; readonly chars: number; readonly until: number }
  >();
  private replayChars = 0;
  /** Held keys whose resumes from other replicas are kept for replay (hold's `replayable`). */
  private readonly replayable = new Set<string>();
  private publisher?: RedisClient;
  private subscriber?: RedisClient;
  private readonly channelPrefix: string;
  /** false from the publisher's first failure until it is ready again (logged once each way). */
  private healthy = true;
  /**
   * true while this replica's subscriber is subscribed to its channel (SUBSCRIBE answered since
   * its last connect): only then can the holder's acknowledgement and reply to a resume reach it.
   */
  private listening = false;
  /** Told when Redis may have lost what this replica spent (StoreRenewed). */
  private readonly renewedListeners: (() => void)[] = [];
  /** The store's epoch this replica last saw (EPOCH_KEY); undefined before the first look. */
  private epoch?: string;
  private epochTimer?: NodeJS.Timeout;
  /**
   * The longest message parsed off the channel: a resume carries a client's input (one /mcp
   * body), a reply what the call answered (one answer, `execution.maxResponseBytes`). Set when
   * Redis is opened; anything longer is no replica's message and is dropped unparsed.
   */
  private maxMessageChars = Infinity;

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly seal: MrtrSeal,
    @Optional() private readonly metrics?: GatewayMetrics,
  ) {
    this.channelPrefix = `${config.mcp.redis.keyPrefix}:{${config.mcp.identity}}:mrtr:`;
  }

  /** true when keys held by other replicas can be reached (REDIS_URL set). */
  get shared(): boolean {
    return this.publisher !== undefined;
  }

  async onModuleInit(): Promise<void> {
    const server = this.config.redisServer;
    if (server === undefined) return;
    const r = this.config.mcp.redis;
    // sealed: base64url of the JSON (4/3 longer) and its prefix, IV and tag
    this.maxMessageChars =
      Math.ceil(
        (storedJsonLimit(Math.max(MCP_MAX_BODY_BYTES, this.config.mcp.execution.maxResponseBytes)) *
          4) /
          3,
      ) + 1024;
    this.publisher = await openRedis(server, redisUseOptions('handoffPublisher', r));
    this.subscriber = await openRedis(server, redisUseOptions('handoffSubscriber', r));
    for (const client of [this.publisher, this.subscriber])
      client.on('error', (err: Error) => this.logger.debug(`Redis: ${err.message}`));
    // one warning when the publisher loses Redis and one line when it is back, as the other
    // stores say theirs (docs/operations.md §5): meanwhile one-time use and cross-replica
    // retries are this replica's alone
    this.publisher.on('error', (err: Error) => this.unhealthy(err.message));
    this.publisher.on('ready', () => {
      if (!this.healthy)
        this.logger.log(
          'Redis is back: spent requestState envelopes and retries held by other replicas are shared again',
        );
      this.healthy = true;
      // what was spent here while it was away, or before it restarted empty, is shared again
      this.renewed();
    });
    // a store emptied without a reconnect (FLUSHDB, a failover to an empty replica that kept
    // the address) is told by its epoch key going missing
    this.epochTimer = setInterval(() => void this.checkEpoch(), EPOCH_CHECK_MS);
    this.epochTimer.unref();
    this.subscriber.on('message', (_channel: string, text: string) => this.receive(text));
    // a reply published while the subscriber is away is lost for good (pub/sub keeps nothing)
    this.subscriber.on('close', () => {
      this.listening = false;
      this.repliesAtRisk();
    });
    // ioredis sends SUBSCRIBE again on reconnect but does not say when it is answered: asked
    // here as well (subscribing twice to a channel is one subscription), to know when it is
    this.subscriber.on('ready', () => void this.subscribe());
    // Bounded: a Redis that is down must not hold the boot.
    const subscribed = this.subscribe();
    const ok = await Promise.race([
      subscribed,
      new Promise<boolean>((resolve) =>
        setTimeout(() => resolve(false), this.config.mcp.redis.connectTimeoutMillis).unref(),
      ),
    ]);
    if (!ok)
      this.logger.warn(
        'Redis is not reachable yet: retries of multi-round-trip calls held by this replica reach it only once it is',
      );
    // the epoch this replica starts in, so that the first change seen is an emptied store
    else await this.checkEpoch();
  }

  /** Subscribes to this replica's channel; true once Redis answered (then `listening`). */
  private async subscribe(): Promise<boolean> {
    const subscriber = this.subscriber;
    if (subscriber === undefined) return false;
    try {
      await subscriber.subscribe(this.channel(this.replicaId));
    } catch {
      return false;
    }
    // a close that came while SUBSCRIBE was answered leaves it unsubscribed
    this.listening = subscriber.status === 'ready';
    return this.listening;
  }

  /**
   * `listener` runs when Redis may not hold what this replica spent: it came back after being
   * unreachable, it reconnected (a restart without its data), or its epoch key is gone (emptied
   * under a live connection). SpentStates then writes its spent nonces back (restoreSpent).
   */
  onStoreRenewed(listener: () => void): void {
    this.renewedListeners.push(listener);
  }

  private renewed(): void {
    for (const listener of this.renewedListeners) listener();
  }

  /** Sees the store's epoch: a new one (the key was gone and is set anew) means it was emptied. */
  private async checkEpoch(): Promise<void> {
    const publisher = this.publisher;
    if (publisher === undefined || !this.healthy) return;
    const key = `${this.channelPrefix}epoch`;
    try {
      await publisher.set(key, randomBytes(9).toString('base64url'), 'NX');
      const epoch = await publisher.get(key);
      if (epoch === null || epoch === this.epoch) return;
      const first = this.epoch === undefined;
      this.epoch = epoch;
      if (!first) this.renewed();
    } catch {
      // unreachable: the publisher's own events say so, and 'ready' writes back
    }
  }

  /**
   * Writes spent nonces back (each with what is left of its time), keeping any already there:
   * one pipeline, best effort.
   */
  async restoreSpent(entries: readonly (readonly [string, number])[]): Promise<void> {
    const publisher = this.publisher;
    if (publisher === undefined || entries.length === 0) return;
    const pipeline = publisher.pipeline();
    for (const [key, ttlMillis] of entries)
      pipeline.set(
        `${this.channelPrefix}spent:${key}`,
        '1',
        'PX',
        Math.max(1, Math.ceil(ttlMillis)),
        'NX',
      );
    await pipeline.exec().catch(() => undefined);
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.epochTimer);
    for (const [corr, waiting] of this.waiting) {
      clearTimeout(waiting.timer);
      waiting.resolve({ kind: 'gone' });
      this.waiting.delete(corr);
    }
    this.handlers.clear();
    this.replayable.clear();
    this.replays.clear();
    this.replayChars = 0;
    await quitRedis(this.subscriber, this.publisher);
  }

  /**
   * Holds `key` on this replica until `release`.
   * @param replayable what a resume from another replica runs to is kept for the same resume
   *   sent again (REPLAY_MILLIS): for a caller whose duplicates are refused before they reach
   *   the handoff (MrtrCalls: a spent requestState envelope), so only a retry whose client was
   *   told to come again gets it. Not for the 2025 bridge, where a late duplicate answer must
   *   meet no waiting call.
   */
  hold(key: string, handler: HandoffHandler, replayable = false): void {
    this.handlers.set(key, handler);
    if (replayable) this.replayable.add(key);
    else this.replayable.delete(key);
  }

  release(key: string): void {
    this.handlers.delete(key);
    this.replayable.delete(key);
  }

  /**
   * Runs `key`'s handler with `input` on replica `owner` and gives its value.
   * @param timeoutMillis bound on the wait for another replica's reply, in ms; `gone` after it
   */
  async resume(
    owner: string,
    key: string,
    input: unknown,
    timeoutMillis: number,
  ): Promise<HandoffOutcome> {
    if (owner === this.replicaId) {
      const handler = this.handlers.get(key);
      if (handler !== undefined) return { kind: 'ok', value: await handler(input) };
      const replay = this.replayOf(key);
      return replay === undefined ? { kind: 'gone' } : { kind: 'ok', value: replay.value };
    }
    const publisher = this.publisher;
    if (publisher === undefined) return { kind: 'gone' };
    // the holder's acknowledgement and reply come on this replica's channel: published while it
    // is not subscribed (Redis just came back), the holder would act on the resume and its
    // reply be lost, the client told to send again an input that was taken
    if (!this.listening || this.subscriber?.status !== 'ready') return { kind: 'unreachable' };
    const corr = randomBytes(12).toString('base64url');
    const reply = new Promise<HandoffOutcome>((resolve) => {
      const timer = setTimeout(() => {
        const acked = this.waiting.get(corr)?.acked === true;
        this.waiting.delete(corr);
        // acknowledged: the holder took the input, and its reply never came
        resolve({ kind: acked ? 'lost' : 'gone' });
      }, timeoutMillis);
      timer.unref();
      this.waiting.set(corr, { resolve, timer, owner });
    });
    const message: ResumeMessage = {
      op: 'resume',
      key,
      input,
      replyTo: this.replicaId,
      corr,
      sentAtMs: Date.now(),
    };
    const receivers = await publisher
      .publish(this.channel(owner), this.sealed(message))
      .catch((err: unknown) => {
        this.unhealthy(err instanceof Error ? err.message : String(err));
        return undefined;
      });
    if (receivers === undefined) {
      // it may still arrive (a Redis that hangs delivers it when it wakes): a reply within the
      // grace wins; none, and the holder will not act on it any more
      const grace = this.unreachableAfterGrace(corr);
      return reply.finally(() => clearTimeout(grace));
    }
    const waiting = this.waiting.get(corr);
    if (waiting !== undefined && waiting.acked !== true) {
      waiting.ackTimer = setTimeout(
        () => this.settle({ op: 'reply', corr, unreachable: true }),
        NO_ACK_MILLIS,
      );
      waiting.ackTimer.unref();
    }
    // No subscriber: no replica holds the call, or the holder's subscriber has not subscribed
    // again yet after Redis came back (this publisher may reconnect first). A Cluster counts
    // only the subscribers on the node the publish reached, so there 0 proves nothing and the
    // reply or the timeout decides.
    if (receivers === 0 && !publisher.isCluster) void this.republish(owner, message);
    return reply;
  }

  /**
   * Publishes a resume nobody received again until a replica receives it, for at most
   * NO_SUBSCRIBER_GRACE_MILLIS: then no replica holds the call (`gone`). A publish that fails
   * leaves the resume to the unreachable grace.
   */
  private async republish(owner: string, message: ResumeMessage): Promise<void> {
    const until = Date.now() + NO_SUBSCRIBER_GRACE_MILLIS;
    while (this.waiting.has(message.corr)) {
      if (Date.now() >= until) {
        this.settle({ op: 'reply', corr: message.corr, gone: true });
        return;
      }
      await new Promise((r) => setTimeout(r, REPUBLISH_MILLIS).unref());
      if (!this.waiting.has(message.corr)) return;
      const receivers = await this.publisher
        ?.publish(this.channel(owner), this.sealed(message))
        .catch(() => undefined);
      if (receivers === undefined) {
        this.unreachableAfterGrace(message.corr);
        return;
      }
      if (receivers > 0) return;
    }
  }

  /**
   * Takes `key` once across the replicas for `ttlMillis` ms (Redis `SET NX PX` under
   * `<redis.keyPrefix>:{<identity>}:mrtr:spent:<key>`): SpentStates' one-time use of
   * `requestState` envelopes, and UpstreamRouter's one answer per relayed request (keys
   * `relay-ended:<digest>`). One atomic command: two replicas taking the same key at the same
   * moment never both get true.
   * @param waitForRedis false: undefined at once while the publisher has no connection (Redis
   *   away), instead of the command waiting for a reconnect up to its bound
   * @returns true when this call took it, false when someone had; undefined without Redis or
   *   when Redis did not answer (the caller decides alone then)
   */
  async takeOnce(
    key: string,
    ttlMillis: number,
    waitForRedis = true,
  ): Promise<boolean | undefined> {
    const publisher = this.publisher;
    if (publisher === undefined) return undefined;
    if (!waitForRedis && publisher.status !== 'ready') return undefined;
    try {
      const ttl = Math.max(1, Math.ceil(ttlMillis));
      return (
        (await publisher.set(`${this.channelPrefix}spent:${key}`, '1', 'PX', ttl, 'NX')) === 'OK'
      );
    } catch (err) {
      this.unhealthy((err as Error).message);
      return undefined;
    }
  }

  /**
   * Gives back what `takeOnce` took for `key` (best effort): a retry that could not reach the
   * replica holding its call was never used, and may come again.
   */
  async giveBack(key: string): Promise<void> {
    await this.publisher?.del(`${this.channelPrefix}spent:${key}`).catch(() => 0);
  }

  private unhealthy(reason: string): void {
    if (!this.healthy) return;
    this.healthy = false;
    this.logger.warn(
      `Redis is unreachable (${reason.slice(0, 120)}): a requestState envelope is spent, and a relayed request's answer taken, on this replica only, and a retry held by another replica is not reached, until it is back`,
    );
  }

  private channel(replicaId: string): string {
    return `${this.channelPrefix}${replicaId}`;
  }

  /**
   * A message sealed with the keys of MCP_SESSION_KEYS (MrtrSeal, the gateway identity
   * authenticated): what crosses carries a client's answers and a call's result, and anyone else
   * who can SUBSCRIBE or PUBLISH on the shared Redis must neither read them nor answer a retry in
   * the holder's place (docs/security.md "Answers to relayed requests").
   */
  private sealed(message: ResumeMessage | ReplyMessage | AckMessage): string {
    const payload = { exp: Date.now() + MESSAGE_TTL_MILLIS, m: message };
    return this.seal.seal('handoff', payload);
  }

  /** What a replica of this gateway sealed in `text`; undefined (counted, logged) otherwise. */
  private opened(text: string): ResumeMessage | ReplyMessage | AckMessage | undefined {
    const payload =
      text.length > this.maxMessageChars
        ? undefined
        : this.seal.open('handoff', text, Date.now(), this.maxMessageChars);
    const message = payload?.m;
    if (
      typeof message === 'object' &&
      message !== null &&
      typeof (message as { corr?: unknown }).corr === 'string'
    )
      return message as ResumeMessage | ReplyMessage | AckMessage;
    this.lastDroppedChars = text.length;
    this.drops.count();
    this.metrics?.busMessageDropped('handoff');
    return undefined;
  }

  private receive(text: string): void {
    const message = this.opened(text);
    if (message === undefined) return;
    if (message.op === 'reply') {
      this.settle(message);
      return;
    }
    if (message.op === 'ack') {
      const waiting = this.waiting.get(message.corr);
      if (waiting === undefined) return;
      if (waiting.acked === true) return;
      waiting.acked = true;
      if (waiting.ackTimer !== undefined) clearTimeout(waiting.ackTimer);
      this.watchHolder(waiting.owner, message.corr);
      return;
    }
    if (message.op !== 'resume' || typeof message.key !== 'string') return;
    void this.act(message);
  }

  /** Runs a resume that reached this replica, once its sender is told it arrived. */
  private async act(message: ResumeMessage): Promise<void> {
    const publisher = this.publisher;
    if (publisher === undefined) return;
    const answer = (reply: ReplyMessage | AckMessage): Promise<number | undefined> =>
      publisher.publish(this.channel(message.replyTo), this.sealed(reply)).catch(() => undefined);
    // Acted on only when the acknowledgement reached its sender (a Cluster's count proves
    // nothing, as in resume): one that cannot (Redis failing this replica's publish, the
    // sender's subscriber away) would leave the input taken while its client is told to send
    // it again, and the second sending refused as answered already.
    const acked = await answer({ op: 'ack', corr: message.corr });
    if (acked === undefined || (acked === 0 && !publisher.isCluster)) {
      this.logger.warn(
        'A retry for a parked call could not be acknowledged to its sender; not acted on',
      );
      return;
    }
    if (
      typeof message.sentAtMs === 'number' &&
      Date.now() - message.sentAtMs > STALE_RESUME_MILLIS
    ) {
      // its sender may have told its client to retry: the call stays parked for that retry
      this.logger.warn(
        `A retry for a parked call arrived ${Date.now() - message.sentAtMs} ms after it was sent; not acted on`,
      );
      await answer({ op: 'reply', corr: message.corr, unreachable: true });
      return;
    }
    const handler = this.handlers.get(message.key);
    if (handler === undefined) {
      const replay = this.replayOf(message.key);
      await answer(
        replay === undefined
          ? { op: 'reply', corr: message.corr, gone: true }
          : { op: 'reply', corr: message.corr, value: replay.value },
      );
      return;
    }
    // read before the handler runs: a call that ends with this round releases its key
    const replayable = this.replayable.has(message.key);
    const reply = await handler(message.input).then(
      (value): ReplyMessage => ({ op: 'reply', corr: message.corr, value }),
      (): ReplyMessage => ({ op: 'reply', corr: message.corr, gone: true }),
    );
    if (reply.gone !== true && replayable) this.keepReplay(message.key, reply.value);
    await answer(reply);
  }

  /** The value a resume of `key` ran to, while REPLAY_MILLIS last. */
  private replayOf(key: string): { readonly value: unknown } | undefined {
    this.dropExpiredReplays();
    return this.replays.get(key);
  }

  private keepReplay(key: string, value: unknown): void {
    this.dropExpiredReplays();
    let chars: number;
    try {
      chars = JSON.stringify(value)?.length ?? 0;
    } catch {
      return;
    }
    if (chars > REPLAY_MAX_VALUE_CHARS) return;
    const before = this.replays.get(key);
    if (before !== undefined) this.replayChars -= before.chars;
    this.replays.delete(key);
    this.replays.set(key, { value, chars, until: Date.now() + REPLAY_MILLIS });
    this.replayChars += chars;
    for (const [oldest, kept] of this.replays) {
      if (this.replayChars <= REPLAY_MAX_TOTAL_CHARS) break;
      this.replays.delete(oldest);
      this.replayChars -= kept.chars;
    }
  }

  private dropExpiredReplays(): void {
    const now = Date.now();
    for (const [key, kept] of this.replays) {
      if (kept.until > now) break;
      this.replays.delete(key);
      this.replayChars -= kept.chars;
    }
  }

  /**
   * A holder that acknowledged a resume and then stopped never replies (pub/sub keeps nothing):
   * its channel losing its subscriber tells it (holderStopped), and the resume is `lost` within
   * seconds instead of after the call's whole time. Not on a Cluster, whose subscriber count is
   * one node's.
   */
  private watchHolder(owner: string, corr: string): void {
    const publisher = this.publisher;
    if (publisher === undefined || publisher.isCluster) return;
    const channel = this.channel(owner);
    void holderStopped(
      async () => {
        try {
          const [, count] = (await publisher.pubsub('NUMSUB', channel)) as [string, number];
          return Number(count);
        } catch {
          return undefined;
        }
      },
      () => this.waiting.has(corr),
      NO_SUBSCRIBER_GRACE_MILLIS,
      HOLDER_WATCH_MILLIS,
    ).then((stopped) => {
      if (stopped) this.settle({ op: 'reply', corr, lost: true });
    });
  }

  /**
   * The subscriber lost Redis: a reply the holder publishes meanwhile never arrives, so each
   * resume waited on ends `unreachable` unless its reply comes within the grace (the subscriber
   * back, the holder slower than the outage). Without this a retry whose holder had taken its
   * input waited the whole handoff timeout (the call's time and more) for a reply that was lost.
   */
  private repliesAtRisk(): void {
    for (const corr of this.waiting.keys()) this.unreachableAfterGrace(corr);
  }

  /** Settles the resume waited on as `corr` unreachable unless its reply comes within the grace. */
  private unreachableAfterGrace(corr: string): NodeJS.Timeout {
    const grace = setTimeout(
      () => this.settle({ op: 'reply', corr, unreachable: true }),
      UNREACHABLE_GRACE_MILLIS,
    );
    grace.unref();
    return grace;
  }

  private settle(reply: ReplyMessage): void {
    const waiting = this.waiting.get(reply.corr);
    if (waiting === undefined) return;
    this.waiting.delete(reply.corr);
    clearTimeout(waiting.timer);
    if (waiting.ackTimer !== undefined) clearTimeout(waiting.ackTimer);
    waiting.resolve(
      reply.unreachable === true
        ? { kind: 'unreachable' }
        : reply.lost === true
          ? { kind: 'lost' }
          : reply.gone === true
            ? { kind: 'gone' }
            : { kind: 'ok', value: reply.value },
    );
  }
}
