import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { GatewayProcess, TEST_SESSION_KEYS } from '../support/gateway-process';
import { jwtAuthConfig, TestAuthorizationServer } from '../support/oidc-provider';
import { openLegacySession, rpc } from '../support/rpc';
import { SseReader } from '../support/sse-reader';
import { TestToolService } from '../support/tool-service';

const RESOURCE = 'https://gateway.test/mcp';

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

  describe('replicas with the same keys and identity, one with mcp.auth off', () => {
    let as: TestAuthorizationServer;
    let open: GatewayProcess;
    let guarded: GatewayProcess;
    beforeAll(async () => {
      as = await TestAuthorizationServer.start({
        resources: { [RESOURCE]: { scope: 'mcp' } },
        defaultResource: RESOURCE,
      });
      const config = gatewayConfig([bundle('svc', service, 'svc.')]);
      [open, guarded] = await Promise.all([
        GatewayProcess.start({
          mcp: config,
          env: { MCP_SESSION_KEYS: TEST_SESSION_KEYS },
          waitReady: true,
        }),
        GatewayProcess.start({
          mcp: { ...config, auth: jwtAuthConfig(as, RESOURCE) },
          env: { MCP_SESSION_KEYS: TEST_SESSION_KEYS },
          waitReady: true,
        }),
      ]);
    }, 120_000);
    afterAll(async () => {
      await Promise.all([open?.stop(), guarded?.stop()]);
      await as?.stop();
    });

    it('a session opened without a caller is 404 for every caller where auth is on (POST, GET)', async () => {
      const anonymous = await openLegacySession(open.mcpUrl);
      const sid = anonymous['mcp-session-id'] as string;
      for (const subject of ['alice', 'bob']) {
        const token = (await as.mint({ subject, resource: RESOURCE })).access_token;
        const on = {
          authorization: `Bearer ${token}`,
          'mcp-session-id': sid,
          'mcp-protocol-version': '2025-11-25',
        };
        expect((await rpc(guarded.mcpUrl, 'tools/list', {}, on)).status).toBe(404);
        const get = await openGet(guarded.mcpUrl, on);
        try {
          expect(get.status).toBe(404);
        } finally {
          get.close();
        }
        // the caller's own session works there
        const own = await openLegacySession(guarded.mcpUrl, { authorization: `Bearer ${token}` });
        expect((await rpc(guarded.mcpUrl, 'tools/list', {}, own)).status).toBe(200);
      }
    }, 60_000);
  });
});
