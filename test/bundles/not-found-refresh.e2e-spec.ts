import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { callTool } from '../support/rpc';
import { deleteKeys, redisClient, SHARED_REDIS_URL, uniqueKeyPrefix } from '../support/redis';
import { TestToolService } from '../support/tool-service';

/** The default flood limit of §8 refreshes (config default), set explicitly: the fixtures use 0. */
const DEFAULT_LIMIT = { notFoundRefreshMinIntervalMillis: 1000 };

const first = manifest('processing', [tool({ name: 'processing.first' })], 'r1');
const withLate = manifest(
  'processing',
  [tool({ name: 'processing.first' }), tool({ name: 'processing.late' })],
  'r2',
);

/**
 * Contract §8: a tools/call for a name missing from the snapshot refreshes every bundle once,
 * then answers. The refresh that answers it is a round that started after the miss; the
 * flood limit (notFoundRefreshMinIntervalMillis) delays that round and never drops it.
 */
describe('the §8 refresh for an unknown tool name', () => {
  const track = stopAfterEach();

  it('calls a tool published just after the startup refresh, within a second of readiness (never skipped)', async () => {
    const service = track(await TestToolService.start(first));
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('processing', service, 'processing.')], {
          registry: DEFAULT_LIMIT,
        }),
        waitReady: true,
      }),
    );
    const pulls = service.manifestRequests().length;
    service.setManifest(withLate);
    const call = await callTool(gateway.mcpUrl, 'processing.late', { q: 1 });
    expect(call.error).toBeUndefined();
    expect(call.result.isError).toBeUndefined();
    expect(service.toolRequests('processing.late')).toHaveLength(1);
    expect(service.manifestRequests().length).toBe(pulls + 1);
  });

  it('does not answer a miss from a round that was already running when the miss arrived', async () => {
    const service = track(await TestToolService.start(first));
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('processing', service, 'processing.')], {
          registry: { notFoundRefreshMinIntervalMillis: 0 },
          discovery: { readTimeoutMillis: 5000 },
        }),
        waitReady: true,
      }),
    );
    // From now on a pull takes the manifest as it is when the request arrives, and answers it
    // 600 ms later: a round that started before the tool was published cannot see it.
    let published: unknown = first;
    service.manifest = async () => {
      const body = published;
      await new Promise((r) => setTimeout(r, 600));
      return { body };
    };
    const pulls = service.manifestRequests().length;
    const earlier = callTool(gateway.mcpUrl, 'processing.nothing');
    await waitFor(() => service.manifestRequests().length === pulls + 1); // that round is running
    published = withLate;
    const late = await callTool(gateway.mcpUrl, 'processing.late', { q: 2 });
    expect(late.error).toBeUndefined();
    expect(late.result.isError).toBeUndefined();
    expect(service.toolRequests('processing.late')).toHaveLength(1);
    expect((await earlier).error.code).toBe(-32001);
    expect(service.manifestRequests().length).toBe(pulls + 2);
  });

  it('lets unknown names that arrive together share one round, and still answers each after it', async () => {
    const service = track(await TestToolService.start(first));
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('processing', service, 'processing.')], {
          registry: DEFAULT_LIMIT,
        }),
        waitReady: true,
      }),
    );
    const pulls = service.manifestRequests().length;
    service.setManifest(withLate);
    const answers = await Promise.all([
      ...Array.from({ length: 30 }, (_, i) => callTool(gateway.mcpUrl, `processing.nope${i}`)),
      callTool(gateway.mcpUrl, 'processing.late', { q: 3 }),
    ]);
    for (const a of answers.slice(0, 30)) expect(a.error.code).toBe(-32001);
    expect(answers[30].result.isError).toBeUndefined();
    // one refresh answered all 31 (a second may start if the requests straddle a round's start)
    expect(service.manifestRequests().length - pulls).toBeGreaterThanOrEqual(1);
    expect(service.manifestRequests().length - pulls).toBeLessThanOrEqual(2);
  });

  it('does the same on a second replica that shares Redis', async () => {
    const prefix = uniqueKeyPrefix();
    const redis = redisClient();
    try {
      const service = track(await TestToolService.start(first));
      const mcp = gatewayConfig([bundle('processing', service, 'processing.')], {
        registry: DEFAULT_LIMIT,
        redis: { keyPrefix: prefix },
      });
      const env = { REDIS_URL: SHARED_REDIS_URL };
      const a = track(await GatewayProcess.start({ mcp, env, waitReady: true }));
      const b = track(await GatewayProcess.start({ mcp, env, waitReady: true }));
      service.setManifest(withLate);
      const onB = await callTool(b.mcpUrl, 'processing.late', { q: 4 });
      expect(onB.error).toBeUndefined();
      expect(onB.result.isError).toBeUndefined();
      const onA = await callTool(a.mcpUrl, 'processing.late', { q: 5 });
      expect(onA.error).toBeUndefined();
      expect(onA.result.isError).toBeUndefined();
      expect(service.toolRequests('processing.late')).toHaveLength(2);
    } finally {
      await deleteKeys(redis, prefix);
      redis.disconnect();
    }
  });
});
