import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { rpc } from '../support/rpc';
import { TestToolService } from '../support/tool-service';
import { deleteKeys, redisClient, SHARED_REDIS_URL, uniqueKeyPrefix } from '../support/redis';

/**
 * A small manifest (here about 10 KB) holding one tool schema of more than 300 members is
 * validated in the worker thread (docs/operations.md §2 "Large manifests": "so is a smaller one
 * that holds a tool schema of more than 300 members … The rules and the outcome are the same").
 * A 100-property schema with a type and a description each is already past 300 members.
 *
 * contract §1 "bundle 단위 조회 격리" and §6 "개별 조회 실패는 예외가 아니라 결과값으로 다룬다 … 하나의
 * 실패가 전체 조회를 중단시키면 나머지 성공분까지 버려진다": whatever happens to one bundle's
 * manifest, the other bundles' pulls of the round are applied, and the bundle's own outcome
 * (adopted, or a failure reason) is recorded.
 */
describe('a small manifest with a wide tool schema', () => {
  const track = stopAfterEach();

  const wideSchema = {
    type: 'object',
    properties: Object.fromEntries(
      Array.from({ length: 110 }, (_, i) => [
        `field${i}`,
        { type: 'string', description: `field ${i}` },
      ]),
    ),
  };

  it('is adopted like any valid manifest, and never sinks the round of the other bundles', async () => {
    const plain = track(await TestToolService.start(manifest('a', [tool({ name: 'a.one' })])));
    const wide = track(
      await TestToolService.start(
        manifest('b', [tool({ name: 'b.form', inputSchema: wideSchema })]),
      ),
    );
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('a', plain, 'a.'), bundle('b', wide, 'b.')]),
      }),
    );
    // the first round is over once both bundles were attempted and their outcomes recorded
    await waitFor(
      async () =>
        (await gateway.toolBundles()).bundles.every(
          (b: any) => b.status !== 'unreachable' || b.consecutiveFailures > 0,
        ) || /Refresh round failed/.test(gateway.output),
      10_000,
    ).catch(() => undefined);
    const view = await gateway.toolBundles();
    const listed = await rpc(gateway.mcpUrl, 'tools/list');
    expect({
      roundFailed: /Refresh round failed unexpectedly \(\w+\)/.exec(gateway.output)?.[0] ?? null,
      statuses: view.bundles.map((b: any) => [b.id, b.status, b.lastFailureReason]),
      ready: (await gateway.readiness()).status,
      tools: listed.json?.result?.tools?.map((t: any) => t.name) ?? listed.json?.error?.message,
    }).toEqual({
      roundFailed: null,
      statuses: [
        ['a', 'healthy', null],
        ['b', 'healthy', null],
      ],
      ready: 200,
      tools: ['a.one', 'b.form'],
    });
  });

  it('in a Redis last-good copy, warm-starts a replica whose Tool Service is down (contract §11)', async () => {
    const prefix = uniqueKeyPrefix();
    const redis = redisClient();
    try {
      // the copy another replica wrote (the gateway's own record format), pulled a minute ago
      const fetchedAtMs = Date.now() - 60_000;
      const body = manifest('b', [tool({ name: 'b.form', inputSchema: wideSchema })]);
      await redis.set(
        `${prefix}:{mcp-gateway-test:b}:manifest`,
        JSON.stringify({
          v: 1,
          bundleId: 'b',
          fetchedAtMs,
          writtenBy: 'other/replica/1',
          manifest: body,
        }),
      );
      await redis.set(`${prefix}:{mcp-gateway-test:b}:fetched-at`, String(fetchedAtMs));
      const down = {
        manifestUrl: 'http://127.0.0.1:9/tool-manifest',
        baseEndpoint: 'http://127.0.0.1:9/mcp',
      };
      const gateway = track(
        await GatewayProcess.start({
          mcp: gatewayConfig([bundle('b', down, 'b.')], { redis: { keyPrefix: prefix } }),
          env: { REDIS_URL: SHARED_REDIS_URL },
        }),
      );
      await waitFor(async () => (await gateway.bundleStatus('b')).consecutiveFailures > 0, 10_000);
      const status = await gateway.bundleStatus('b');
      expect({
        warmStartFailed: /Warm start failed \(\w+\)/.exec(gateway.output)?.[0] ?? null,
        status: status.status,
        source: status.source,
        ready: (await gateway.readiness()).status,
      }).toEqual({ warmStartFailed: null, status: 'degraded', source: 'redis', ready: 200 });
    } finally {
      await deleteKeys(redis, prefix);
      redis.disconnect();
    }
  });
});
