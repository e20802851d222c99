import { GatewayProcess, waitFor } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { rpc, STANDARD_HEADERS } from '../../support/rpc';
import { SseReader } from '../../support/sse-reader';
import { ScriptedUpstream, upTool } from '../../support/scripted-upstream';

jest.setTimeout(60_000);

/**
 * docs/operations.md §11 "Multi round-trip and era bridging", 2025 client → 2026 upstream: the
 * upstream's `inputRequests` become real requests on the client's SSE call answer; the client's
 * answers become the upstream retry's `inputResponses`, "keyed as the upstream keyed its
 * questions". Wire notes §4: `inputRequests` keys are server-chosen strings.
 *
 * LegacyInputBridge.ask collects answers in a plain object literal: `inputResponses[answer.i] =
 * answer.result`. An upstream key `__proto__` (a legal JSON member name, kept as an own member by
 * JSON.parse) makes that assignment set the object's prototype instead of a member: the count of
 * answers never reaches the count of questions, the client's answer is taken (202) but lost,
 * and the call waits the whole `session.pendingInputMillis`, then ends "The client did not
 * answer within … ms". (The client-chosen answer object also becomes the prototype of a
 * gateway object.) A 2026 client talking to the upstream directly answers it fine.
 */
describe("a 2026 upstream's input request keyed __proto__, bridged to a 2025 client", () => {
  let mod: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    mod = await ScriptedUpstream.start({ era: '2026', tools: [upTool('ask')] });
    mod.onTool('ask', (req) => {
      const answered = req.params?.inputResponses?.['__proto__'];
      if (answered !== undefined && req.params?.requestState === 'st')
        return {
          result: {
            content: [{ type: 'text', text: `done ${JSON.stringify(answered)}` }],
            resultType: 'complete',
          },
        };
      return {
        headers: { 'content-type': 'application/json' },
        raw: JSON.stringify({
          jsonrpc: '2.0',
          id: req.id,
          result: { resultType: 'input_required', requestState: 'st' },
        }).replace(
          '"requestState"',
          '"inputRequests":{"__proto__":{"method":"elicitation/create","params":{"mode":"form","message":"ok?","requestedSchema":{"type":"object","properties":{}}}}},"requestState"',
        ),
      };
    });
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([], { upstreams: [upstream('mod', mod.url)] }),
        session: { pendingInputMillis: 4000 },
      },
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
    await mod?.stop();
  });

  it('the answer the client gives reaches the upstream retry and the call completes', async () => {
    const opened = await rpc(gateway.mcpUrl, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: { elicitation: { form: {} } },
      clientInfo: { name: 'raw', version: '1' },
    });
    const session = {
      'mcp-session-id': opened.headers.get('mcp-session-id')!,
      'mcp-protocol-version': '2025-11-25',
    };
    const call = await SseReader.open(
      gateway.mcpUrl,
      'POST',
      { ...STANDARD_HEADERS, ...session },
      JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'mod__ask', arguments: {} },
      }),
    );
    const asked = await call.waitForMessage((m) => m.method === 'elicitation/create');
    const posted = await fetch(gateway.mcpUrl, {
      method: 'POST',
      headers: { ...STANDARD_HEADERS, ...session },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: asked.id,
        result: { action: 'accept', content: { yes: true } },
      }),
    });
    expect(posted.status).toBe(202);
    const result = await call.waitForMessage((m) => m.id === 7, 10_000);
    expect(JSON.stringify(result)).not.toContain('did not answer');
    expect(result.result.isError).toBeFalsy();
    expect(result.result.content[0].text).toContain('done');
    call.close();
  });
});
