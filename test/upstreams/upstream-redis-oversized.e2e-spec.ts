/**
 * An upstream's last good lists read back from Redis are bounded as a bundle's copy is
 * (docs/operations.md §5 "Redis: one server, Sentinel or Cluster"): a stored value far larger
 * than any pull could bring (the pages of one list together count as one answer, capped by
 * execution.maxResponseBytes, §10) is no copy this gateway wrote; it is treated as absent at warm
 * start, never parsed or adopted, and said once in the log.
 */
import { createHash } from 'node:crypto';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { rpc } from '../support/rpc';
import { deleteKeys, redisClient, SHARED_REDIS_URL, uniqueKeyPrefix } from '../support/redis';
import { ScriptedUpstream, upTool } from '../support/scripted-upstream';
import { stopAfterEach } from '../support/cleanup';

describe('oversized last good lists of an upstream in Redis', () => {
  const track = stopAfterEach();

  it('are treated as absent at warm start, like an oversized bundle copy', async () => {
    const prefix = uniqueKeyPrefix();
    const redis = redisClient();
    try {
      const down = await ScriptedUpstream.down();
      const url = down.url;
      // 4 MiB of description: 64 times the answer size this gateway's pulls accept
      const lists = {
        era: '2025',
        capabilities: { tools: {} },
        tools: [upTool('big', { description: 'x'.repeat(4 * 1048576) })],
        resources: [],
        resourceTemplates: [],
        prompts: [],
      };
      const record = {
        v: 1,
        upstreamId: 'u',
        urlDigest: createHash('sha256').update(url).digest('base64url'),
        fetchedAtMs: Date.now() - 1000,
        writtenBy: 'someone-else',
        lists,
      };
      await redis.set(`${prefix}:{mcp-gateway-test:upstream/u}:lists`, JSON.stringify(record));
      await redis.set(
        `${prefix}:{mcp-gateway-test:upstream/u}:fetched-at`,
        String(record.fetchedAtMs),
      );

      const gateway = track(
        await GatewayProcess.start({
          mcp: gatewayConfig([], {
            upstreams: [upstream('u', url, { timeouts: { connectMillis: 200, listMillis: 500 } })],
            redis: { keyPrefix: prefix },
            execution: { maxResponseBytes: 65536 },
          }),
          env: { REDIS_URL: SHARED_REDIS_URL },
        }),
      );
      // the first round has run (the warm start came before it)
      await waitFor(async () => {
        const res = await fetch(`${gateway.managementUrl}/actuator/upstreams`);
        const view = (await res.json()) as any;
        return JSON.stringify(view).includes('lastAttemptAt":"');
      }, 20000);
      const listed = await rpc(gateway.mcpUrl, 'tools/list');
      const names = listed.json?.result?.tools?.map((t: any) => t.name) ?? [];
      expect(names).not.toContain('u__big');
      await gateway.waitForOutput(
        /Stored last good lists of upstream u are \d+ characters, more than \d+ .*treated as absent/,
      );
    } finally {
      await deleteKeys(redis, prefix);
      redis.disconnect();
    }
  });
});
