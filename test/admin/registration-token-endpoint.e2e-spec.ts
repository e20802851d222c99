import { gatewayConfig, upstream } from '../support/fixtures';
import { V2Upstream } from '../support/mcp-upstreams';
import { stopAfterEach } from '../support/cleanup';
import { ADMIN_TOKEN, admin, startGateway } from './admin-support';

/**
 * docs/security.md "Runtime registrations": tokenExchange only at "the exact `tokenEndpoint` of a
 * configured bundle or upstream, or any endpoint at the origin of `mcp.auth.issuer` …"; 400 naming
 * `authorization.tokenEndpoint` otherwise; never `passthrough`. Other spellings of a trusted
 * endpoint, and of passthrough, are held to the same rule.
 */
describe("a registration's tokenEndpoint and passthrough, in any spelling", () => {
  const track = stopAfterEach();
  let calc: V2Upstream;
  let reg: V2Upstream;
  beforeAll(async () => {
    [calc, reg] = await Promise.all([V2Upstream.start(), V2Upstream.start()]);
  });
  afterAll(async () => {
    await Promise.all([calc?.stop(), reg?.stop()]);
  });

  it('only the same URL (as the URL parser writes it) is trusted', async () => {
    const trusted = 'http://127.0.0.1:9/oauth2/token';
    const gateway = await startGateway(
      {
        mcp: gatewayConfig([], {
          upstreams: [
            upstream('calc', calc.url, {
              authorization: {
                mode: 'tokenExchange',
                tokenEndpoint: trusted,
                clientId: 'gw',
                clientSecretEnv: 'MCP_UPSTREAM_SECRET_GW',
                audience: 'https://calc.example/mcp',
              },
            }),
          ],
        }),
        env: { MCP_ADMIN_TOKEN: ADMIN_TOKEN, MCP_UPSTREAM_SECRET_GW: 'x' },
      },
      track,
    );
    const variants = [
      'http://127.0.0.1:9/oauth2/token/',
      'http://u@127.0.0.1:9/oauth2/token',
      'http://u:p@127.0.0.1:9/oauth2/token',
      'http://[::ffff:127.0.0.1]:9/oauth2/token',
      'http://127.0.0.1:9/oauth2/%74oken',
      'http://127.0.0.1:9/oauth2/token?x=1',
      'http://127.0.0.1:9/oauth2/token#x',
      'http://127.0.0.1:09/oauth2/token/..',
      'https://127.0.0.1:9/oauth2/token',
      'http://127.0.0.1:90/oauth2/token',
      'http://localhost:9/oauth2/token',
    ];
    const answers: Record<string, number> = {};
    let i = 0;
    for (const tokenEndpoint of variants) {
      const res = await admin(gateway, 'POST', '/admin/upstreams', {
        id: `v${i++}`,
        url: reg.url,
        authorization: {
          mode: 'tokenExchange',
          tokenEndpoint,
          clientId: 'gw',
          clientSecretEnv: 'MCP_UPSTREAM_SECRET_GW',
          audience: `https://reg${i}.example/mcp`,
        },
      });
      answers[tokenEndpoint] = res.status;
    }
    const passthrough: Record<string, number> = {};
    for (const mode of ['passthrough', 'Passthrough', 'passthrough ', 'PASSTHROUGH']) {
      const res = await admin(gateway, 'POST', '/admin/upstreams', {
        id: `p${i++}`,
        url: reg.url,
        authorization: { mode },
      });
      passthrough[JSON.stringify(mode)] = res.status;
    }
    const expected: Record<string, number> = {};
    for (const v of variants) expected[v] = 400;
    // `/oauth2/token/..` parses to `/oauth2/` (another URL): 400 too; `09` is port 9 and
    // `/token/..` another path, so 400
    expect(answers).toEqual(expected);
    expect(Object.values(passthrough)).toEqual([400, 400, 400, 400]);
  });
});
