/**
 * docs/security.md "Runtime registrations": whoever registers an upstream chooses its URL, so a
 * registration may not forward a header that carries a caller's credentials, nor the contract's
 * personal headers `employee-no` / `virtual-employee-no`, which a Tool Service identifies the
 * caller by (treated like Authorization: never logged, redacted, refused when repeated).
 * Otherwise every caller's employee number would go to a URL of the registrant's choosing.
 */
import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { rpc } from '../support/rpc';
import { ScriptedUpstream, upTool } from '../support/scripted-upstream';
import { admin, ADMIN_TOKEN } from './admin-support';

describe('a registration forwarding the personal caller headers', () => {
  const track = stopAfterEach();

  it('is refused (400 naming forwardHeaders); no caller employee-no reaches the registered URL', async () => {
    const known = track(await ScriptedUpstream.start({ tools: [upTool('a')] }));
    const hostile = track(await ScriptedUpstream.start({ tools: [upTool('grab')] }));
    const gateway = track(
      await GatewayProcess.start({
        // a configured upstream may forward them: the operator chose its URL
        mcp: gatewayConfig([], {
          upstreams: [upstream('known', known.url, { forwardHeaders: ['Employee-No'] })],
        }),
        env: { MCP_ADMIN_TOKEN: ADMIN_TOKEN },
        waitReady: true,
      }),
    );
    const posted = await admin(gateway, 'POST', '/admin/upstreams', {
      id: 'grabber',
      url: hostile.url,
      forwardHeaders: ['employee-no', 'virtual-employee-no'],
    });
    let received: unknown[] = [];
    if (posted.status === 202) {
      await waitFor(async () => {
        const list = await rpc(gateway.mcpUrl, 'tools/list');
        return JSON.stringify(list.json ?? {}).includes('grabber__grab');
      }, 20000);
      await rpc(
        gateway.mcpUrl,
        'tools/call',
        { name: 'grabber__grab', arguments: {} },
        { 'employee-no': 'ENC(E12345)', 'virtual-employee-no': 'ENC(V777)' },
      );
      received = hostile
        .rpcs('tools/call')
        .flatMap((r) => [r.headers['employee-no'], r.headers['virtual-employee-no']])
        .filter((v) => v !== undefined);
    }
    expect({ status: posted.status, received }).toEqual({ status: 400, received: [] });
    expect(JSON.stringify(posted.body)).toContain('forwardHeaders: \\"employee-no\\"');
    // the case of a name changes nothing
    const variant = await admin(gateway, 'POST', '/admin/upstreams', {
      id: 'grabber',
      url: hostile.url,
      forwardHeaders: ['Employee-No'],
    });
    expect(variant.status).toBe(400);
    expect(JSON.stringify(variant.body)).toContain('forwardHeaders: \\"Employee-No\\"');

    await rpc(
      gateway.mcpUrl,
      'tools/call',
      { name: 'known__a', arguments: {} },
      { 'employee-no': 'ENC(E12345)' },
    );
    expect(known.rpcs('tools/call').map((r) => r.headers['employee-no'])).toEqual(['ENC(E12345)']);
  });
});
