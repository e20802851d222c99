import { GatewayProcess, waitFor } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { rpc } from '../../support/rpc';
import { ScriptedUpstream, upTool } from '../../support/scripted-upstream';

jest.setTimeout(60_000);

/**
 * docs/operations.md §10 "Relaying": when a call ends while a request it relayed has no answer
 * yet, the gateway answers that request to the upstream itself with -32603, so the upstream stops
 * waiting; a client's answer that comes later is 400. The gateway keeps track of at most 32
 * relayed requests per call: a 2025 upstream that sends 40 elicitations on one call's answer has
 * the first 32 relayed and the other 8 answered -32603 at once (never relayed untracked), and every
 * one of the 40 has its answer when the call ends.
 */
const TRACKED = 32;
const N = 40;

describe('a 2025 upstream that relays more requests on one call than the gateway tracks', () => {
  let leg: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    leg = await ScriptedUpstream.start({ tools: [upTool('many')], sessionId: 'S1' });
    leg.onTool('many', () => ({
      events: Array.from({ length: N }, (_, i) => ({
        jsonrpc: '2.0',
        id: `ask-${i}`,
        method: 'elicitation/create',
        params: { message: `q${i}`, requestedSchema: { type: 'object', properties: {} } },
      })),
      result: { content: [{ type: 'text', text: 'done' }] },
    }));
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], { upstreams: [upstream('leg', leg.url)] }),
    });
    await waitFor(async () => {
      const view = (await (
        await fetch(`${gateway.managementUrl}/actuator/upstreams`)
      ).json()) as any;
      return view.upstreams.every((u: any) => u.lastAttemptAt !== null);
    }, 20_000);
  });
  afterAll(async () => {
    await gateway?.stop();
    await leg?.stop();
  });

  it('every relayed request left unanswered when the call ends is answered -32603 to the upstream, and a late client answer to any of them is 400', async () => {
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
    const messages = [...answer.text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!));
    const asked = messages.filter((m) => m.method === 'elicitation/create');
    expect(asked).toHaveLength(TRACKED);
    const endedIds = (): Set<string> =>
      new Set(
        leg.requests
          .filter((r) => r.method === undefined && r.message?.error?.code === -32603)
          .map((r) => String(r.message!.id)),
      );
    await waitFor(() => endedIds().size >= TRACKED, 10_000);
    await new Promise((r) => setTimeout(r, 1000));
    expect(endedIds().size).toBe(N);
    // the last one relayed: its call ended, so a client's answer now has no call to reach
    const late = await fetch(gateway.mcpUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...session,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: asked[TRACKED - 1].id,
        result: { action: 'decline' },
      }),
    });
    expect(late.status).toBe(400);
  });
});
