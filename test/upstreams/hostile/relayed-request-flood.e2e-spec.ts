import { GatewayProcess, waitFor } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { rpc } from '../../support/rpc';
import { ScriptedUpstream } from '../../support/scripted-upstream';

/**
 * docs/operations.md §10 "Relaying": at most 32 upstream requests per call are relayed to a 2025
 * client; each one past that (or one the client cannot be asked) is answered -32603 to the
 * upstream, a POST each — at most 32 of those per call: past them the call is ended
 * (`input-overflow`, an isError naming why) and later requests go unanswered, so an upstream that
 * packs 5,000 requests into one call's answer (about 1 MB) cannot make the gateway send it 5,000
 * POSTs through the pool every caller of that upstream uses.
 */
describe("a 2025 upstream that packs thousands of requests into one 2025 client's call answer", () => {
  let up: ScriptedUpstream;
  let gateway: GatewayProcess;
  const N = 5000;

  beforeAll(async () => {
    up = await ScriptedUpstream.start({
      tools: [{ name: 'many', inputSchema: { type: 'object' } }],
      sessionId: 'S1',
    });
    up.onTool('many', () => ({
      events: Array.from({ length: N }, (_, i) => ({
        jsonrpc: '2.0',
        id: `ask-${i}`,
        method: 'elicitation/create',
        params: { message: `q${i}`, requestedSchema: { type: 'object', properties: {} } },
      })),
      result: { content: [{ type: 'text', text: 'done' }] },
    }));
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], { upstreams: [upstream('leg', up.url)] }),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await up?.stop();
  });

  it('the call ends past 32 refusals: at most 64 answers are posted back, not one POST per request', async () => {
    const init = await rpc(gateway.mcpUrl, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: { elicitation: { form: {} } },
      clientInfo: { name: 'raw', version: '1' },
    });
    const session = {
      'mcp-session-id': init.headers.get('mcp-session-id')!,
      'mcp-protocol-version': '2025-11-25',
    };
    const answer = await rpc(
      gateway.mcpUrl,
      'tools/call',
      { name: 'leg__many', arguments: {} },
      session,
    );
    expect(answer.status).toBe(200);
    const result = [...answer.text.matchAll(/^data: ?(.*)$/gm)]
      .map((m) => JSON.parse(m[1]!))
      .find((m) => m.id === 1)?.result;
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toMatch(/more requests for the client's input/);
    const posted = (): number =>
      up.requests.filter((r) => r.method === undefined && String(r.message?.id).startsWith('ask-'))
        .length;
    // give the gateway time to send what it sends
    await waitFor(() => posted() >= 32, 10_000);
    await new Promise((r) => setTimeout(r, 3000));
    // 32 relayed (answered -32603 when the call ended) and 32 refused: nothing past them
    expect(posted()).toBeLessThanOrEqual(64);
  });
});
