import Redis, { Cluster } from 'ioredis';
import { ADMIN_TOKEN, admin, waitForState, waitForTool } from '../admin/admin-support';
import { V2MrtrUpstream } from '../mrtr/mrtr-upstreams';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { GatewayProcess, TEST_SESSION_KEYS, waitFor } from '../support/gateway-process';
import { V2Upstream } from '../support/mcp-upstreams';
import { modernRequest } from '../support/modern-rpc';
import { uniqueKeyPrefix } from '../support/redis';
import { cli, RedisClusterSet, SentinelSet } from '../support/redis-topologies';
import { callTool } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

const IDENTITY = 'mcp-gateway-test';
const TASKS = 'io.modelcontextprotocol/tasks';
/** A 2026 client that answers elicitations and runs tasks. */
const CAPS = { elicitation: { form: {} }, extensions: { [TASKS]: {} } };

/** One topology under test: how the gateway is told, how it fails over, how to read its data. */
interface Topology {
  readonly redis: Record<string, unknown>;
  failOver(): Promise<{ from: number; to: number }>;
  /** A client of the data as it is now (the master the sentinels name, or the cluster). */
  data(): Redis | Cluster;
  /** Keys under `pattern` in the slot of the gateway's `{identity}` keys. */
  keys(pattern: string): Promise<string[]>;
  /**
   * Deletes a hash field on the replica that a failover will promote, not on its master: a
   * write the master acknowledged that never reached the replica (replication is asynchronous).
   * Sentinel only: a Cluster replica takes no write at all (it answers MOVED), and a master's
   * stream reaches its replica even when the master is killed right after the write.
   */
  loseOnReplica?(key: string, field: string): void;
  stop(): Promise<void>;
}

/** KEYS on one node, through a connection of its own that ends with it. */
async function keysOn(node: Redis, pattern: string): Promise<string[]> {
  try {
    return await node.keys(pattern);
  } finally {
    node.disconnect();
  }
}

async function sentinelTopology(): Promise<Topology> {
  const set = await SentinelSet.start('gw');
  let client: Redis | undefined;
  return {
    redis: { sentinels: set.sentinelEntries, masterName: 'gw' },
    failOver: () => set.failOver(),
    loseOnReplica(key, field) {
      const port = set.replicaPort();
      cli(port, 'CONFIG', 'SET', 'replica-read-only', 'no');
      expect(cli(port, 'HDEL', key, field)).toBe('1');
      // the version counter's increment of that write was lost with it
      cli(port, 'HINCRBY', `${key}:meta`, 'version', '-1');
    },
    data() {
      client?.disconnect();
      client = set.masterClient();
      return client;
    },
    keys: (pattern) => keysOn(set.masterClient(), pattern),
    async stop() {
      client?.disconnect();
      await set.stop();
    },
  };
}

async function clusterTopology(keyPrefix: string): Promise<Topology> {
  // three masters, each with a replica: a master's death is a failover, not a loss of slots
  const set = await RedisClusterSet.start(1);
  const tagged = `${keyPrefix}:{${IDENTITY}}:admin:upstreams`;
  let client: Cluster | undefined;
  return {
    redis: { clusterNodes: set.nodeEntries },
    failOver: () => set.failOver(tagged),
    data() {
      client?.disconnect();
      client = new Cluster(
        set.nodeEntries.map((e) => ({ host: '127.0.0.1', port: Number(e.split(':')[1]) })),
        { redisOptions: { maxRetriesPerRequest: 1 } },
      );
      return client;
    },
    keys: (pattern) =>
      keysOn(new Redis({ host: '127.0.0.1', port: set.masterOf(tagged) }), pattern),
    async stop() {
      client?.disconnect();
      await set.stop();
    },
  };
}

/** The retry of `v2__confirm_deploy {env}` answering its elicitation, with its requestState. */
function confirmRetry(env: string, requestState: unknown): Record<string, unknown> {
  return {
    name: 'v2__confirm_deploy',
    arguments: { env },
    inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
    requestState,
  };
}

