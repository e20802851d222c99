import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { rpc } from '../support/rpc';
import { deleteKeys, redisClient, SHARED_REDIS_URL, uniqueKeyPrefix } from '../support/redis';
import { TestToolService } from '../support/tool-service';

/**
 * contract §6 readiness: "usable snapshot은 원천 조회 성공본, … 또는 Redis에서 채택한 last-good이다 …
 * 첫 조회가 끝났더라도 memory와 Redis에 성공본이 하나도 없으면 readiness는 DOWN을 유지" — DOWN only while
 * neither memory *nor Redis* holds a good copy. Once another replica has put a good copy in Redis, a
 * replica whose own pulls keep failing (its path to the Tool Service is cut) has a usable snapshot.
 */
describe('a good copy another replica put in Redis', () => {
  const track = stopAfterEach();

  it('makes a replica whose own pulls keep failing ready, serving that copy as degraded/redis', async () => {
    const prefix = uniqueKeyPrefix();
    const redis = redisClient();
    try {
      const service = track(
        await TestToolService.start(manifest('ins', [tool({ name: 'ins.a' })])),
      );
      // the manifest is slower than replica A's read timeout allows, within replica B's
      const good = manifest('ins', [tool({ name: 'ins.a' })]);
      service.manifest = () => ({ body: good, delayMs: 1500 });
      const env = { REDIS_URL: SHARED_REDIS_URL };
      const base = { registry: { refreshIntervalSeconds: 1 }, redis: { keyPrefix: prefix } };
      // replica A: the same bundle (the same manifestUrl: a copy of another URL is another
      // Tool Service's, docs/operations.md §5 "Redis"), but its way there is too slow
      const a = track(
        await GatewayProcess.start({
          mcp: gatewayConfig([bundle('ins', service, 'ins.')], {
            ...base,
            discovery: { readTimeoutMillis: 300 },
          }),
          env,
        }),
      );
      await waitFor(async () => (await a.bundleStatus('ins')).lastAttemptAt !== null);
      expect((await a.readiness()).status).toBe(503);

      // replica B reaches the Tool Service and shares its good copy through Redis
      const b = track(
        await GatewayProcess.start({
          mcp: gatewayConfig([bundle('ins', service, 'ins.')], {
            ...base,
            discovery: { readTimeoutMillis: 10_000 },
          }),
          env,
          waitReady: true,
        }),
      );
      await waitFor(
        async () => (await redis.get(`${prefix}:{mcp-gateway-test:ins}:manifest`)) !== null,
      );
      expect((await b.readiness()).status).toBe(200);

      // A keeps failing its own pulls, but Redis now holds a usable snapshot
      await new Promise((r) => setTimeout(r, 5000));
      const status = await a.bundleStatus('ins');
      expect(status.consecutiveFailures).toBeGreaterThan(2);
      const listed = await rpc(a.mcpUrl, 'tools/list');
      expect({
        readiness: (await a.readiness()).status,
        status: status.status,
        source: status.source,
        tools: listed.json?.result?.tools?.map((t: any) => t.name) ?? listed.json?.error,
      }).toEqual({
        readiness: 200,
        status: 'degraded',
        source: 'redis',
        tools: ['ins.a'],
      });
    } finally {
      await deleteKeys(redis, prefix);
      redis.disconnect();
    }
  });
});
