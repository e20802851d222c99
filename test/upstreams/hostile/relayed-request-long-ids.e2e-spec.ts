import { GatewayProcess } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { rpc } from '../../support/rpc';
import { ScriptedUpstream } from '../../support/scripted-upstream';

jest.setTimeout(180_000);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const CALLS = 20;

/**
 * The gateway remembers each relayed request that was answered or whose call ended, so that a
 * client's answer coming later is refused (UpstreamRouter.settledRequests, 10,000 of them): by a
 * digest of the upstream, session and id, so that an upstream choosing long ids (here 32
 * requests of 100 KB ids per call, the per-call cap) leaves nothing of them behind once the call
 * is over (docs/security.md, "Hostile upstreams").
 *
 * Calls on a gateway whose V8 old space is capped: what it does not keep is collected, what it
 * keeps accumulates (20 calls would keep 64 MB of ids). Returns how many calls were answered
 * and whether the gateway process is still alive.
 */
async function callsServed(bigIds: boolean): Promise<{ served: number; alive: boolean }> {
  const up = await ScriptedUpstream.start({
    tools: [{ name: 'ask', inputSchema: { type: 'object' } }],
    sessionId: 'S1',
  });
  let call = 0;
  const filler = 'i'.repeat(100_000);
  up.onTool('ask', () => {
    call++;
    return {
      events: Array.from({ length: 32 }, (_, i) => ({
        jsonrpc: '2.0',
        id: bigIds ? `${call}-${i}-${filler}` : `${call}-${i}`,
        method: 'elicitation/create',
        params: {
          // the control carries the same bytes in the params, which nothing keeps
          message: bigIds ? 'q' : filler,
          requestedSchema: { type: 'object', properties: {} },
        },
      })),
      result: { content: [{ type: 'text', text: 'done' }] },
    };
  });
  const gateway = await GatewayProcess.start({
    mcp: gatewayConfig([], { upstreams: [upstream('u', up.url)] }),
    env: { NODE_OPTIONS: '--max-old-space-size=96' },
    waitReady: true,
  });
  try {
    const init = await rpc(gateway.mcpUrl, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: { elicitation: { form: {} } },
      clientInfo: { name: 'raw', version: '1' },
    });
    const session = {
      'mcp-session-id': init.headers.get('mcp-session-id')!,
      'mcp-protocol-version': '2025-11-25',
    };
    const callOnce = async (): Promise<boolean> => {
      try {
        const answer = await rpc(
          gateway.mcpUrl,
          'tools/call',
          { name: 'u__ask', arguments: {} },
          session,
        );
        return answer.text.includes('"done"');
      } catch {
        return false;
      }
    };
    let served = 0;
    for (let i = 0; i < CALLS; i++) if (await callOnce()) served++;
    await sleep(1000);
    return { served, alive: gateway.child.exitCode === null && gateway.child.signalCode === null };
  } finally {
    await gateway.stop();
    await up.stop();
  }
}

describe('an upstream that relays requests with huge ids on every call', () => {
  it('calls that ended leave nothing of their relayed ids behind: 20 calls of 32 relayed 100 KB ids are all served by a 96 MB heap', async () => {
    expect(await callsServed(true)).toEqual({ served: CALLS, alive: true });
  });
});
