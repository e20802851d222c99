/**
 * 2026-07-28 HTTP status of "method not found" (S26-http; wire notes §1.2 table "method not
 * implemented → 404 -32601", §5: -32601 is "unknown method, or a method gated by a capability the
 * server didn't advertise; 2026 HTTP: **404**"; G-19). A gateway in front of a 2026 server that
 * does not offer `completions` advertises no `completions` either (server/discover), yet a 2026
 * client's `completion/complete` is forwarded and the upstream's 404 -32601 comes back as an
 * in-band error on HTTP 200. Directly the same upstream answers 404. (A v2 client tells the two
 * apart: a 404 is an HTTP error, a 200 a JSON-RPC one.)
 */
import { GatewayProcess } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { V2Upstream } from '../../support/mcp-upstreams';
import { modernRequest } from '../../support/modern-rpc';

describe('era: completion/complete on a catalog without completions, 2026 client', () => {
  let up: V2Upstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    up = await V2Upstream.start();
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], { upstreams: [upstream('u', up.url)] }),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await up?.stop();
  });

  const params = {
    ref: { type: 'ref/resource', uri: 'calc://constants/pi' },
    argument: { name: 'x', value: '' },
  };

  it('directly: 404 -32601, and no completions capability', async () => {
    const discover = await modernRequest(up.url, 'server/discover', {}, {});
    expect(discover.json.result.capabilities.completions).toBeUndefined();
    const answer = await modernRequest(up.url, 'completion/complete', params, {});
    expect([answer.status, answer.json.error.code]).toEqual([404, -32601]);
  });

  it('through the gateway: the same 404 -32601 (the gateway advertises no completions either)', async () => {
    const discover = await modernRequest(gateway.mcpUrl, 'server/discover', {}, {});
    expect(discover.json.result.capabilities.completions).toBeUndefined();
    const answer = await modernRequest(gateway.mcpUrl, 'completion/complete', params, {});
    expect([answer.status, answer.json.error.code]).toEqual([404, -32601]);
  });
});
