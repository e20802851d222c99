import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { callTool, rpc } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

/** Discovery (contract §2, §4, §6, §8): pulls, schedule, readiness, not-found refresh. */
describe('bundle discovery', () => {
  const track = stopAfterEach();

  it('pulls with Accept: application/json and without any caller header (§4)', async () => {
    const service = track(await TestToolService.start(manifest('a', [tool({ name: 'a.one' })])));
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('a', service, 'a.')]),
        waitReady: true,
      }),
    );
    await callTool(
      gateway.mcpUrl,
      'a.missing',
      {},
      { guid: 'g-1', 'x-request-id': 'r-1', 'employee-no': 'e-1', authorization: 'Bearer t' },
    );
    const pulls = service.manifestRequests();
    expect(pulls.length).toBeGreaterThanOrEqual(2); // the startup pull and the not-found refresh
    for (const pull of pulls) {
      expect(pull.headers.accept).toBe('application/json');
      for (const name of [
        'guid',
        'x-request-id',
        'employee-no',
        'virtual-employee-no',
        'mcp-session-id',
        'authorization',
        'cookie',
      ]) {
        expect(pull.headers[name]).toBeUndefined();
      }
    }
  });

  it('is not ready before the first pull attempt finishes, and the listeners do not wait for it (§6)', async () => {
    const service = track(await TestToolService.start(manifest('a', [tool({ name: 'a.one' })])));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    service.manifest = async () => {
      await gate;
      return { body: manifest('a', [tool({ name: 'a.one' })]) };
    };
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('a', service, 'a.')], {
          discovery: { readTimeoutMillis: 5000 },
        }),
      }),
    );
    await waitFor(() => service.manifestRequests().length === 1);
    const liveness = await fetch(`${gateway.managementUrl}/actuator/health/liveness`);
    expect(liveness.status).toBe(200);
    const notReady = await gateway.readiness();
    expect(notReady.status).toBe(503);
    expect(notReady.body.details.catalog.firstPullAttemptDone).toBe(false);
    // /actuator/health, the aggregate a generic monitor asks, says the same
    const aggregate = await fetch(`${gateway.managementUrl}/actuator/health`);
    expect(aggregate.status).toBe(503);
    release();
    await gateway.waitForReady();
    expect((await gateway.readiness()).body.details.catalog.toolCount).toBe(1);
    const ready = await fetch(`${gateway.managementUrl}/actuator/health`);
    expect([ready.status, ((await ready.json()) as { status: string }).status]).toEqual([
      200,
      'ok',
    ]);
  });

  it('counts a valid manifest with no tools as a usable snapshot: ready, empty list (§6)', async () => {
    const service = track(await TestToolService.start(manifest('a', [])));
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('a', service, 'a.')]),
        waitReady: true,
      }),
    );
    const list = await rpc(gateway.mcpUrl, 'tools/list');
    expect(list.json.result).toEqual({ tools: [] });
  });

  it('refreshes on schedule, reflecting a changed manifest without a restart (§2)', async () => {
    const service = track(
      await TestToolService.start(manifest('a', [tool({ name: 'a.one' })], 'r1')),
    );
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('a', service, 'a.')], {
          registry: { refreshIntervalSeconds: 1, refreshJitterSeconds: 0 },
        }),
        waitReady: true,
      }),
    );
    service.setManifest(manifest('a', [tool({ name: 'a.one' }), tool({ name: 'a.two' })], 'r2'));
    await waitFor(
      async () => (await rpc(gateway.mcpUrl, 'tools/list')).json.result.tools.length === 2,
      5000,
    );
    expect((await gateway.bundleStatus('a')).revision).toBe('r2');
    await gateway.waitForOutput(/added \[a\.two\]/);
  });

  it('runs one refresh at a time: a slow pull is never overlapped by the next tick (§6)', async () => {
    const service = track(await TestToolService.start(manifest('a', [tool({ name: 'a.one' })])));
    let inFlight = 0;
    let maxInFlight = 0;
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('a', service, 'a.')], {
          registry: { refreshIntervalSeconds: 1, refreshJitterSeconds: 0 },
          discovery: { readTimeoutMillis: 5000 },
        }),
        waitReady: true,
      }),
    );
    service.manifest = async () => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((r) => setTimeout(r, 2500));
      inFlight--;
      return { body: manifest('a', [tool({ name: 'a.one' })]) };
    };
    const before = service.manifestRequests().length;
    await new Promise((r) => setTimeout(r, 4500));
    expect(maxInFlight).toBe(1);
    // about 4.5 s of 1 s ticks against 2.5 s pulls: 2 pulls at most, not 4
    expect(service.manifestRequests().length - before).toBeLessThanOrEqual(2);
    await gateway.waitForOutput('Scheduled refresh skipped');
  });

  it('refuses a manifest over maxManifestBytes without reading it whole (§6)', async () => {
    const service = track(await TestToolService.start(manifest('a', [tool({ name: 'a.one' })])));
    service.manifest = () => ({ streamBytes: 50 * 1024 * 1024 });
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('a', service, 'a.')], {
          discovery: { maxManifestBytes: 65536 },
        }),
      }),
    );
    await waitFor(async () => (await gateway.bundleStatus('a')).lastAttemptAt !== null);
    const status = await gateway.bundleStatus('a');
    expect(status.status).toBe('unreachable');
    expect(status.lastFailureReason).toBe('ManifestTooLargeError');
  });

  it('calls a tool added after the last pull by refreshing once (§8)', async () => {
    const service = track(
      await TestToolService.start(manifest('a', [tool({ name: 'a.one' })], 'r1')),
    );
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('a', service, 'a.')]),
        waitReady: true,
      }),
    );
    service.setManifest(manifest('a', [tool({ name: 'a.one' }), tool({ name: 'a.new' })], 'r2'));
    const pulls = service.manifestRequests().length;
    const response = await callTool(gateway.mcpUrl, 'a.new', { n: 1 });
    expect(response.result.isError).toBeUndefined();
    expect(service.toolRequests('a.new')).toHaveLength(1);
    expect(service.manifestRequests().length - pulls).toBe(1);
  });

  it('answers -32001 for a tool still missing after exactly one refresh (§8)', async () => {
    const service = track(await TestToolService.start(manifest('a', [tool({ name: 'a.one' })])));
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('a', service, 'a.')]),
        waitReady: true,
      }),
    );
    const pulls = service.manifestRequests().length;
    const response = await callTool(gateway.mcpUrl, 'a.nope');
    expect(response.error.code).toBe(-32001);
    expect(service.manifestRequests().length - pulls).toBe(1);
  });

  it('answers misses that arrive while a refresh runs from one round that starts after it (§8)', async () => {
    const service = track(await TestToolService.start(manifest('a', [tool({ name: 'a.one' })])));
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('a', service, 'a.')], {
          discovery: { readTimeoutMillis: 5000 },
        }),
        waitReady: true,
      }),
    );
    service.manifest = async () => {
      await new Promise((r) => setTimeout(r, 500));
      return { body: manifest('a', [tool({ name: 'a.one' })]) };
    };
    const pulls = service.manifestRequests().length;
    const answers = await Promise.all(
      [1, 2, 3, 4, 5].map((i) => callTool(gateway.mcpUrl, `a.missing${i}`)),
    );
    for (const a of answers) expect(a.error.code).toBe(-32001);
    // the first arrivals start a round; the ones that arrive while it runs share the next one
    expect(service.manifestRequests().length - pulls).toBeGreaterThanOrEqual(1);
    expect(service.manifestRequests().length - pulls).toBeLessThanOrEqual(2);
  });

  it('does not turn a stream of unknown tool names into a stream of manifest pulls (throttle of §8 refreshes)', async () => {
    const service = track(await TestToolService.start(manifest('a', [tool({ name: 'a.one' })])));
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('a', service, 'a.')], {
          registry: { notFoundRefreshMinIntervalMillis: 1000 },
        }),
        waitReady: true,
      }),
    );
    await new Promise((r) => setTimeout(r, 1100)); // the startup pull is now older than the interval
    const pulls = service.manifestRequests().length;
    const flood = await Promise.all(
      Array.from({ length: 30 }, (_, i) => callTool(gateway.mcpUrl, `a.nope${i}`)),
    );
    for (const answer of flood) expect(answer.error.code).toBe(-32001);
    // the 30 unknown names shared one refresh (two if they straddled a round's start)
    expect(service.manifestRequests().length - pulls).toBeLessThanOrEqual(2);
    expect(service.manifestRequests().length - pulls).toBeGreaterThanOrEqual(1);
    // a second burst within the interval waits for the next allowed round: one more pull
    const burst = service.manifestRequests().length;
    await Promise.all([1, 2, 3].map((i) => callTool(gateway.mcpUrl, `a.again${i}`)));
    expect(service.manifestRequests().length - burst).toBe(1);
    // a refresh an agent triggered is background work: its log lines carry no caller ids
    await callTool(gateway.mcpUrl, 'a.nope-late', {}, { 'x-request-id': 'rq-throttle' });
    service.setManifest(manifest('a', [tool({ name: 'a.one' }), tool({ name: 'a.two' })], 'r2'));
    await new Promise((r) => setTimeout(r, 1100));
    await callTool(gateway.mcpUrl, 'a.two', {}, { 'x-request-id': 'rq-refresh' });
    await gateway.waitForOutput(/Catalog published: 2 tools/);
    const published = gateway.stdout
      .split('\n')
      .find((l) => l.includes('Catalog published: 2 tools'))!;
    expect(JSON.parse(published).requestId).toBeUndefined();
  });

  it('validates a small manifest holding a large schema in a worker thread too (one compile cannot be sliced), with the same rules', async () => {
    // 3,000 properties: about 2.5 s of ajv on the event loop, in a manifest of 160 KB
    const wide = (extra: Record<string, unknown> = {}) => ({
      type: 'object',
      properties: {
        ...Object.fromEntries(
          Array.from({ length: 3_000 }, (_, i) => [`p${i}`, { type: 'string' }]),
        ),
        ...extra,
      },
    });
    const service = track(
      await TestToolService.start(
        manifest('wide', [tool({ name: 'wide.form', inputSchema: wide() })], 'w1'),
      ),
    );
    expect(JSON.stringify(wide()).length).toBeLessThan(256 * 1024);
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('wide', service, 'wide.')]),
        env: { LOG_LEVEL: 'debug' },
        waitReady: true,
      }),
    );
    await gateway.waitForOutput(/Bundle wide: validating a \d+-byte manifest in a worker thread/);
    const list = await rpc(gateway.mcpUrl, 'tools/list');
    expect(list.json.result.tools.map((t: { name: string }) => t.name)).toEqual(['wide.form']);
    // the worker applies the same rules: a schema that does not compile rejects the manifest
    service.setManifest(
      manifest(
        'wide',
        [tool({ name: 'wide.form', inputSchema: wide({ bad: { $ref: '#/$defs/nowhere' } }) })],
        'w2',
      ),
    );
    await callTool(gateway.mcpUrl, 'wide.nope');
    await gateway.waitForOutput(/wide revision w2: remote manifest rejected \(InputSchemaError\)/);
    expect(await gateway.bundleStatus('wide')).toMatchObject({ revision: 'w1' });
  });

  it('validates a large manifest (over 256 KiB) in a worker thread with the same rules and outcome', async () => {
    const many = (n: number, bad?: string) =>
      manifest(
        'big',
        Array.from({ length: n }, (_, i) =>
          tool({
            name: bad !== undefined && i === n - 1 ? bad : `big.t${String(i).padStart(4, '0')}`,
            description: `Tool ${i}: ${'looks up records of the large bundle and answers them. '.repeat(3)}`,
            inputSchema: {
              type: 'object',
              properties: { [`q${i}`]: { type: 'string', maxLength: 100 } },
            },
          }),
        ),
        `rev-${n}`,
      );
    const service = track(await TestToolService.start(many(1500)));
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('big', service, 'big.')], {
          discovery: {
            maxToolsPerBundle: 2000,
            maxToolsTotal: 2000,
            maxManifestBytes: 8 * 1024 * 1024,
          },
        }),
        waitReady: true,
      }),
    );
    expect(JSON.stringify(many(1500)).length).toBeGreaterThan(256 * 1024);
    const list = await rpc(gateway.mcpUrl, 'tools/list');
    expect(list.json.result.tools).toHaveLength(1500);
    expect(list.json.result.tools[1499]).toMatchObject({
      name: 'big.t1499',
      inputSchema: { properties: { q1499: { maxLength: 100 } } },
    });
    expect(
      (await callTool(gateway.mcpUrl, 'big.t0042', { q42: 'x' })).result.isError,
    ).toBeUndefined();

    // one bad tool rejects the whole large manifest by name, the last good copy stays
    service.setManifest(many(1501, 'other.t9999'));
    await callTool(gateway.mcpUrl, 'big.nope');
    expect(await gateway.bundleStatus('big')).toMatchObject({
      status: 'degraded',
      revision: 'rev-1500',
      lastFailureReason: 'ToolNamePrefixError',
    });
    await gateway.waitForOutput(
      /big revision rev-1501: remote manifest rejected \(ToolNamePrefixError\)/,
    );

    // bytes that are not UTF-8 are not JSON
    service.manifest = () => ({
      headers: { 'content-type': 'application/json' },
      body: Buffer.concat([Buffer.from(JSON.stringify(many(1500))), Buffer.from([0xff])]),
    });
    await callTool(gateway.mcpUrl, 'big.nope');
    expect(await gateway.bundleStatus('big')).toMatchObject({
      lastFailureReason: 'ManifestNotJsonError',
      revision: 'rev-1500',
    });

    // a good change is published
    service.setManifest(many(1600));
    await callTool(gateway.mcpUrl, 'big.t1550');
    expect(await gateway.bundleStatus('big')).toMatchObject({
      status: 'healthy',
      revision: 'rev-1600',
      toolCount: 1600,
    });
    expect(service.toolRequests('big.t1550')).toHaveLength(1);
  });

  it('adopts an unchanged manifest again without validating it, and says healthy', async () => {
    const service = track(
      await TestToolService.start(manifest('a', [tool({ name: 'a.one' })], 'same')),
    );
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('a', service, 'a.')]),
        waitReady: true,
      }),
    );
    const before = await gateway.bundleStatus('a');
    await callTool(gateway.mcpUrl, 'a.missing');
    const after = await gateway.bundleStatus('a');
    expect(after).toMatchObject({ status: 'healthy', revision: 'same', consecutiveFailures: 0 });
    expect(Date.parse(after.lastSuccessAt)).toBeGreaterThan(Date.parse(before.lastSuccessAt));
    // the first publication's line is written after the catalog is swapped in (readiness can
    // answer first on a busy machine); the round the miss caused published nothing more
    await gateway.waitForOutput(/Catalog published/);
    expect(gateway.output.match(/Catalog published/g)).toHaveLength(1);
  });

  it('ignores a baseEndpoint inside the manifest: calls go where the config says (§1, §5)', async () => {
    const service = track(await TestToolService.start({}));
    const decoy = track(await TestToolService.start({}));
    service.setManifest({
      ...manifest('a', [tool({ name: 'a.one' })]),
      baseEndpoint: decoy.baseEndpoint,
    });
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('a', service, 'a.')]),
        waitReady: true,
      }),
    );
    await callTool(gateway.mcpUrl, 'a.one');
    expect(service.toolRequests('a.one')).toHaveLength(1);
    expect(decoy.requests).toHaveLength(0);
  });

  it('publishes long tool names up to 64 characters unchanged and calls them by that name (B01, bundle side)', async () => {
    const long = 'search_issues_by_jql_with_pagination_and_field_selection';
    const service = track(await TestToolService.start(manifest('jira', [tool({ name: long })])));
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('jira', service, 'search_')]),
        waitReady: true,
      }),
    );
    const list = await rpc(gateway.mcpUrl, 'tools/list');
    expect(list.json.result.tools.map((t: { name: string }) => t.name)).toEqual([long]);
    await callTool(gateway.mcpUrl, long, { jql: 'project = X' });
    expect(service.toolRequests(long)[0]!.path).toBe(`/mcp/${long}`);
  });

  it('rejects the whole bundle when one tool name breaks the name rules, naming bundle, revision and tool in the log (B01)', async () => {
    const bad = 'search_rapport_données';
    const service = track(
      await TestToolService.start(
        manifest('jira', [tool({ name: 'search_ok' }), tool({ name: bad })], 'rev-7'),
      ),
    );
    const gateway = track(
      await GatewayProcess.start({ mcp: gatewayConfig([bundle('jira', service, 'search_')]) }),
    );
    await waitFor(async () => (await gateway.bundleStatus('jira')).lastAttemptAt !== null);
    expect((await gateway.bundleStatus('jira')).lastFailureReason).toBe('ToolNamePatternError');
    await gateway.waitForOutput(
      /Bundle jira revision rev-7: remote manifest rejected \(ToolNamePatternError\)/,
    );
    await gateway.waitForOutput(bad);
  });
});
