import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { deleteKeys, redisClient, SHARED_REDIS_URL, uniqueKeyPrefix } from '../support/redis';
import { rpc } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

/**
 * A bundle's last good copy in Redis is the manifest of the Tool Service at its `manifestUrl`
 * (contract §11). When the configuration now names another Tool Service under the same bundle
 * id, the stored copy describes the old one's tools: serving them would route calls for tools
 * the new service never published to its baseEndpoint. An upstream's copy of another URL is
 * already refused (docs/operations.md §10 "Lists"); a bundle's must be too (§5 "Redis").
 */
describe('a bundle copy in Redis pulled from another manifestUrl', () => {
  const redis = redisClient();
  const track = stopAfterEach();
  const prefixes: string[] = [];

  afterEach(async () => {
    for (const p of prefixes.splice(0)) await deleteKeys(redis, p);
  });
  afterAll(() => redis.disconnect());

  it('is not adopted at warm start: the bundle stays unreachable, nothing of the old service is listed', async () => {
    const prefix = uniqueKeyPrefix();
    prefixes.push(prefix);
    const env = { REDIS_URL: SHARED_REDIS_URL };
    const old = track(
      await TestToolService.start(manifest('ins', [tool({ name: 'ins.old-only' })], 'old-r1')),
    );
    const before = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('ins', old, 'ins.')], { redis: { keyPrefix: prefix } }),
      env,
      waitReady: true,
    });
    const key = `${prefix}:{mcp-gateway-test:ins}:manifest`;
    await waitFor(async () => (await redis.get(key)) !== null);
    await before.stop();
    await old.stop();

    // the same bundle id, now configured at another Tool Service that is not up yet
    const moved = {
      manifestUrl: 'http://127.0.0.1:1/other-manifest',
      baseEndpoint: 'http://127.0.0.1:1/other-tools',
    };
    const after = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('ins', moved, 'ins.')], { redis: { keyPrefix: prefix } }),
        env,
      }),
    );
    await waitFor(async () => (await after.bundleStatus('ins')).lastAttemptAt !== null);
    await after.waitForOutput('the Redis copy was pulled from another manifestUrl');
    expect(await after.bundleStatus('ins')).toMatchObject({
      status: 'unreachable',
      lastFailureReason: 'ManifestConnectError',
    });
    const list = await rpc(after.mcpUrl, 'tools/list');
    expect(list.json.result).toBeUndefined();
    expect(list.json.error.message).toContain('Registry unavailable');
    expect(after.output).not.toContain('warm start from the Redis copy');
  });

  it('is adopted when the manifestUrl is the same (the copy is this bundle’s)', async () => {
    const prefix = uniqueKeyPrefix();
    prefixes.push(prefix);
    const env = { REDIS_URL: SHARED_REDIS_URL };
    const service = track(
      await TestToolService.start(manifest('ins', [tool({ name: 'ins.kept' })], 'r1')),
    );
    const mcp = gatewayConfig([bundle('ins', service, 'ins.')], { redis: { keyPrefix: prefix } });
    const before = await GatewayProcess.start({ mcp, env, waitReady: true });
    await waitFor(
      async () => (await redis.get(`${prefix}:{mcp-gateway-test:ins}:manifest`)) !== null,
    );
    await before.stop();
    await service.stop();
    const after = track(await GatewayProcess.start({ mcp, env, waitReady: true }));
    expect(await after.bundleStatus('ins')).toMatchObject({
      status: 'degraded',
      source: 'redis',
      revision: 'r1',
    });
  });
});
