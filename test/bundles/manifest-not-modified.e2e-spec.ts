import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { deleteKeys, redisClient, SHARED_REDIS_URL, uniqueKeyPrefix } from '../support/redis';
import { rpc } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

/**
 * contract §6, "실패 판정과 유예": `304 Not Modified | 직전 성공본 유지. 실패 횟수 초기화` — a
 * 304 keeps the last good copy and starts the failure count over. The gateway sends no
 * If-None-Match (the optional §4 feature is not used), but a Tool Service (or a cache in front of
 * it) that answers 304 anyway is not a failing one.
 */
describe('a Tool Service that answers the manifest pull with 304 Not Modified', () => {
  let service: TestToolService;
  let gateway: GatewayProcess;

  const view = (): Promise<{ status: string; consecutiveFailures: number }> =>
    gateway.bundleStatus('ins');

  beforeAll(async () => {
    service = await TestToolService.start(manifest('ins', [tool({ name: 'ins.a' })]));
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('ins', service, 'ins.')], {
        registry: { refreshIntervalSeconds: 1 },
      }),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await service?.stop();
  });

  it('keeps the last good copy and starts the failure count over (healthy again)', async () => {
    service.manifest = () => ({ status: 500 });
    await waitFor(async () => (await view()).consecutiveFailures >= 2, 10_000);
    expect(await view()).toMatchObject({ status: 'degraded' });
    const pulls = service.manifestRequests().length;
    service.manifest = () => ({ status: 304, headers: { etag: '"r1"' } });
    await waitFor(() => service.manifestRequests().length > pulls + 1, 10_000);
    expect(await view()).toMatchObject({ status: 'healthy', consecutiveFailures: 0 });
    const list = await rpc(gateway.mcpUrl, 'tools/list');
    expect(list.json.result.tools.map((t: { name: string }) => t.name)).toEqual(['ins.a']);
  });

  it("after a warm start from Redis: healthy, the copy now the Tool Service's (contract §9: the last pull succeeded)", async () => {
    const keyPrefix = uniqueKeyPrefix();
    const redis = redisClient();
    const warm = await TestToolService.start(manifest('warm', [tool({ name: 'warm.a' })], 'rev-1'));
    const config = gatewayConfig([bundle('warm', warm, 'warm.')], {
      registry: { refreshIntervalSeconds: 1 },
      redis: { keyPrefix },
    });
    const env = { REDIS_URL: SHARED_REDIS_URL };
    let second: GatewayProcess | undefined;
    try {
      const first = await GatewayProcess.start({ mcp: config, env, waitReady: true });
      await waitFor(async () => (await redis.keys(`${keyPrefix}:*`)).length > 0, 10_000);
      await first.stop();
      warm.manifest = () => ({ status: 304 });
      second = await GatewayProcess.start({ mcp: config, env });
      const started = warm.manifestRequests().length;
      await waitFor(() => warm.manifestRequests().length >= started + 2, 10_000);
      expect(await second.bundleStatus('warm')).toMatchObject({
        status: 'healthy',
        revision: 'rev-1',
        consecutiveFailures: 0,
        lastFailureReason: null,
        source: 'remote',
      });
    } finally {
      await second?.stop();
      await warm.stop();
      await deleteKeys(redis, keyPrefix);
      redis.disconnect();
    }
  });

  it('is a failed pull for a bundle with no copy to keep', async () => {
    const fresh = await TestToolService.start(manifest('fresh', [tool({ name: 'fresh.a' })]));
    fresh.manifest = () => ({ status: 304 });
    const other = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('fresh', fresh, 'fresh.')]),
    });
    try {
      await waitFor(
        async () =>
          (await other.bundleStatus('fresh')).lastFailureReason === 'ManifestHttpStatusError',
        10_000,
      );
      expect(await other.bundleStatus('fresh')).toMatchObject({ status: 'unreachable' });
    } finally {
      await other.stop();
      await fresh.stop();
    }
  });
});
