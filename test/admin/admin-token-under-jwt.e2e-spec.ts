import { stopAfterEach } from '../support/cleanup';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { GatewayProcess, TEST_SESSION_KEYS } from '../support/gateway-process';
import { TestToolService } from '../support/tool-service';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * docs/operations.md §15 "Access": "With a JWT verifier the static token is not accepted".
 * helm/mcp-gateway/README.md "Callers, the admin token and the console in a cluster" tells an
 * operator to map MCP_ADMIN_TOKEN from a Secret for /admin and the console; with mcp.auth.mode
 * jwt on as well, that token opens nothing. The boot log then says the opposite: a short one
 * gets "MCP_ADMIN_TOKEN has fewer than 32 characters: it opens /admin and can be guessed", and
 * nothing says the token is ignored — the operator finds out from 401s in the console.
 */
describe('MCP_ADMIN_TOKEN set beside mcp.auth.mode jwt (outside local)', () => {
  const track = stopAfterEach();

  it('is not accepted, and the boot log says it is not used instead of that it opens /admin', async () => {
    const service = track(await TestToolService.start(manifest('a', [tool({ name: 'a.t' })])));
    const gateway = track(
      await GatewayProcess.start({
        mcp: {
          ...gatewayConfig([bundle('a', service, 'a.')]),
          auth: {
            mode: 'jwt',
            issuer: 'https://idp.test',
            audience: 'https://gw.test/mcp',
            jwksUrl: 'http://127.0.0.1:9/jwks',
          },
        },
        env: {
          APP_PROFILE: 'staging',
          MCP_ADMIN_TOKEN: 'short',
          MCP_SESSION_KEYS: TEST_SESSION_KEYS,
        },
        waitReady: true,
      }),
    );
    await gateway.waitForOutput(/\/admin\/upstreams on the management port: writes/);
    await sleep(300);
    // as documented: the static token is refused under jwt
    const res = await fetch(`${gateway.managementUrl}/admin/upstreams`, {
      method: 'POST',
      headers: { authorization: 'Bearer short', 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'x', url: 'http://127.0.0.1:9/mcp' }),
    });
    expect(res.status).toBe(401);
    // so the boot log must not claim it opens /admin …
    expect(gateway.output).not.toMatch(/MCP_ADMIN_TOKEN[^\n]*opens \/admin/);
    // … and should say it is not used
    expect(gateway.output).toMatch(/MCP_ADMIN_TOKEN[^\n]*(not used|ignored|not accepted)/i);
  });
});
