import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool, upstream } from '../support/fixtures';
import { rpc } from '../support/rpc';
import { SseReader } from '../support/sse-reader';
import { V1StormUpstream, V2StormUpstream, type StormOptions } from '../support/storm-upstream';
import { TestToolService } from '../support/tool-service';

/**
 * docs/operations.md §10 "Lists": an upstream's notifications/*\/list_changed refreshes that
 * upstream alone, flood-limited per upstream (registry.listChangedRefreshMinIntervalMillis,
 * default 1000 ms): the first notification of a burst pulls at once, the rest are coalesced
 * into a later pull that sees the state after the burst; no bundle manifest and no other
 * upstream is pulled, and the burst is logged once.
 *
 * One gateway (default flood limit, no scheduled round during the suite) in front of a 2025
 * storming upstream (v1 SDK, GET stream), a 2026 storming upstream (v2 SDK, listens), a quiet
 * upstream and a Tool Service bundle.
 */
describe('a list_changed storm refreshes only the upstream that sent it, coalesced', () => {
  let storm: V1StormUpstream;
  let storm26: V2StormUpstream;
  let quiet: V1StormUpstream;
  let service: TestToolService;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    [storm, storm26, quiet, service] = await Promise.all([
      V1StormUpstream.start(),
      V2StormUpstream.start(),
      V1StormUpstream.start(),
      TestToolService.start(manifest('svc', [tool({ name: 'svc.echo' })])),
    ]);
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('svc', service, 'svc.')], {
        // no scheduled round while the suite runs: every pull counted is caused by the storm
        registry: { refreshIntervalSeconds: 3600 },
        upstreams: [
          upstream('storm', storm.url),
          upstream('storm26', storm26.url),
          upstream('quiet', quiet.url),
        ],
      }),
      waitReady: true,
    });
    await waitFor(
      () => storm.openGetStreams === 1,
      20_000,
      () => `the gateway opened no GET stream on the storming upstream:\n${gateway.output}`,
    );
  }, 90_000);

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([storm?.stop(), storm26?.stop(), quiet?.stop(), service?.stop()]);
  });

  /** Pulls of every source but the storming one: the quiet upstream's lists, the manifest. */
  const otherSourcePulls = (...others: { count(method: string): number }[]): number =>
    others.reduce((n, o) => n + o.count('tools/list') + o.count('resources/list'), 0) +
    service.manifestRequests().length;

  const names = async (method: string, key: string, field = 'name'): Promise<string[]> =>
    ((await rpc(gateway.mcpUrl, method)).json.result[key] as Record<string, string>[]).map(
      (i) => i[field] as string,
    );

  /**
   * Sends the storm and waits until the gateway publishes its last generation, then for twice
   * the flood limit more (a late pull would be counted); returns the storm's duration.
   */
  async function stormAndSettle(
    upstreamOf: V1StormUpstream | V2StormUpstream,
    id: string,
    options: StormOptions,
  ): Promise<number> {
    const started = performance.now();
    await upstreamOf.storm(options);
    const stormMs = performance.now() - started;
    const last = `${id}__gen_${upstreamOf.generation}`;
    await waitFor(
      async () => (await names('tools/list', 'tools')).includes(last),
      15_000,
      () => `${last} was never published:\n${gateway.output}`,
    );
    await new Promise((r) => setTimeout(r, 2500));
    return stormMs;
  }

  /**
   * The bound for a 1 s storm (3 pulls; docs/security.md, "Refresh work"), widened only if this
   * machine stretched the storm.
   */
  const pullBound = (stormMs: number): number => Math.max(3, 2 + Math.ceil(stormMs / 1000));

  it('100 tools/list_changed 10 ms apart on the GET stream (2025): at most 3 pulls of it, none of another upstream or the manifest, the last state published, one log line, and clients told at once', async () => {
    const session = await rpc(gateway.mcpUrl, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'storm-e2e', version: '1' },
    });
    const sessionId = session.headers.get('mcp-session-id') as string;
    const clientStream = await SseReader.open(gateway.mcpUrl, 'GET', {
      accept: 'text/event-stream',
      'mcp-session-id': sessionId,
      'mcp-protocol-version': '2025-11-25',
    });
    try {
      expect(clientStream.status).toBe(200);
      const pullsBefore = storm.count('tools/list');
      const othersBefore = otherSourcePulls(quiet, storm26);
      const logBefore = gateway.output.length;

      const stormMs = await stormAndSettle(storm, 'storm', { count: 100, intervalMs: 10 });

      const pulls = storm.count('tools/list') - pullsBefore;
      expect(pulls).toBeGreaterThanOrEqual(1);
      expect(pulls).toBeLessThanOrEqual(pullBound(stormMs));
      expect(otherSourcePulls(quiet, storm26) - othersBefore).toBe(0);
      const names100 = await names('tools/list', 'tools');
      expect(names100.filter((n) => n.startsWith('storm__'))).toEqual([
        `storm__gen_${storm.generation}`,
        'storm__stable',
      ]);
      expect(names100).toContain('svc.echo');
      expect(names100).toContain('quiet__stable');
      // one log line for the burst, not one per notification; written as the burst ends, which
      // a loaded machine may put after the last pull: waited for, then counted
      const logged = (): string[] =>
        gateway.output
          .slice(logBefore)
          .split('\n')
          .filter((l) => l.includes('Upstream storm:') && l.includes('list_changed'));
      await waitFor(
        () => logged().length > 0,
        5000,
        () => gateway.output.slice(logBefore),
      );
      expect(logged()).toHaveLength(1);
      // the client's stream got the catalog's own list_changed (at most one per publication)
      await clientStream.waitForMessage((m) => m.method === 'notifications/tools/list_changed');
      expect(
        clientStream.messages.filter((m) => m.method === 'notifications/tools/list_changed').length,
      ).toBeLessThanOrEqual(pulls);
    } finally {
      clientStream.close();
    }
  }, 60_000);

  it('resources and prompts list_changed storms are coalesced the same way, and their last lists are published', async () => {
    const pullsBefore = storm.count('resources/list');
    const othersBefore = otherSourcePulls(quiet, storm26);
    const stormMs = await stormAndSettle(storm, 'storm', {
      count: 100,
      intervalMs: 10,
      lists: ['resources', 'prompts'],
    });
    const pulls = storm.count('resources/list') - pullsBefore;
    expect(pulls).toBeGreaterThanOrEqual(1);
    expect(pulls).toBeLessThanOrEqual(pullBound(stormMs));
    expect(otherSourcePulls(quiet, storm26) - othersBefore).toBe(0);
    expect(await names('resources/list', 'resources', 'uri')).toContain(
      `storm://gen/${storm.generation}`,
    );
    expect(await names('prompts/list', 'prompts')).toContain(`storm__prompt_${storm.generation}`);
  }, 60_000);

  it('2026: 100 list_changed through three listens (300 notifications at the gateway): at most 3 pulls of it, none of another source, the last state published', async () => {
    const listens = await Promise.all(
      ['a', 'b', 'c'].map((id) =>
        SseReader.open(
          gateway.mcpUrl,
          'POST',
          {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2026-07-28',
            'mcp-method': 'subscriptions/listen',
          },
          JSON.stringify({
            jsonrpc: '2.0',
            id,
            method: 'subscriptions/listen',
            params: {
              _meta: {
                'io.modelcontextprotocol/protocolVersion': '2026-07-28',
                'io.modelcontextprotocol/clientCapabilities': {},
                'io.modelcontextprotocol/clientInfo': { name: 'storm-e2e', version: '1' },
              },
              notifications: {
                toolsListChanged: true,
                resourcesListChanged: true,
                promptsListChanged: true,
              },
            },
          }),
        ),
      ),
    );
    try {
      await waitFor(
        () => storm26.openListens === 3,
        20_000,
        () => `the gateway holds ${storm26.openListens} listens on the 2026 upstream`,
      );
      const pullsBefore = storm26.count('tools/list');
      const othersBefore = otherSourcePulls(quiet, storm);
      const stormMs = await stormAndSettle(storm26, 'storm26', {
        count: 100,
        intervalMs: 10,
        lists: ['tools', 'resources', 'prompts'],
      });
      const pulls = storm26.count('tools/list') - pullsBefore;
      expect(pulls).toBeGreaterThanOrEqual(1);
      expect(pulls).toBeLessThanOrEqual(pullBound(stormMs));
      expect(otherSourcePulls(quiet, storm) - othersBefore).toBe(0);
      expect(await names('prompts/list', 'prompts')).toContain(
        `storm26__prompt_${storm26.generation}`,
      );
    } finally {
      for (const l of listens) l.close();
    }
  }, 60_000);
});
