import { gatewayConfig, upstream } from '../support/fixtures';
import { V2Upstream } from '../support/mcp-upstreams';
import { GatewayProcess } from '../support/gateway-process';
import { ADMIN_TOKEN, admin } from '../admin/admin-support';

/**
 * docs/operations.md §15: a registration's tokenExchange audience may not be "the audience of an
 * upstream registered before it (URLs compared normalized)": 409. audienceKey
 * (libs/config/src/registration-credentials.ts) compares the RFC 3986 §6.2.2 normal form, so a
 * percent-encoded unreserved character (RFC 3986 §6.2.2.2: equivalent) or a host's trailing
 * root dot spells the same audience, which is not taken a second time.
 */
describe('spellings of a held tokenExchange audience', () => {
  let calc: V2Upstream;
  let owner: V2Upstream;
  let thief: V2Upstream;
  let g: GatewayProcess;
  const exchange = (audience: string) => ({
    mode: 'tokenExchange',
    tokenEndpoint: 'http://127.0.0.1:9/oauth2/token',
    clientId: 'gw',
    clientSecretEnv: 'MCP_UPSTREAM_SECRET_GW',
    audience,
  });

  beforeAll(async () => {
    [calc, owner, thief] = await Promise.all([
      V2Upstream.start(),
      V2Upstream.start(),
      V2Upstream.start(),
    ]);
    g = await GatewayProcess.start({
      mcp: gatewayConfig([], {
        upstreams: [
          upstream('calc', calc.url, { authorization: exchange('https://calc.example/mcp') }),
        ],
      }),
      env: { MCP_ADMIN_TOKEN: ADMIN_TOKEN, MCP_UPSTREAM_SECRET_GW: 'client-secret-1' },
    });
    const first = await admin(g, 'POST', '/admin/upstreams', {
      id: 'owner',
      url: owner.url,
      authorization: exchange('https://owner.example/api/mcp'),
    });
    expect(first.status).toBe(202);
  }, 90_000);

  afterAll(async () => {
    await g?.stop();
    await Promise.all([calc?.stop(), owner?.stop(), thief?.stop()]);
  });

  let n = 0;
  it.each([
    'https://owner.example/api/mcp/',
    'HTTPS://Owner.Example:443/api/mcp',
    ' https://owner.example/api/mcp ',
    'https://owner.example/api/./mcp',
    'https://owner.example/api/%6Dcp',
    'https://owner.example/%61pi/mcp',
    'https://owner.example./api/mcp',
  ])('%j is 409', async (audience) => {
    n += 1;
    const res = await admin(g, 'POST', '/admin/upstreams', {
      id: `thief${n}`,
      url: thief.url,
      authorization: exchange(audience),
    });
    expect({ audience, status: res.status }).toEqual({ audience, status: 409 });
  });

  it.each(['https://calc.example/mcp/', 'https://calc.example/%6Dcp', 'https://calc.example./mcp'])(
    'the configured upstream audience spelled %j is 400',
    async (audience) => {
      n += 1;
      const res = await admin(g, 'POST', '/admin/upstreams', {
        id: `thief${n}`,
        url: thief.url,
        authorization: exchange(audience),
      });
      expect({ audience, status: res.status }).toEqual({ audience, status: 400 });
    },
  );
});
