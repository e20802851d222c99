import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';
import { GatewayProcess, TEST_SESSION_KEYS, type GatewayOptions } from './gateway-process';
import { SHARED_REDIS_URL, deleteKeys, redisClient, uniqueKeyPrefix } from './redis';

/**
 * A round-robin TCP balancer on 127.0.0.1 (node:net): each accepted connection is piped, bytes
 * as they are, to the next backend port in turn, like a plain Kubernetes Service in front of
 * the replicas (docs/operations.md §11 "Several replicas"). It knows nothing of HTTP: a keep-alive
 * connection stays on the replica it landed on, so a test that wants every *request* to pick a
 * replica afresh sends each on a new connection (`oneConnectionPerRequest`).
 */
export class TcpBalancer {
  /** Connections handed to each backend so far, by index into `backends`. */
  readonly connections: number[];
  private next = 0;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly backends: readonly number[],
  ) {
    this.connections = backends.map(() => 0);
  }

  /** Listens on a free port and balances over the given backend ports, in order. */
  static async start(backends: readonly number[]): Promise<TcpBalancer> {
    if (backends.length === 0) throw new Error('a balancer needs at least one backend');
    const holder: { balancer?: TcpBalancer } = {};
    const server = createServer((client) => holder.balancer?.accept(client));
    const balancer = new TcpBalancer(server, backends);
    holder.balancer = balancer;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return balancer;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** `http://127.0.0.1:<port><path>`; `/mcp` by default. */
  url(path = '/mcp'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Closes the listener and every piped connection. */
  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    const index = this.next;
    this.next = (this.next + 1) % this.backends.length;
    this.connections[index] = (this.connections[index] ?? 0) + 1;
    const backend = connect(this.backends[index] ?? 0, '127.0.0.1');
    for (const socket of [client, backend]) {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      // a reset on one side ends both; the test sees the broken exchange, never a hang
      socket.on('error', () => {
        client.destroy();
        backend.destroy();
      });
    }
    client.pipe(backend);
    backend.pipe(client);
  }
}

/** No keep-alive: every request opens its own connection, so the balancer picks a replica per request. */
const noKeepAlive = new Agent({ pipelining: 0 });

/**
 * A `fetch` for SDK client transports (`{ fetch: oneConnectionPerRequest }`) and raw requests
 * that opens a new TCP connection per request, so consecutive requests alternate replicas.
 */
export const oneConnectionPerRequest = ((input: string | URL | Request, init?: RequestInit) =>
  undiciFetch(input as never, {
    ...(init as object),
    dispatcher: noKeepAlive,
  })) as unknown as typeof fetch;

export interface ReplicasOptions {
  /** The `mcp:` tree every replica gets; `redis.keyPrefix` is set to a fresh prefix unless given. */
  readonly mcp: Record<string, unknown>;
  /** Extra env for every replica (REDIS_URL and MCP_SESSION_KEYS are set unless given). */
  readonly env?: Record<string, string | undefined>;
  /** How many replicas (default 2). */
  readonly count?: number;
  /** Wait for readiness on every replica (default true). */
  readonly waitReady?: boolean;
}

/**
 * Gateway replicas sharing the test Redis and one session key, behind a `TcpBalancer`:
 * the deployment docs/operations.md §11 "Several replicas" describes. `url` is the balancer's
 * `/mcp`.
 */
export class BalancedGateways {
  private constructor(
    readonly replicas: readonly GatewayProcess[],
    readonly balancer: TcpBalancer,
    /** The Redis key prefix the replicas share (deleted on stop). */
    readonly keyPrefix: string,
  ) {}

  /** The balancer's `/mcp`: what agents use. */
  get url(): string {
    return this.balancer.url('/mcp');
  }

  /** Starts the replicas one after another (the machine is shared), then the balancer. */
  static async start(options: ReplicasOptions): Promise<BalancedGateways> {
    const given = options.mcp.redis as Record<string, unknown> | undefined;
    const keyPrefix = typeof given?.keyPrefix === 'string' ? given.keyPrefix : uniqueKeyPrefix();
    const gatewayOptions: GatewayOptions = {
      mcp: { ...options.mcp, redis: { ...given, keyPrefix } },
      env: { REDIS_URL: SHARED_REDIS_URL, MCP_SESSION_KEYS: TEST_SESSION_KEYS, ...options.env },
      waitReady: options.waitReady ?? true,
    };
    const replicas: GatewayProcess[] = [];
    try {
      for (let i = 0; i < (options.count ?? 2); i++)
        replicas.push(await GatewayProcess.start(gatewayOptions));
      const balancer = await TcpBalancer.start(replicas.map((r) => r.mcpPort));
      return new BalancedGateways(replicas, balancer, keyPrefix);
    } catch (err) {
      for (const r of replicas) await r.stop();
      throw err;
    }
  }

  /** Stops the balancer, then every replica, then deletes the shared Redis keys. */
  async stop(): Promise<void> {
    await this.balancer.stop();
    for (const r of this.replicas) await r.stop();
    const redis = redisClient();
    try {
      await deleteKeys(redis, this.keyPrefix);
    } finally {
      redis.disconnect();
    }
  }

  /** Every replica's output, labelled, for failure messages. */
  get output(): string {
    return this.replicas.map((r, i) => `--- replica ${i} ---\n${r.output}`).join('\n');
  }
}
