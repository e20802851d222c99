/**
 * An `auto` upstream that is a plain 2025-11-25 server (its tool handler answers a JSON-RPC error in
 * the implementation-defined server range: JSON-RPC 2.0 §5.1 "-32000 to -32099 Server error:
 * Reserved for implementation-defined server-errors", MCP 2025-11-25 defines no -32020/-32022). The
 * gateway reads -32020/-32022 on any 2025 answer as "this upstream is another era"
 * (upstream-connection.ts MODERN_ONLY_CODES), probes the era again, and **sends the same
 * `tools/call` a second time** (requestUntraced: `redetected` → `continue`). A tool call is not
 * idempotent (wire notes G-30: re-issuing is safe "only when the tool is idempotent"): the client
 * made one call and the upstream ran it twice. Directly, the client gets the error once, one run.
 */
import { GatewayProcess } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { ScriptedUpstream, upTool } from '../../support/scripted-upstream';
import { openLegacySession, rpc } from '../../support/rpc';

describe('era: a 2025 upstream tool error in -32020..-32022 under protocol auto', () => {
  let up: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    up = await ScriptedUpstream.start({ era: '2025', tools: [upTool('pay')] });
    up.onTool('pay', () => ({
      error: { code: -32022, message: 'Payment provider version unsupported' },
    }));
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], { upstreams: [upstream('shop', up.url)] }), // protocol: auto (default)
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await up?.stop();
  });

  it('one tools/call from the client is one tools/call at the upstream, and its error comes back', async () => {
    const session = await openLegacySession(gateway.mcpUrl);
    const answer = await rpc(
      gateway.mcpUrl,
      'tools/call',
      { name: 'shop__pay', arguments: { amount: 10 } },
      session,
    );
    expect(up.calls('pay')).toHaveLength(1);
    expect(answer.json.error).toEqual({
      code: -32022,
      message: 'Payment provider version unsupported',
    });
  });
});
