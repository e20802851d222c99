import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { GatewayProcess, TEST_SESSION_KEYS } from '../support/gateway-process';
import { openLegacySession, rpc } from '../support/rpc';
import { SseReader } from '../support/sse-reader';
import { TestToolService } from '../support/tool-service';

/** A 2025 session's GET stream (or its refusal). */
function openGet(url: string, session: Record<string, string>): Promise<SseReader> {
  return SseReader.open(url, 'GET', { ...session, accept: 'text/event-stream' });
}

/**
 * What a sealed 2025 session id is bound to (docs/security.md "Sessions and notification
 * streams"): its expiry, and with `mcp.auth` on its caller — also on the paths beside a plain
 * POST (the GET stream), and across replicas whose configuration drifted.
 */
describe('a 2025 session is bound to its expiry and its caller', () => {
  let service: TestToolService;

  beforeAll(async () => {
    service = await TestToolService.start(manifest('svc', [tool({ name: 'svc.echo' })]));
  });
  afterAll(async () => {
    await service?.stop();
  });

  describe('session.ttlSeconds: 3', () => {
    let gateway: GatewayProcess;
    beforeAll(async () => {
      gateway = await GatewayProcess.start({
        mcp: { ...gatewayConfig([bundle('svc', service, 'svc.')]), session: { ttlSeconds: 3 } },
        env: { MCP_SESSION_KEYS: TEST_SESSION_KEYS },
        waitReady: true,
      });
    }, 60_000);
    afterAll(async () => {
      await gateway?.stop();
    });

    it('a GET stream ends when its session id expires, as a new request on it is 404', async () => {
      const session = await openLegacySession(gateway.mcpUrl);
      const get = await openGet(gateway.mcpUrl, session);
      try {
        expect(get.status).toBe(200);
        // the session lives 3 s: the stream ends soon after, whatever the machine's load
        await get.waitForEnd(20_000);
        const metrics = await (await fetch(`${gateway.managementUrl}/actuator/prometheus`)).text();
        expect(metrics).toContain(
          'mcp_gateway_notification_streams_closed_total{reason="session_expired"} 1',
        );
        expect((await rpc(gateway.mcpUrl, 'tools/list', {}, session)).status).toBe(404);
      } finally {
        get.close();
      }
    }, 40_000);
  });
});
