import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import Redis from 'ioredis';
import { waitFor } from './gateway-process';
import { stablePort } from './ports';

/** The shared Redis the suites use (started by .ci/run when it is not running). */
export const SHARED_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A key prefix of its own per test, so tests never see each other's copies. */
export function uniqueKeyPrefix(): string {
  return `mcpgw-test-${randomBytes(6).toString('hex')}`;
}

export function redisClient(url = SHARED_REDIS_URL): Redis {
  return new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 1 });
}

/** Deletes every key under a test prefix. */
export async function deleteKeys(client: Redis, prefix: string): Promise<void> {
  const keys = await client.keys(`${prefix}:*`);
  if (keys.length > 0) await client.del(...keys);
}

/** A free port that stays free while a server of the test is down on it (support/ports.ts). */
export const freePort = stablePort;

/** The folders of this worker's own Redis servers, removed when the worker exits. */
const ownRedisDirs: string[] = [];
process.once('exit', () => {
  for (const dir of ownRedisDirs) rmSync(dir, { recursive: true, force: true });
});

/** A redis-server of the test's own on a free port, for outages and recoveries. */
export class OwnRedis {
  /**
   * Where its RDB file goes: a replica's first sync writes one even with `--save ""`, and a
   * server started on that port later would load it. A folder of each instance's own: its
   * restarts see what it wrote (as one server restarted would), no later server on the port
   * (in this run or a later one on the same machine) starts from another test's data.
   */
  private readonly dir = OwnRedis.ownDir();

  private constructor(
    readonly port: number,
    private child: ChildProcess | undefined,
  ) {}

  private static ownDir(): string {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-gateway-test-redis-'));
    ownRedisDirs.push(dir);
    return dir;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(port?: number): Promise<OwnRedis> {
    const own = new OwnRedis(port ?? (await freePort()), undefined);
    await own.restart();
    return own;
  }

  /** Starts the server again (one still running is stopped first: never two, never one left behind). */
  async restart(): Promise<void> {
    await this.stop();
    this.child = spawn(
      'redis-server',
      [
        ...['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        // a replica's first sync goes through an RDB file (a failover pair): kept out of the
        // working tree, in this instance's own folder
        ...['--dir', this.dir, '--dbfilename', 'dump.rdb'],
      ],
      {
        stdio: 'ignore',
      },
    );
    const probe = new Redis(this.url, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    try {
      await waitFor(
        async () => {
          try {
            if (probe.status !== 'ready') await probe.connect();
            return (await probe.ping()) === 'PONG';
          } catch {
            return false;
          }
        },
        5000,
        () => `redis-server on ${this.port} did not start`,
      );
    } finally {
      probe.disconnect();
    }
  }

  /** SIGSTOP: a Redis that hangs with its connections open (a paused VM, a black hole). */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  /** SIGCONT after pause. */
  resume(): void {
    this.child?.kill('SIGCONT');
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
  }
}

/** A TCP server that accepts connections and never answers: a Redis that hangs. */
export class SilentTcp {
  private constructor(
    private readonly server: Server,
    private readonly sockets: Set<Socket>,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  static async start(answer?: Buffer): Promise<SilentTcp> {
    const sockets = new Set<Socket>();
    const server = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
      if (answer) socket.on('data', () => socket.write(answer));
    });
    const holder = new SilentTcp(server, sockets);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    return holder;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
