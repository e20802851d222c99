import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { deleteKeys, redisClient, SHARED_REDIS_URL, uniqueKeyPrefix } from '../support/redis';
import { callTool, rpc } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

/**
 * The failure matrix (README.md "Never losing a tool: last-good copies, Redis and what
 * operators see"): a Tool Service outage, a bad manifest, a restart never
 * make a needed tool silently disappear and never serve a half catalog (contract §2, §6, §11).
 * Each case asserts what agents see on /mcp, what /actuator/toolBundles says, and readiness.
 */
/**
 * The bundle's last-good copy in Redis: its manifest and fetched-at keys (README "Redis"); the
 * registration store's marker lives under the same prefix and is not part of the copy.
 */
function bundleCopyKeys(redis: ReturnType<typeof redisClient>, prefix: string): Promise<string[]> {
  return redis.keys(`${prefix}:{*:ins}:*`);
}

describe('never lose a tool: the failure matrix', () => {
  const redis = redisClient();
  const track = stopAfterEach();
  const prefixes: string[] = [];
  const fast = { registry: { refreshIntervalSeconds: 1, refreshJitterSeconds: 0 } };

  afterEach(async () => {
    for (const p of prefixes.splice(0)) await deleteKeys(redis, p);
  });
  afterAll(() => redis.disconnect());

  function keyPrefix(): string {
    const p = uniqueKeyPrefix();
    prefixes.push(p);
    return p;
  }

  const toolNames = async (gateway: GatewayProcess): Promise<string[]> =>
    (await rpc(gateway.mcpUrl, 'tools/list')).json.result.tools.map(
      (t: { name: string }) => t.name,
    );

  /** A Tool Service that was never started: its port refuses connections. */
  async function downService(m: unknown): Promise<TestToolService> {
    const service = await TestToolService.start(m);
    await service.stop();
    return service;
  }

  it('Tool Service down at boot, no Redis copy: unreachable, not ready, tools/list is a clear "registry unavailable" error', async () => {
    // port 1, where nothing listens: a stopped service's ephemeral port can be taken by
    // another suite's server meanwhile (then HTTP 404, not a refused connection)
    const service = {
      manifestUrl: 'http://127.0.0.1:1/manifest',
      baseEndpoint: 'http://127.0.0.1:1/tools',
    };
    const gateway = track(
      await GatewayProcess.start({ mcp: gatewayConfig([bundle('ins', service, 'ins.')]) }),
    );
    await waitFor(async () => (await gateway.bundleStatus('ins')).lastAttemptAt !== null);
    expect(await gateway.bundleStatus('ins')).toMatchObject({
      status: 'unreachable',
      lastFailureReason: 'ManifestConnectError',
    });
    const readiness = await gateway.readiness();
    expect(readiness.status).toBe(503);
    expect(readiness.body.details.catalog.firstPullAttemptDone).toBe(true);
    const list = await rpc(gateway.mcpUrl, 'tools/list');
    expect(list.json.result).toBeUndefined();
    expect(list.json.error.code).toBe(-32603);
    expect(list.json.error.message).toContain('Registry unavailable');
    const call = await callTool(gateway.mcpUrl, 'ins.a');
    expect(call.error.message).toContain('Registry unavailable');
    expect((await fetch(`${gateway.managementUrl}/actuator/health/liveness`)).status).toBe(200);
  });

  it('Tool Service down at boot with a Redis copy from an earlier run: ready, tools listed, status degraded', async () => {
    const prefix = keyPrefix();
    const service = track(
      await TestToolService.start(
        manifest('ins', [tool({ name: 'ins.a' }), tool({ name: 'ins.b' })], 'r7'),
      ),
    );
    const mcp = gatewayConfig([bundle('ins', service, 'ins.')], { redis: { keyPrefix: prefix } });
    const earlier = await GatewayProcess.start({
      mcp,
      env: { REDIS_URL: SHARED_REDIS_URL },
      waitReady: true,
    });
    await waitFor(async () => (await bundleCopyKeys(redis, prefix)).length === 2);
    await earlier.stop();
    await service.stop();

    const gateway = track(
      await GatewayProcess.start({ mcp, env: { REDIS_URL: SHARED_REDIS_URL }, waitReady: true }),
    );
    expect(await toolNames(gateway)).toEqual(['ins.a', 'ins.b']);
    const status = await gateway.bundleStatus('ins');
    expect(status).toMatchObject({
      status: 'degraded',
      source: 'redis',
      revision: 'r7',
      lastFailureReason: 'ManifestConnectError',
    });
    expect(status.ageSeconds).toBeGreaterThanOrEqual(0);
    expect((await gateway.toolBundles()).redis).toEqual({
      configured: true,
      available: true,
      lastFailureReason: null,
    });
    await gateway.waitForOutput('warm start from the Redis copy');
  });

  it('a stored copy over twice maxManifestBytes is not read, and one holding a large schema is checked in the validation worker', async () => {
    const prefix = keyPrefix();
    const wide = {
      type: 'object',
      properties: Object.fromEntries(
        Array.from({ length: 2_000 }, (_, i) => [`p${i}`, { type: 'string' }]),
      ),
    };
    const service = track(
      await TestToolService.start(
        manifest('ins', [tool({ name: 'ins.a', inputSchema: wide })], 'r8'),
      ),
    );
    const mcp = gatewayConfig([bundle('ins', service, 'ins.')], { redis: { keyPrefix: prefix } });
    const earlier = await GatewayProcess.start({
      mcp,
      env: { REDIS_URL: SHARED_REDIS_URL },
      waitReady: true,
    });
    await waitFor(async () => (await bundleCopyKeys(redis, prefix)).length === 2);
    await earlier.stop();
    await service.stop();

    // the copy as written: its large schema is checked off the event loop
    const checked = track(
      await GatewayProcess.start({
        mcp,
        env: { REDIS_URL: SHARED_REDIS_URL, LOG_LEVEL: 'debug' },
        waitReady: true,
      }),
    );
    expect(await toolNames(checked)).toEqual(['ins.a']);
    await checked.waitForOutput(/Bundle ins: validating a \d+-byte manifest in a worker thread/);
    await checked.stop();

    // a copy grown past twice the limit (1 MiB by default) is not even parsed
    const [manifestKey] = (await bundleCopyKeys(redis, prefix)).filter((k) =>
      k.endsWith(':manifest'),
    );
    const stored = JSON.parse((await redis.get(manifestKey!)) ?? '{}');
    stored.manifest.tools[0].description = 'x'.repeat(3 * 1024 * 1024);
    await redis.set(manifestKey!, JSON.stringify(stored));
    // the Tool Service is down and no copy is taken: not ready
    const gateway = track(
      await GatewayProcess.start({ mcp, env: { REDIS_URL: SHARED_REDIS_URL } }),
    );
    await gateway.waitForOutput(
      /Stored last-good copy of bundle ins is \d+ characters, more than twice discovery.maxManifestBytes; treated as absent/,
    );
    expect(gateway.output).not.toContain('warm start from the Redis copy');
  });

  it('Tool Service comes up later (mid-deploy): healthy on the next cycle, no restart needed', async () => {
    const service = await downService(manifest('ins', [tool({ name: 'ins.a' })]));
    const gateway = track(
      await GatewayProcess.start({ mcp: gatewayConfig([bundle('ins', service, 'ins.')], fast) }),
    );
    await waitFor(
      async () =>
        (await gateway.bundleStatus('ins')).status === 'unreachable' &&
        (await gateway.bundleStatus('ins')).lastAttemptAt !== null,
    );
    await service.listen();
    track(service);
    await gateway.waitForReady(5000);
    expect(await gateway.bundleStatus('ins')).toMatchObject({
      status: 'healthy',
      consecutiveFailures: 0,
      lastFailureReason: null,
    });
    expect(await toolNames(gateway)).toEqual(['ins.a']);
  });

  it('Tool Service goes down after a success: degraded, last good copy listed and callable (the call itself is isError)', async () => {
    const service = track(await TestToolService.start(manifest('ins', [tool({ name: 'ins.a' })])));
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('ins', service, 'ins.')], fast),
        waitReady: true,
      }),
    );
    await service.stop();
    await waitFor(async () => (await gateway.bundleStatus('ins')).status === 'degraded', 5000);
    expect(await toolNames(gateway)).toEqual(['ins.a']);
    expect((await gateway.readiness()).status).toBe(200);
    const call = await callTool(gateway.mcpUrl, 'ins.a');
    expect(call.error).toBeUndefined();
    expect(call.result.isError).toBe(true);
  });

  describe('a bad pull keeps the last good copy, counts failures and names the error type', () => {
    let service: TestToolService;
    let gateway: GatewayProcess;
    const good = manifest('ins', [tool({ name: 'ins.a' }), tool({ name: 'ins.b' })], 'good');

    beforeAll(async () => {
      service = await TestToolService.start(good);
      gateway = await GatewayProcess.start({
        mcp: gatewayConfig([bundle('ins', service, 'ins.')], {
          discovery: { readTimeoutMillis: 600, maxManifestBytes: 65536, maxToolsPerBundle: 3 },
        }),
        waitReady: true,
      });
    });
    afterAll(async () => {
      await gateway?.stop();
      await service?.stop();
    });

    const badTool = (patch: Record<string, unknown>) => ({ ...tool({ name: 'ins.c' }), ...patch });
    const cases: Array<[string, () => void]> = [
      ['BundleIdMismatchError', () => service.setManifest({ ...good, bundleId: 'other' })],
      [
        'ManifestShapeError',
        () => service.setManifest({ bundleId: 'ins', revision: 'x', tools: { not: 'an array' } }),
      ],
      [
        'ToolNamePatternError',
        () =>
          service.setManifest(
            manifest('ins', [tool({ name: 'ins.a' }), tool({ name: 'ins.has space' })]),
          ),
      ],
      [
        'ToolNamePrefixError',
        () =>
          service.setManifest(
            manifest('ins', [tool({ name: 'ins.a' }), tool({ name: 'other.b' })]),
          ),
      ],
      [
        'ToolDescriptionError',
        () =>
          service.setManifest(
            manifest('ins', [tool({ name: 'ins.a' }), badTool({ description: '' })]),
          ),
      ],
      [
        'InputSchemaError',
        () =>
          service.setManifest(
            manifest('ins', [tool({ name: 'ins.a' }), badTool({ inputSchema: { type: 'array' } })]),
          ),
      ],
      [
        'InputSchemaError',
        () =>
          service.setManifest(
            manifest('ins', [
              tool({ name: 'ins.a' }),
              badTool({ inputSchema: { type: 'object', properties: { x: { type: 'strin' } } } }),
            ]),
          ),
      ],
      [
        'ToolVersionError',
        () =>
          service.setManifest(manifest('ins', [tool({ name: 'ins.a' }), badTool({ _meta: {} })])),
      ],
      [
        'ToolMetaError',
        () =>
          service.setManifest(
            manifest('ins', [
              tool({ name: 'ins.a' }),
              badTool({ _meta: { version: '1', timeoutMillis: -5 } }),
            ]),
          ),
      ],
      [
        'DuplicateToolNameError',
        () =>
          service.setManifest(manifest('ins', [tool({ name: 'ins.a' }), tool({ name: 'ins.a' })])),
      ],
      [
        'TooManyToolsError',
        () =>
          service.setManifest(
            manifest(
              'ins',
              ['a', 'b', 'c', 'd'].map((n) => tool({ name: `ins.${n}` })),
            ),
          ),
      ],
      [
        'ManifestHttpStatusError',
        () => (service.manifest = () => ({ status: 503, body: { error: 'deploying' } })),
      ],
      ['ManifestTimeoutError', () => (service.manifest = () => ({ delayMs: 1500, body: good }))],
      ['ManifestTooLargeError', () => (service.manifest = () => ({ streamBytes: 1024 * 1024 }))],
      [
        'ManifestNotJsonError',
        () =>
          (service.manifest = () => ({
            headers: { 'content-type': 'text/html' },
            body: '<html>502</html>',
          })),
      ],
    ];

    it.each(cases)('%s', async (errorType, breakIt) => {
      const before = await gateway.bundleStatus('ins');
      breakIt();
      // contract §8: calling an unknown tool refreshes every bundle once, right now
      await callTool(gateway.mcpUrl, 'ins.not-there');
      const after = await gateway.bundleStatus('ins');
      expect(after).toMatchObject({
        status: 'degraded',
        revision: 'good',
        toolCount: 2,
        lastFailureReason: errorType,
      });
      expect(after.consecutiveFailures).toBe(before.consecutiveFailures + 1);
      expect(await toolNames(gateway)).toEqual(['ins.a', 'ins.b']);
      expect((await gateway.readiness()).status).toBe(200);
      // timestamps left out: their milliseconds may well read 502
      const { lastSuccessAt: _s, lastAttemptAt: _a, ...shown } = after;
      expect(JSON.stringify(shown)).not.toMatch(/http|deploying|502/);
    });

    it('recovers on the next good manifest: healthy, failures reset', async () => {
      service.setManifest(good);
      await callTool(gateway.mcpUrl, 'ins.not-there');
      expect(await gateway.bundleStatus('ins')).toMatchObject({
        status: 'healthy',
        consecutiveFailures: 0,
        lastFailureReason: null,
      });
    });
  });

  it('a successful manifest that drops a tool or changes a schema is reflected on the next cycle; a failed pull drops nothing', async () => {
    const service = track(
      await TestToolService.start(
        manifest('ins', [tool({ name: 'ins.a' }), tool({ name: 'ins.b' })], 'r1'),
      ),
    );
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('ins', service, 'ins.')], fast),
        waitReady: true,
      }),
    );
    const schema = {
      type: 'object',
      properties: { policy: { type: 'string' } },
      required: ['policy'],
    };
    service.setManifest(manifest('ins', [tool({ name: 'ins.a', inputSchema: schema })], 'r2'));
    await waitFor(async () => (await toolNames(gateway)).length === 1, 5000);
    const list = await rpc(gateway.mcpUrl, 'tools/list');
    expect(list.json.result.tools).toEqual([
      expect.objectContaining({ name: 'ins.a', inputSchema: schema }),
    ]);
    await gateway.waitForOutput(/removed \[ins\.b\] changed \[ins\.a\]/);
    service.manifest = () => ({ status: 500 });
    await waitFor(async () => (await gateway.bundleStatus('ins')).consecutiveFailures >= 2, 5000);
    expect(await toolNames(gateway)).toEqual(['ins.a']);
  });

  it('two bundles, one never reachable: no catalog at all, the other tracked; once both succeed the catalog appears', async () => {
    const a = track(await TestToolService.start(manifest('a', [tool({ name: 'a.one' })], 'ra')));
    const b = await downService(manifest('b', [tool({ name: 'b.one' })], 'rb'));
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('a', a, 'a.'), bundle('b', b, 'b.')], fast),
      }),
    );
    await waitFor(async () => (await gateway.bundleStatus('b')).lastAttemptAt !== null);
    expect(await gateway.bundleStatus('a')).toMatchObject({
      status: 'healthy',
      revision: 'ra',
      toolCount: 1,
    });
    expect(await gateway.bundleStatus('b')).toMatchObject({ status: 'unreachable' });
    expect((await rpc(gateway.mcpUrl, 'tools/list')).json.error.message).toContain(
      'Registry unavailable',
    );
    expect((await gateway.readiness()).status).toBe(503);
    await b.listen();
    track(b);
    await gateway.waitForReady(5000);
    expect(await toolNames(gateway)).toEqual(['a.one', 'b.one']);
  });

  it('a bundle with enabled: false is never fetched and shows status disabled', async () => {
    const on = track(await TestToolService.start(manifest('on', [tool({ name: 'on.x' })])));
    const off = track(await TestToolService.start(manifest('off', [tool({ name: 'off.x' })])));
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig(
          [bundle('on', on, 'on.'), bundle('off', off, 'off.', { enabled: false })],
          fast,
        ),
        waitReady: true,
      }),
    );
    await callTool(gateway.mcpUrl, 'off.x'); // a not-found refresh does not fetch it either
    await new Promise((r) => setTimeout(r, 1200)); // and neither does a scheduled refresh
    expect(off.requests).toHaveLength(0);
    expect(await gateway.bundleStatus('off')).toMatchObject({
      status: 'disabled',
      lastAttemptAt: null,
    });
    expect(await toolNames(gateway)).toEqual(['on.x']);
  });

  it('two replicas sharing Redis: a tool published by A after its refresh is callable on B before B refreshes (§8)', async () => {
    const prefix = keyPrefix();
    const service = track(
      await TestToolService.start(manifest('ins', [tool({ name: 'ins.a' })], 'r1')),
    );
    const base = { redis: { keyPrefix: prefix } };
    const env = { REDIS_URL: SHARED_REDIS_URL };
    const a = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('ins', service, 'ins.')], { ...base, ...fast }),
        env,
        waitReady: true,
      }),
    );
    const b = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('ins', service, 'ins.')], {
          ...base,
          registry: { refreshIntervalSeconds: 3600, refreshJitterSeconds: 0 },
        }),
        env,
        waitReady: true,
      }),
    );
    service.setManifest(
      manifest('ins', [tool({ name: 'ins.a' }), tool({ name: 'ins.added' })], 'r2'),
    );
    await waitFor(async () => (await toolNames(a)).includes('ins.added'), 5000);
    expect(await toolNames(b)).toEqual(['ins.a']); // B has not refreshed
    const call = await callTool(b.mcpUrl, 'ins.added', { q: 1 });
    expect(call.result.isError).toBeUndefined();
    expect(service.toolRequests('ins.added')).toHaveLength(1);
    expect(await toolNames(b)).toEqual(['ins.a', 'ins.added']);
  });

  it('a replica restarted while the Tool Service is down serves the Redis copy', async () => {
    const prefix = keyPrefix();
    const service = track(
      await TestToolService.start(manifest('ins', [tool({ name: 'ins.a' })], 'r3')),
    );
    const mcp = gatewayConfig([bundle('ins', service, 'ins.')], { redis: { keyPrefix: prefix } });
    const env = { REDIS_URL: SHARED_REDIS_URL };
    const replica = await GatewayProcess.start({ mcp, env, waitReady: true });
    await waitFor(async () => (await bundleCopyKeys(redis, prefix)).length === 2);
    await service.stop();
    await replica.stop();
    const restarted = track(await GatewayProcess.start({ mcp, env, waitReady: true }));
    expect(await toolNames(restarted)).toEqual(['ins.a']);
    expect(await restarted.bundleStatus('ins')).toMatchObject({
      status: 'degraded',
      source: 'redis',
      revision: 'r3',
    });
  });

  it('a remote success always wins over the Redis copy', async () => {
    const prefix = keyPrefix();
    const service = track(
      await TestToolService.start(manifest('ins', [tool({ name: 'ins.old' })], 'old')),
    );
    const mcp = gatewayConfig([bundle('ins', service, 'ins.')], { redis: { keyPrefix: prefix } });
    const env = { REDIS_URL: SHARED_REDIS_URL };
    const first = await GatewayProcess.start({ mcp, env, waitReady: true });
    await waitFor(async () => (await bundleCopyKeys(redis, prefix)).length === 2);
    await first.stop();
    service.setManifest(manifest('ins', [tool({ name: 'ins.new' })], 'new'));
    const second = track(await GatewayProcess.start({ mcp, env, waitReady: true }));
    expect(await toolNames(second)).toEqual(['ins.new']);
    expect(await second.bundleStatus('ins')).toMatchObject({
      status: 'healthy',
      source: 'remote',
      revision: 'new',
    });
    // and the shared copy now holds the newer manifest
    await waitFor(async () => {
      const stored = await redis.get(`${prefix}:{mcp-gateway-test:ins}:manifest`);
      return stored !== null && JSON.parse(stored).manifest.revision === 'new';
    });
  });

  it('readiness waits for the first pull attempt even when a Redis copy is there (§6)', async () => {
    const prefix = keyPrefix();
    const service = track(
      await TestToolService.start(manifest('ins', [tool({ name: 'ins.a' })], 'r1')),
    );
    const mcp = gatewayConfig([bundle('ins', service, 'ins.')], {
      redis: { keyPrefix: prefix },
      discovery: { readTimeoutMillis: 2500 },
    });
    const env = { REDIS_URL: SHARED_REDIS_URL };
    const first = await GatewayProcess.start({ mcp, env, waitReady: true });
    await waitFor(async () => (await bundleCopyKeys(redis, prefix)).length === 2);
    await first.stop();
    service.manifest = () => ({ hang: true });
    const second = track(await GatewayProcess.start({ mcp, env }));
    await waitFor(() => service.manifestRequests().length >= 2);
    expect((await second.readiness()).status).toBe(503);
    expect(await toolNames(second)).toEqual(['ins.a']); // the warm copy already serves agents
    await second.waitForReady(6000);
    expect(await second.bundleStatus('ins')).toMatchObject({
      status: 'degraded',
      lastFailureReason: 'ManifestTimeoutError',
    });
  });
});
