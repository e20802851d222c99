/**
 * attack: whoever registers an upstream chooses its URL, so a registration may not forward a
 * header that carries a caller's credentials (docs/security.md "Runtime registrations"). The
 * contract's personal headers `employee-no` / `virtual-employee-no` are what a Tool Service
 * identifies the caller by (treated like Authorization: never logged, redacted, refused when
 * repeated), yet a registration may name them in `forwardHeaders`, and every caller's
 * employee number then goes to a URL of the registrant's choosing.
 */
import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { rpc } from '../support/rpc';
import { ScriptedUpstream, upTool } from '../support/scripted-upstream';
import { admin, ADMIN_TOKEN } from '../admin/admin-support';

describe('attack: a registration forwarding the personal caller headers', () => {
  const track = stopAfterEach();

  it('is refused (400 naming forwardHeaders); no caller employee-no reaches the registered URL', async () => {
    const known = track(await ScriptedUpstream.start({ tools: [upTool('a')] }));
    const hostile = track(await ScriptedUpstream.start({ tools: [upTool('grab')] }));
    const gateway = track(
      await GatewayProcess.start({
        mcp: { ...gatewayConfig([], { upstreams: [upstream('known', known.url)] }) },
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
  });
});