const jobs = manifest('sen', [
  tool({ name: 'sen.echo' }),
  tool({ name: 'sen.limited' }),
  { ...tool({ name: 'sen.report' }), execution: { taskSupport: 'optional' } },
]);
const kept = manifest('lg', [tool({ name: 'lg.lookup' })]);

/**
 * The gateway on Redis Sentinel and on Redis Cluster, the master killed while calls run
 * (docs/operations.md §5 "Redis: one server, Sentinel or Cluster"): after the failover every
 * replica finds the new master, and what lives in Redis keeps working across the replicas —
 * last good copies (a new replica warm-starts from them), registrations, rate-limit buckets,
 * tasks, spent multi round-trip envelopes. On the Cluster every script and transaction runs
 * on keys of one slot, or it would answer CROSSSLOT.
 */
describe.each([
  ['Redis Sentinel (a master, a replica, three sentinels)', 'sentinel'],
  ['Redis Cluster (three masters, each with a replica)', 'cluster'],
])('%s: the master killed during load', (_name, kind) => {
  const keyPrefix = uniqueKeyPrefix();
  const registrations = `${keyPrefix}:{${IDENTITY}}:admin:upstreams`;
  let topology: Topology;
  let service: TestToolService;
  let keptService: TestToolService;
  let v2: V2MrtrUpstream;
  let registered: V2Upstream;
  let a: GatewayProcess;
  let b: GatewayProcess;
  let late: GatewayProcess | undefined;
  const loadFailures: string[] = [];
  let loadCalls = 0;
  let spentBefore: Record<string, unknown>;
  let taskBefore: string;
  let failover: { from: number; to: number };

  const mcp = () => ({
    ...gatewayConfig([bundle('sen', service, 'sen.'), bundle('lg', keptService, 'lg.')], {
      redis: { keyPrefix, commandTimeoutMillis: 1000, ...topology.redis },
      registry: { refreshIntervalSeconds: 2 },
      upstreams: [{ id: 'v2', url: v2.url, timeouts: { callMillis: 30_000 } }],
    }),
    http: { modernEra: true },
    rateLimits: { perTool: { capacity: 1000, refillPerSecond: 0.001 }, store: 'redis' },
    tasks: { pollIntervalMillis: 250, ttlSeconds: 300 },
  });
  const start = async (): Promise<GatewayProcess> => {
    const gateway = GatewayProcess.spawn({
      mcp: mcp(),
      env: { MCP_ADMIN_TOKEN: ADMIN_TOKEN, MCP_SESSION_KEYS: TEST_SESSION_KEYS },
    });
    await gateway.waitForListening(90_000);
    await gateway.waitForReady(90_000);
    return gateway;
  };

  const modern = (g: GatewayProcess, method: string, params: Record<string, unknown>) =>
    modernRequest(g.mcpUrl, method, params, CAPS);

  async function settledTask(g: GatewayProcess, taskId: string): Promise<any> {
    let last: any;
    await waitFor(
      async () => {
        last = (await modern(g, 'tasks/get', { taskId })).json?.result;
        return last?.status === 'completed' || last?.status === 'failed';
      },
      20_000,
      () => `task ${taskId} did not settle: ${JSON.stringify(last)}`,
    );
    return last;
  }

  async function redisUp(g: GatewayProcess): Promise<boolean> {
    const res = await fetch(`${g.managementUrl}/actuator/toolBundles`);
    return ((await res.json()) as { redis?: { available?: boolean } }).redis?.available === true;
  }

  beforeAll(async () => {
    topology = kind === 'sentinel' ? await sentinelTopology() : await clusterTopology(keyPrefix);
    service = await TestToolService.start(jobs);
    service.tools.set('sen.report', () => ({ body: { rows: 3 }, delayMs: 300 }));
    keptService = await TestToolService.start(kept);
    [v2, registered] = await Promise.all([V2MrtrUpstream.start(), V2Upstream.start()]);
    [a, b] = await Promise.all([start(), start()]);
    await waitFor(
      async () => (await redisUp(a)) && (await redisUp(b)),
      20_000,
      () => `Redis never available:\n${a.output}\n${b.output}`,
    );

    // before the failover: a registration, a task, an envelope spent
    expect(
      (await admin(a, 'POST', '/admin/upstreams', { id: 'reg', url: registered.url })).status,
    ).toBe(202);
    await waitForState(b, 'reg', 'ACTIVE', 30_000);
    if (topology.loseOnReplica !== undefined) {
      // a registration the master acknowledged and the replica never got
      expect(
        (await admin(a, 'POST', '/admin/upstreams', { id: 'lost', url: registered.url })).status,
      ).toBe(202);
      await waitForState(b, 'lost', 'ACTIVE', 30_000);
      await waitFor(
        async () => (await topology.data().hget(registrations, 'lost')) !== null,
        10_000,
        () => 'the registration did not reach the replica',
      );
      topology.loseOnReplica(registrations, 'lost');
    }
    const created = await modern(a, 'tools/call', { name: 'sen.report', arguments: {} });
    taskBefore = created.json.result.taskId as string;
    await settledTask(b, taskBefore);
    const first = await modern(a, 'tools/call', {
      name: 'v2__confirm_deploy',
      arguments: { env: 'before' },
    });
    spentBefore = confirmRetry('before', first.json.result.requestState);
    const spent = await modern(a, 'tools/call', spentBefore);
    expect(spent.json.result.resultType).toBe('complete');

    // the failover, while both replicas serve calls
    let loading = true;
    const load = (g: GatewayProcess) =>
      (async () => {
        while (loading) {
          loadCalls += 1;
          const call = await callTool(g.mcpUrl, 'sen.echo', { n: loadCalls }).catch(
            (err: Error) => ({ error: err.message }),
          );
          if (!('result' in call && call.result && !(call.result as { isError?: boolean }).isError))
            loadFailures.push(JSON.stringify(call).slice(0, 200));
          await new Promise((r) => setTimeout(r, 20));
        }
      })();
    const loads = [load(a), load(b)];
    failover = await topology.failOver();
    // both replicas find the new master (ioredis through the sentinels, or the cluster's slots)
    await waitFor(
      async () => (await redisUp(a)) && (await redisUp(b)) && loadCalls >= 40,
      // a reconnect through the sentinels backs off up to 5 s an attempt: generous on a
      // loaded machine, still a bound
      60_000,
      () => `Redis not available again:\n${a.output}\n${b.output}`,
    );
    loading = false;
    await Promise.all(loads);
    // each use has a connection of its own (libs/redis/src/redis-uses.ts); on a loaded
    // machine the last may reach the new master a moment after the first: the checks below
    // start once a task made on one replica is read on the other, and a spent envelope is
    // refused across them (bounded: a connection that never comes back fails here)
    await waitFor(
      async () => {
        const probe = await modern(b, 'tools/call', { name: 'sen.report', arguments: {} });
        const taskId = probe.json?.result?.taskId as string | undefined;
        return (
          taskId !== undefined &&
          (await modern(a, 'tasks/get', { taskId })).json?.result?.taskId === taskId
        );
      },
      30_000,
      () => `tasks not shared again after the failover:\n${a.output}`,
    );
    await waitFor(
      async () => {
        const first = await modern(a, 'tools/call', {
          name: 'v2__confirm_deploy',
          arguments: { env: 'probe' },
        });
        const params = confirmRetry('probe', first.json.result.requestState);
        await modern(a, 'tools/call', params);
        return /already used/.test(
          String((await modern(b, 'tools/call', params)).json?.error?.message),
        );
      },
      30_000,
      () => `spent envelopes not shared again after the failover:\n${b.output}`,
    );
  }, 240_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop(), late?.stop()]);
    await Promise.all([service?.stop(), keptService?.stop(), v2?.stop(), registered?.stop()]);
    await topology?.stop();
  }, 60_000);

  // a rate-limit take waits for Redis at most commandTimeoutMillis, then counts in memory
  it('the load never failed while the master was replaced', () => {
    expect(failover.to).not.toBe(failover.from);
    expect(loadCalls).toBeGreaterThanOrEqual(40);
    expect(loadFailures).toEqual([]);
  });

  it('last good copies are on the new master: a replica started with its Tool Service down warm-starts from them', async () => {
    await keptService.stop();
    late = await start();
    const status = (await (await fetch(`${late.managementUrl}/actuator/toolBundles`)).json()) as {
      bundles: { id: string; status: string; toolCount: number }[];
    };
    expect(status.bundles.find((x) => x.id === 'lg')).toMatchObject({ toolCount: 1 });
    // and what the replicas held was written back once they reached the new master (on a busy
    // machine a replica may notice the new master only at its next command or slot refresh)
    await waitFor(
      () => /Redis connected again: \d+ last good cop/.test(`${a.output}${b.output}`),
      30_000,
      () => `no replica wrote its last good copies back:\n${a.output}\n${b.output}`,
    );
    const call = await callTool(late.mcpUrl, 'lg.lookup', {});
    expect(call.error).toBeUndefined();
  });

  it('registrations: the one made before is served by a replica started after; one made after reaches the other replica', async () => {
    await waitForTool(late!, 'reg__add', true, 30_000);
    expect(
      (
        await admin(b, 'POST', '/admin/upstreams', {
          id: 'after',
          url: registered.url,
          namePrefix: 'after__',
        })
      ).status,
    ).toBe(202);
    await waitForState(a, 'after', 'ACTIVE', 30_000);
    await waitForTool(a, 'after__add', true, 30_000);
  });

  // Sentinel only (Topology.loseOnReplica says why); the rule is the same on a Cluster, and the
  // registration store's script is tried on its own in test/admin/registration-store.e2e-spec.ts
  (kind === 'sentinel' ? it : it.skip)(
    'a registration the failover lost is written back by the replicas that applied it',
    async () => {
      await waitFor(
        async () => (await topology.data().hget(registrations, 'lost')) !== null,
        20_000,
        () => `not written back:\n${a.output}`,
      );
      expect(`${a.output}${b.output}`).toMatch(
        /registration store is served by another Redis master.*1 registrations written back/,
      );
      await waitForTool(late!, 'lost__add', true, 30_000);
    },
  );

  it('tasks: the one created before is read on either replica; one created after too', async () => {
    expect((await modern(a, 'tasks/get', { taskId: taskBefore })).json.result.status).toBe(
      'completed',
    );
    const created = await modern(b, 'tools/call', { name: 'sen.report', arguments: {} });
    const taskId = created.json.result.taskId as string;
    expect((await settledTask(a, taskId)).status).toBe('completed');
  });

  it('spent envelopes: the one spent before is refused on the other replica; one spent after too', async () => {
    const replay = await modern(b, 'tools/call', spentBefore);
    expect(replay.json.error).toMatchObject({ code: -32602 });
    expect(replay.json.error.message).toMatch(/already used/);
    const first = await modern(b, 'tools/call', {
      name: 'v2__confirm_deploy',
      arguments: { env: 'after' },
    });
    const params = confirmRetry('after', first.json.result.requestState);
    expect((await modern(b, 'tools/call', params)).json.result.resultType).toBe('complete');
    const again = await modern(a, 'tools/call', params);
    expect(again.json.error?.message).toMatch(/already used/);
  });

  it('rate-limit buckets: calls on both replicas take from one bucket on the new master', async () => {
    for (const g of [a, b, a])
      expect((await callTool(g.mcpUrl, 'sen.limited', {})).error).toBeUndefined();
    const [key] = await topology.keys(`${keyPrefix}:{${IDENTITY}}:ratelimit*sen.limited*`);
    expect(key).toBeDefined();
    const data = topology.data();
    const tokens = Number(await data.hget(key!, 'tokens'));
    expect(tokens).toBeGreaterThan(996.9);
    expect(tokens).toBeLessThan(997.1);
  });
});
