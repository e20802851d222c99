/**
 * A 2026 client and the resource subscriptions of a 2025 upstream that supports
 * `resources/subscribe`. A 2026 client subscribes by `subscriptions/listen`, which the gateway
 * honours for resources of 2026 upstreams (docs/operations.md §11 "Notification streams"); a 2025
 * upstream's subscriptions serve 2025 sessions. So server/discover must not promise a 2026 client
 * `resources.subscribe` that only a 2025 upstream offers (S26-subs: the acknowledgement names the
 * subset honoured; a server that advertises subscribe and can honour no URI contradicts its own
 * capability), while a 2025 client's initialize still gets it.
 */
import { GatewayProcess, TEST_SESSION_KEYS } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { V1Upstream } from '../../support/mcp-upstreams';
import { modernListen, modernRequest } from '../../support/modern-rpc';
import { rpc } from '../../support/rpc';
import type { SseReader } from '../../support/sse-reader';

describe("era bridging: a 2026 client and a 2025 upstream's resource subscriptions", () => {
  let up: V1Upstream;
  let gateway: GatewayProcess;
  let listen: SseReader | undefined;

  beforeAll(async () => {
    up = await V1Upstream.start({}, { subscribable: true });
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], {
        upstreams: [upstream('repo', up.url, { protocol: '2025-11-25' })],
      }),
      env: { MCP_SESSION_KEYS: TEST_SESSION_KEYS },
      waitReady: true,
    });
  });

  afterAll(async () => {
    listen?.close();
    await gateway?.stop();
    await up?.stop();
  });

  it('server/discover offers a 2026 client no resources.subscribe, and the listen honours no URI of it', async () => {
    const discover = await modernRequest(gateway.mcpUrl, 'server/discover', {}, {});
    expect(discover.json.result.capabilities.resources).toBeDefined();
    expect(discover.json.result.capabilities.resources.subscribe).toBeUndefined();
    listen = await modernListen(
      gateway.mcpUrl,
      'L1',
      { resourceSubscriptions: ['repo://readme'] },
      {},
    );
    const ack = await listen.waitForMessage(
      (m) => m.method === 'notifications/subscriptions/acknowledged',
    );
    expect(ack.params.notifications.resourceSubscriptions).toBeUndefined();
  });

  it("a 2025 client's initialize still offers resources.subscribe (bridged on its session)", async () => {
    const init = await rpc(gateway.mcpUrl, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'c', version: '1' },
    });
    expect(init.json.result.capabilities.resources.subscribe).toBe(true);
  });
});
