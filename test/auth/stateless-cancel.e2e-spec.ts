import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { jwtAuthConfig, TestAuthorizationServer } from '../support/oidc-provider';
import { TestToolService } from '../support/tool-service';

const RESOURCE = 'https://gateway.test/mcp';

/**
 * docs/operations.md §9: in stateless legacy mode "a request that still carries an
 * Mcp-Session-Id ... is served as if it carried none"; libs/mcp/src/answers/in-flight-requests.ts
 * and docs/security.md ("a caller's request ... its notifications/cancelled: bound to that
 * caller"; "a session id seen in a log or a proxy is no credential"): one client can never
 * cancel another's call.
 * In stateless mode the header names no session: a call is cancelled by its own caller on its
 * connection, never by another caller that names the same header value and request id.
 */
describe('stateless mode: notifications/cancelled of another caller, by a session id it names', () => {
  let as: TestAuthorizationServer;
  let service: TestToolService;
  let gateway: GatewayProcess;
  let tokenA: string;
  let tokenB: string;

  beforeAll(async () => {
    as = await TestAuthorizationServer.start({
      resources: { [RESOURCE]: { scope: 'mcp' } },
      defaultResource: RESOURCE,
    });
    service = await TestToolService.start(
      manifest('ins', [tool({ name: 'ins.slow', meta: { timeoutMillis: 30_000 } })]),
    );
    service.tools.set('ins.slow', () => ({ hang: true }));
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('ins', service, 'ins.')], {
          discovery: { maxToolTimeoutMillis: 30_000 },
        }),
        auth: jwtAuthConfig(as, RESOURCE),
        access: {
          rules: [
            { match: { claim: 'groups', value: 'dev' }, sources: ['ins'] },
            { match: { claim: 'groups', value: 'ops' }, tools: ['nothing.here'] },
          ],
        },
      },
      // stateless legacy mode (docs/operations.md §9)
      env: { APP_PROFILE: 'staging', MCP_SESSION_KEYS: undefined },
      waitReady: true,
    });
    tokenA = (await as.mint({ subject: 'alice', claims: { groups: ['dev'] } })).access_token;
    tokenB = (await as.mint({ subject: 'mallory', claims: { groups: ['ops'] } })).access_token;
  }, 120_000);

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([service?.stop(), as?.stop()]);
  });

  const headers = (token: string, session: string): Record<string, string> => ({
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-11-25',
    'mcp-session-id': session,
    authorization: `Bearer ${token}`,
  });

  it("B's notifications/cancelled naming A's session id leaves A's call running", async () => {
    const stale = 'a-session-id-issued-before-a-rollout';
    const controller = new AbortController();
    const call = fetch(gateway.mcpUrl, {
      method: 'POST',
      headers: headers(tokenA, stale),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 5,
        method: 'tools/call',
        params: { name: 'ins.slow', arguments: {} },
      }),
      signal: controller.signal,
    }).catch(() => undefined);
    try {
      await waitFor(() => service.toolRequests('ins.slow').length === 1, 10_000);
      expect(service.openRequests).toBeGreaterThan(0);
      const cancelled = await fetch(gateway.mcpUrl, {
        method: 'POST',
        headers: headers(tokenB, stale),
        body: JSON.stringify({
          jsonrpc: '2.0',
          method: 'notifications/cancelled',
          params: { requestId: 5 },
        }),
      });
      expect(cancelled.status).toBe(202);
      await new Promise((r) => setTimeout(r, 1000));
      // A's call is A's: another caller (with no grant on the bundle) cannot end it
      expect(service.openRequests).toBeGreaterThan(0);
    } finally {
      controller.abort();
      await call;
    }
  });
});
