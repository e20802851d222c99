import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { waitFor } from './gateway-process';
import { freePort } from './redis';

/**
 * Real Redis topologies for the failover suites (docs/operations.md §5 "Redis: one server,
 * Sentinel or Cluster"): processes of Debian's redis-server (and its sentinel mode) on
 * 127.0.0.1, each in a scratch dir, killed with SIGKILL to fail.
 */
class RedisProcess {
  constructor(
    readonly port: number,
    readonly child: ChildProcess,
  ) {}

  kill(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return Promise.resolve();
    this.child.kill('SIGKILL');
    return new Promise((r) => this.child.once('exit', () => r()));
  }
}

async function ping(port: number): Promise<boolean> {
  const probe = new Redis({
    port,
    host: '127.0.0.1',
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

async function startProcess(
  args: readonly string[],
  port: number,
  dir: string,
): Promise<RedisProcess> {
  // a replica's first sync goes through an RDB file: one per node, in the set's scratch dir
  const files = ['--dir', dir, '--dbfilename', `dump-${port}.rdb`];
  const child = spawn('redis-server', [...args, ...files], { stdio: 'ignore' });
  await waitFor(
    () => ping(port),
    10_000,
    () => `redis-server on ${port} did not start`,
  );
  return new RedisProcess(port, child);
}

/** redis-cli against one node on 127.0.0.1; its output, trimmed. */
export function cli(port: number, ...args: string[]): string {
  const out = spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], {
    encoding: 'utf8',
  });
  return out.stdout.trim();
}

const BASE = [
  '--bind',
  '127.0.0.1',
  '--save',
  '',
  '--appendonly',
  'no',
  // a replica's first sync starts at once (Redis 7 waits 5 s for more replicas by default)
  '--repl-diskless-sync-delay',
  '0',
];

/** Waits until every replica among these ports has its link to its master up. */
async function replicasSynced(ports: readonly number[]): Promise<void> {
  await waitFor(
    () =>
      Promise.resolve(
        ports.every((port) => {
          const info = cli(port, 'INFO', 'replication');
          return info.includes('role:master') || info.includes('master_link_status:up');
        }),
      ),
    20_000,
    () => 'a replica did not finish its first sync with its master',
  );
}

/** A master, one replica and three sentinels watching them (quorum 2). */
export class SentinelSet {
  private constructor(
    readonly dir: string,
    readonly masterName: string,
    readonly nodes: RedisProcess[],
    readonly sentinels: RedisProcess[],
  ) {}

  /** `host:port` of each sentinel, as `mcp.redis.sentinels` takes them. */
  get sentinelEntries(): string[] {
    return this.sentinels.map((s) => `127.0.0.1:${s.port}`);
  }

  static async start(masterName = 'gw'): Promise<SentinelSet> {
    const dir = mkdtempSync(join(tmpdir(), 'mcpgw-sentinel-'));
    const masterPort = await freePort();
    const master = await startProcess(['--port', String(masterPort), ...BASE], masterPort, dir);
    const replicaPort = await freePort();
    const replica = await startProcess(
      ['--port', String(replicaPort), ...BASE, '--replicaof', '127.0.0.1', String(masterPort)],
      replicaPort,
      dir,
    );
    await replicasSynced([replicaPort]);
    const sentinels: RedisProcess[] = [];
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      const file = join(dir, `sentinel-${i}.conf`);
      writeFileSync(
        file,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor ${masterName} 127.0.0.1 ${masterPort} 2`,
          `sentinel down-after-milliseconds ${masterName} 1000`,
          `sentinel failover-timeout ${masterName} 5000`,
          `sentinel parallel-syncs ${masterName} 1`,
          '',
        ].join('\n'),
      );
      sentinels.push(await startProcess([file, '--sentinel'], port, dir));
    }
    const set = new SentinelSet(dir, masterName, [master, replica], sentinels);
    // every sentinel knows the replica and the other sentinels before a test fails anything
    await waitFor(
      () =>
        Promise.resolve(
          sentinels.every((s) => {
            const info = cli(s.port, 'SENTINEL', 'MASTER', masterName);
            return (
              /num-slaves\s+1/.test(info.replace(/\n/g, ' ')) &&
              /num-other-sentinels\s+2/.test(info.replace(/\n/g, ' '))
            );
          }),
        ),
      20_000,
      () => 'the sentinels did not discover each other and the replica',
    );
    return set;
  }

  /** The port the sentinels name as the master now. */
  masterPort(): number {
    const [, port] = cli(
      this.sentinels[0]!.port,
      'SENTINEL',
      'GET-MASTER-ADDR-BY-NAME',
      this.masterName,
    ).split('\n');
    return Number(port);
  }

  /** The port of the replica (the node the sentinels do not name as the master). */
  replicaPort(): number {
    const master = this.masterPort();
    return this.nodes.find((n) => n.port !== master)!.port;
  }

  /** A client of the master the sentinels name now. */
  masterClient(): Redis {
    return new Redis({ host: '127.0.0.1', port: this.masterPort(), maxRetriesPerRequest: 1 });
  }

  /** Kills the master with SIGKILL and waits until the sentinels promoted the replica. */
  async failOver(): Promise<{ from: number; to: number }> {
    const from = this.masterPort();
    await this.nodes.find((n) => n.port === from)!.kill();
    await waitFor(
      () =>
        Promise.resolve(
          this.masterPort() !== from && cli(this.masterPort(), 'ROLE').split('\n')[0] === 'master',
        ),
      30_000,
      () => 'the sentinels did not promote the replica',
    );
    return { from, to: this.masterPort() };
  }

  async stop(): Promise<void> {
    await Promise.all([...this.sentinels, ...this.nodes].map((p) => p.kill()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A Redis Cluster of three masters, each with `replicas` replicas, created with redis-cli. */
export class RedisClusterSet {
  private constructor(
    readonly dir: string,
    readonly nodes: RedisProcess[],
  ) {}

  /** `host:port` of each node, as `mcp.redis.clusterNodes` takes them. */
  get nodeEntries(): string[] {
    return this.nodes.map((n) => `127.0.0.1:${n.port}`);
  }

  static async start(replicas = 0): Promise<RedisClusterSet> {
    const dir = mkdtempSync(join(tmpdir(), 'mcpgw-cluster-'));
    const nodes: RedisProcess[] = [];
    try {
      return await RedisClusterSet.create(dir, nodes, replicas);
    } catch (err) {
      // a set that did not come up leaves no node behind
      await Promise.all(nodes.map((n) => n.kill()));
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }

  private static async create(
    dir: string,
    nodes: RedisProcess[],
    replicas: number,
  ): Promise<RedisClusterSet> {
    for (let i = 0; i < 3 * (1 + replicas); i++) {
      const port = await freePort();
      // the cluster bus is port + 10000 unless named: that is in the kernel's ephemeral range,
      // where a busy machine's outgoing connection can hold it and the node does not start
      const busPort = await freePort();
      nodes.push(
        await startProcess(
          [
            '--port',
            String(port),
            '--cluster-port',
            String(busPort),
            ...BASE,
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            join(dir, `nodes-${port}.conf`),
            '--cluster-node-timeout',
            '1000',
            // a replica of an idle master may take over however long ago it last heard from it
            '--cluster-replica-validity-factor',
            '0',
          ],
          port,
          dir,
        ),
      );
    }
    const create = spawnSync(
      'redis-cli',
      [
        '--cluster',
        'create',
        ...nodes.map((n) => `127.0.0.1:${n.port}`),
        '--cluster-replicas',
        String(replicas),
        '--cluster-yes',
      ],
      { encoding: 'utf8' },
    );
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stdout}`);
    await waitFor(
      () =>
        Promise.resolve(
          nodes.every((n) => cli(n.port, 'CLUSTER', 'INFO').includes('cluster_state:ok')),
        ),
      20_000,
      () => 'the cluster did not reach cluster_state:ok',
    );
    await replicasSynced(nodes.map((n) => n.port));
    return new RedisClusterSet(dir, nodes);
  }

  /** The port of the master serving the slot of `key`, as a living node sees it. */
  masterOf(key: string): number {
    const alive = this.nodes.find((n) => n.child.exitCode === null && n.child.signalCode === null)!;
    return this.masterOfVia(alive.port, key);
  }

  /** The port of the replica of the master serving `key`'s slot. */
  replicaOf(key: string): number {
    const master = this.masterOf(key);
    const lines = cli(master, 'CLUSTER', 'NODES').split('\n');
    const id = lines.find((l) => l.includes('myself'))!.split(' ')[0];
    const replica = lines.find((l) => l.split(' ')[3] === id);
    if (replica === undefined) throw new Error(`the master on ${master} has no replica`);
    return Number(replica.split(' ')[1]!.split(':')[1]!.split('@')[0]);
  }

  /** Kills the master of `key`'s slot and waits until its replica took the slot over. */
  async failOver(key: string): Promise<{ from: number; to: number }> {
    const from = this.masterOf(key);
    await this.nodes.find((n) => n.port === from)!.kill();
    const alive = this.nodes.find((n) => n.port !== from)!;
    let to = from;
    await waitFor(
      () => {
        try {
          to = this.masterOfVia(alive.port, key);
        } catch {
          return Promise.resolve(false);
        }
        return Promise.resolve(
          to !== from && cli(alive.port, 'CLUSTER', 'INFO').includes('cluster_state:ok'),
        );
      },
      30_000,
      () => 'the cluster did not promote the replica',
    );
    return { from, to };
  }

  private masterOfVia(port: number, key: string): number {
    const slot = Number(cli(port, 'CLUSTER', 'KEYSLOT', key));
    for (const line of cli(port, 'CLUSTER', 'NODES').split('\n')) {
      const parts = line.split(' ');
      if (!parts[2]?.includes('master') || parts[2].includes('fail') || parts[7] !== 'connected')
        continue;
      for (const range of parts.slice(8)) {
        const [lo, hi] = range.split('-').map(Number);
        if (slot >= lo! && slot <= (hi ?? lo)!)
          return Number(parts[1]!.split(':')[1]!.split('@')[0]);
      }
    }
    throw new Error(`no master serves slot ${slot}`);
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.kill()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
