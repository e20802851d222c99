import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { rpc } from '../support/rpc';
import { deleteKeys, redisClient, SHARED_REDIS_URL, uniqueKeyPrefix } from '../support/redis';
import { TestToolService } from '../support/tool-service';

/**
 * contract §11 / DESIGN "Redis ... warm-start and cross-replica copy of last-good data": the copy
 * a replica warm-starts from must be the same last good manifest the Tool Service published, so a
 * restarted replica serves what the others serve. `_meta.tags` (docs/operations.md §16) decide
 * which tools a tag-selected virtual server holds; the Redis copy must keep them.
 */
describe('Redis last-good copy keeps the whole manifest', () => {
  const track = stopAfterEach();

  it('a replica warm-started from Redis serves the same tag-selected virtual server as the replica that pulled', async () => {
    const prefix = uniqueKeyPrefix();
    const redis = redisClient();
    try {
      const service = track(
        await TestToolService.start(
          manifest('ins', [
            tool({ name: 'ins.ref', meta: { tags: ['reference'] } }),
            tool({ name: 'ins.other' }),
          ]),
        ),
      );
      const mcp = {
        ...gatewayConfig([bundle('ins', service, 'ins.')], { redis: { keyPrefix: prefix } }),
        virtualServers: [{ id: 'refs', tags: ['reference'] }],
      };
      const env = { REDIS_URL: SHARED_REDIS_URL };
      const first = track(await GatewayProcess.start({ mcp, env, waitReady: true }));
      const servers1: any = await (await fetch(`${first.managementUrl}/actuator/servers`)).json();
      const refs1 = servers1.servers.find((s: any) => s.id === 'refs');
      expect(refs1.toolNames).toEqual(['ins.ref']);
      // the copy reaches Redis
      await waitFor(
        async () => (await redis.get(`${prefix}:{mcp-gateway-test:ins}:manifest`)) !== null,
      );
      const stored = JSON.parse((await redis.get(`${prefix}:{mcp-gateway-test:ins}:manifest`))!);
      await first.stop();

      // the Tool Service is down now: the next replica has only the Redis copy
      await service.stop();
      const second = track(await GatewayProcess.start({ mcp, env, waitReady: true }));
      await second.waitForOutput('warm start from the Redis copy');
      const listed = await rpc(`${second.mcpUrl}/servers/refs`, 'tools/list');
      const servers2: any = await (await fetch(`${second.managementUrl}/actuator/servers`)).json();
      const refs2 = servers2.servers.find((s: any) => s.id === 'refs');
      expect(refs2.toolNames).toEqual(['ins.ref']);
      expect(listed.json.result.tools.map((t: any) => t.name)).toEqual(['ins.ref']);
      // the cause: the stored copy's _meta has no tags
      expect(stored.manifest.tools.find((t: any) => t.name === 'ins.ref')._meta).toMatchObject({
        tags: ['reference'],
      });
    } finally {
      await deleteKeys(redis, prefix);
      redis.disconnect();
    }
  });
});
