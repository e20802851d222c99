import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import {
  deleteKeys,
  OwnRedis,
  redisClient,
  SHARED_REDIS_URL,
  SilentTcp,
  uniqueKeyPrefix,
} from '../support/redis';
import { callTool, rpc } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

/**
 * Redis is never on the request path and never a single point of failure (README.md "Never losing a
 * tool: last-good copies, Redis and what operators see"): a
 * Redis that is down, silent or talking garbage is a cache miss, logged once per transition,
 * visible in the status endpoint, and fails no request, boot or refresh.
 */
describe('Redis outages are cache misses', () => {
  const shared = redisClient();
  const track = stopAfterEach();
  const prefixes: string[] = [];
  afterEach(async () => {
    for (const p of prefixes.splice(0)) await deleteKeys(shared, p);
  });
  afterAll(() => shared.disconnect());

  const fast = { refreshIntervalSeconds: 1, refreshJitterSeconds: 0 };
  const redisSettings = (keyPrefix: string) => ({
    keyPrefix,
    commandTimeoutMillis: 200,
    connectTimeoutMillis: 400,
  });
  const count = (text: string, needle: string): number => text.split(needle).length - 1;

  async function gatewayWith(
    redisUrl: string,
    service: TestToolService,
    keyPrefix = uniqueKeyPrefix(),
  ): Promise<GatewayProcess> {
    prefixes.push(keyPrefix);
    return track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('ins', service, 'ins.')], {
          registry: fast,
          redis: redisSettings(keyPrefix),
        }),
        env: { REDIS_URL: redisUrl },
        waitReady: true,
      }),
    );
  }

  it('Redis down at boot and for several cycles: serves from memory, says so once, and shares again when Redis returns', async () => {
    const service = track(
      await TestToolService.start(manifest('ins', [tool({ name: 'ins.a' })], 'r1')),
    );
    const redis = await OwnRedis.start();
    await redis.stop();
    const started = Date.now();
    const gateway = await gatewayWith(redis.url, service);
    // a boot that waited for Redis would never be ready (start gives up at 60 s); the bound
    // is loose so that a loaded 2-core CI runner does not break it
    expect(Date.now() - started).toBeLessThan(20_000);
    expect((await callTool(gateway.mcpUrl, 'ins.a')).result.isError).toBeUndefined();
    await waitFor(async () => (await gateway.bundleStatus('ins')).lastSuccessAt !== null);
    const view = await gateway.toolBundles();
    expect(view.redis).toMatchObject({
      configured: true,
      available: false,
      lastFailureReason: 'RedisConnectionError',
    });
    expect(view.bundles[0]).toMatchObject({ status: 'healthy' });
    await new Promise((r) => setTimeout(r, 2500)); // several refresh cycles and reconnect attempts
    await gateway.waitForOutput('Redis unavailable');
    expect(count(gateway.output, 'Redis unavailable')).toBe(1);

    await redis.restart();
    track(redis);
    await waitFor(async () => (await gateway.toolBundles()).redis.available === true, 8000);
    await gateway.waitForOutput('Redis is reachable again');
    expect(count(gateway.output, 'Redis is reachable again')).toBe(1);
    // the failure is over: the status no longer names one
    expect((await gateway.toolBundles()).redis).toEqual({
      configured: true,
      available: true,
      lastFailureReason: null,
    });
    const probe = redisClient(redis.url);
    try {
      await waitFor(async () => (await probe.keys('*:manifest')).length === 1, 5000);
    } finally {
      probe.disconnect();
    }
  });

  it('a Redis that accepts connections and never answers: the boot and every call go on', async () => {
    const service = track(
      await TestToolService.start(manifest('ins', [tool({ name: 'ins.a' })], 'r1')),
    );
    const silent = track(await SilentTcp.start());
    const started = Date.now();
    const gateway = await gatewayWith(silent.url, service);
    // a boot that waited for Redis would never be ready (start gives up at 60 s); the bound
    // is loose so that a loaded 2-core CI runner does not break it
    expect(Date.now() - started).toBeLessThan(20_000);
    const list = await rpc(gateway.mcpUrl, 'tools/list');
    expect(list.json.result.tools).toHaveLength(1);
    expect((await callTool(gateway.mcpUrl, 'ins.a')).result.isError).toBeUndefined();
    await new Promise((r) => setTimeout(r, 2000));
    expect((await gateway.toolBundles()).redis.available).toBe(false);
    await gateway.waitForOutput('Redis unavailable');
    expect(count(gateway.output, 'Redis unavailable')).toBe(1);
    expect(await gateway.bundleStatus('ins')).toMatchObject({
      status: 'healthy',
      consecutiveFailures: 0,
    });
  });

  it('a Redis that hangs while the gateway runs: after one command timed out, calls count their rate limit in memory at once, and the buckets are shared again when it answers', async () => {
    const service = track(await TestToolService.start(manifest('ins', [tool({ name: 'ins.a' })])));
    const own = await OwnRedis.start();
    track({ stop: () => (own.resume(), own.stop()) });
    const keyPrefix = uniqueKeyPrefix();
    const gateway = track(
      await GatewayProcess.start({
        mcp: {
          ...gatewayConfig([bundle('ins', service, 'ins.')], {
            redis: { keyPrefix, commandTimeoutMillis: 2_000, connectTimeoutMillis: 400 },
          }),
          rateLimits: {
            perSubject: { capacity: 100_000, refillPerSecond: 10_000 },
            store: 'redis',
          },
        },
        env: { REDIS_URL: own.url },
        waitReady: true,
      }),
    );
    const call = async (): Promise<void> => {
      expect((await callTool(gateway.mcpUrl, 'ins.a')).result.isError).toBeUndefined();
    };
    await call();
    own.pause();
    // the first take waits its 2 s and counts in memory
    await call();
    await gateway.waitForOutput(
      'Redis is unreachable: rate limits now count per replica in memory',
    );
    // the next ones do not ask the hung Redis: ten calls that would wait 2 s each take far less
    // (the bound is loose so that a loaded CI runner cannot break it)
    const started = Date.now();
    for (let i = 0; i < 10; i++) await call();
    expect(Date.now() - started).toBeLessThan(10_000);
    own.resume();
    // a Redis that comes back without a reconnect is noticed by the background PING, and the
    // first take that works again says so
    await waitFor(
      async () => {
        await call();
        return gateway.output.includes('Redis is back: rate-limit buckets are shared again');
      },
      20_000,
      () => 'no take worked again after Redis was resumed',
    );
    expect(count(gateway.output, 'Redis is unreachable: rate limits')).toBe(1);
  });

  it('a server that answers garbage instead of RESP is a miss too', async () => {
    const service = track(
      await TestToolService.start(manifest('ins', [tool({ name: 'ins.a' })], 'r1')),
    );
    const garbage = track(
      await SilentTcp.start(Buffer.from('HTTP/1.1 400 Bad Request\r\n\r\n\x00\x01garbage')),
    );
    const gateway = await gatewayWith(garbage.url, service);
    expect((await rpc(gateway.mcpUrl, 'tools/list')).json.result.tools).toHaveLength(1);
    await waitFor(async () => (await gateway.toolBundles()).redis.available === false, 3000);
    await gateway.waitForOutput('Redis unavailable');
    expect(count(gateway.output, 'Redis unavailable')).toBe(1);
  });

  it('Redis going away while the gateway runs changes nothing for agents', async () => {
    const service = track(
      await TestToolService.start(manifest('ins', [tool({ name: 'ins.a' })], 'r1')),
    );
    const redis = track(await OwnRedis.start());
    const gateway = await gatewayWith(redis.url, service);
    await waitFor(async () => (await gateway.toolBundles()).redis.available === true);
    await redis.stop();
    service.setManifest(manifest('ins', [tool({ name: 'ins.a' }), tool({ name: 'ins.b' })], 'r2'));
    await waitFor(
      async () => (await rpc(gateway.mcpUrl, 'tools/list')).json.result.tools.length === 2,
      5000,
    );
    expect((await callTool(gateway.mcpUrl, 'ins.b')).result.isError).toBeUndefined();
    await waitFor(async () => (await gateway.toolBundles()).redis.available === false, 5000);
    expect(await gateway.bundleStatus('ins')).toMatchObject({ status: 'healthy', revision: 'r2' });
  });

  it.each([
    ['not JSON', () => 'not json at all {'],
    ['JSON of another shape', () => JSON.stringify({ hello: 'world' })],
    [
      'a record whose manifest breaks the contract',
      () =>
        JSON.stringify({
          v: 1,
          bundleId: 'ins',
          fetchedAtMs: Date.now(),
          writtenBy: 'x',
          manifest: {
            bundleId: 'ins',
            tools: [
              {
                name: 'wrong.prefix',
                description: 'd',
                inputSchema: { type: 'object' },
                _meta: { version: '1' },
              },
            ],
          },
        }),
    ],
  ])('a stored value that is %s is never adopted', async (_label, value) => {
    const keyPrefix = uniqueKeyPrefix();
    prefixes.push(keyPrefix);
    await shared.set(`${keyPrefix}:{mcp-gateway-test:ins}:manifest`, value());
    const service = await TestToolService.start(manifest('ins', [tool({ name: 'ins.a' })], 'live'));
    await service.stop();
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('ins', service, 'ins.')], { redis: redisSettings(keyPrefix) }),
        env: { REDIS_URL: SHARED_REDIS_URL },
      }),
    );
    await waitFor(async () => (await gateway.bundleStatus('ins')).lastAttemptAt !== null);
    expect(await gateway.bundleStatus('ins')).toMatchObject({
      status: 'unreachable',
      source: null,
    });
    expect((await rpc(gateway.mcpUrl, 'tools/list')).json.error.message).toContain(
      'Registry unavailable',
    );
    await gateway.waitForOutput(/unreadable; treated as absent|redis manifest rejected/);
  });

  it('never overwrites a newer shared copy with an older one', async () => {
    const keyPrefix = uniqueKeyPrefix();
    prefixes.push(keyPrefix);
    const base = `${keyPrefix}:{mcp-gateway-test:ins}`;
    const future = Date.now() + 60_000; // another replica pulled a minute later (within the allowed clock skew)
    const newer = JSON.stringify({
      v: 1,
      bundleId: 'ins',
      fetchedAtMs: future,
      writtenBy: 'other-replica',
      manifest: manifest('ins', [tool({ name: 'ins.newer' })], 'newer'),
    });
    await shared.set(`${base}:manifest`, newer);
    await shared.set(`${base}:fetched-at`, String(future));
    const service = track(
      await TestToolService.start(manifest('ins', [tool({ name: 'ins.a' })], 'older')),
    );
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('ins', service, 'ins.')], { redis: redisSettings(keyPrefix) }),
        env: { REDIS_URL: SHARED_REDIS_URL },
        waitReady: true,
      }),
    );
    // the remote pull wins in memory (contract: a remote success always wins) ...
    expect(await gateway.bundleStatus('ins')).toMatchObject({
      source: 'remote',
      revision: 'older',
    });
    await new Promise((r) => setTimeout(r, 500));
    // ... but the shared copy stays the newer one another replica wrote
    expect(await shared.get(`${base}:manifest`)).toBe(newer);
  });

  it('treats an implausible stored time as garbage: a 1e300 copy is a miss and a year-2100 stamp is overwritten', async () => {
    const keyPrefix = uniqueKeyPrefix();
    prefixes.push(keyPrefix);
    const base = `${keyPrefix}:{mcp-gateway-test:ins}`;
    const bad = JSON.stringify({
      v: 1,
      bundleId: 'ins',
      fetchedAtMs: 1e300,
      writtenBy: 'x',
      manifest: manifest('ins', [tool({ name: 'ins.bogus' })], 'bogus'),
    });
    await shared.set(`${base}:manifest`, bad);
    await shared.set(`${base}:fetched-at`, String(Date.parse('2100-01-01')));
    const service = track(
      await TestToolService.start(manifest('ins', [tool({ name: 'ins.a' })], 'live')),
    );
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('ins', service, 'ins.')], { redis: redisSettings(keyPrefix) }),
        env: { REDIS_URL: SHARED_REDIS_URL },
        waitReady: true,
      }),
    );
    expect(gateway.output).not.toContain('Warm start failed');
    expect(await gateway.bundleStatus('ins')).toMatchObject({ source: 'remote', revision: 'live' });
    await waitFor(
      async () => JSON.parse((await shared.get(`${base}:manifest`))!).manifest.revision === 'live',
    );
  });

  it('sets the documented key layout and TTL', async () => {
    const keyPrefix = uniqueKeyPrefix();
    prefixes.push(keyPrefix);
    const service = track(
      await TestToolService.start(manifest('ins', [tool({ name: 'ins.a' })], 'r1')),
    );
    track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('ins', service, 'ins.')], {
          redis: { ...redisSettings(keyPrefix), ttlSeconds: 120 },
        }),
        env: { REDIS_URL: SHARED_REDIS_URL },
        waitReady: true,
      }),
    );
    const key = `${keyPrefix}:{mcp-gateway-test:ins}:manifest`;
    await waitFor(async () => (await shared.exists(key)) === 1);
    const ttl = await shared.ttl(key);
    expect(ttl).toBeGreaterThan(100);
    expect(ttl).toBeLessThanOrEqual(120);
    const record = JSON.parse((await shared.get(key))!);
    expect(record).toMatchObject({
      v: 1,
      bundleId: 'ins',
      manifest: { bundleId: 'ins', revision: 'r1' },
    });
    expect(record.writtenBy).toMatch(/^mcp-gateway-test\//);
    expect(Number(await shared.get(`${keyPrefix}:{mcp-gateway-test:ins}:fetched-at`))).toBe(
      record.fetchedAtMs,
    );
  });
});
