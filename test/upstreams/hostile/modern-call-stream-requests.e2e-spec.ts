import { GatewayProcess } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { modernRequest } from '../../support/modern-rpc';
import { rpc } from '../../support/rpc';
import { ScriptedUpstream, type Reply } from '../../support/scripted-upstream';

/**
 * A 2026-07-28 upstream that puts server→client requests (sampling/createMessage,
 * elicitation/create, roots/list, ping) on the SSE answer of a caller's tools/call or
 * prompts/get before its response. That revision has no server→client requests and no client
 * responses (wire notes §1.2, "Clients never send responses"; MRTR's input_required replaces
 * them), so nobody could ever answer them: they are dropped unanswered, as on a listen
 * (docs/security.md "What an upstream can make the gateway do"), and reach no client, neither
 * relayed to a 2025 client nor turned into a 2026 client's input_required. The call goes on to
 * its response.
 */
const CAPS = { sampling: {}, elicitation: { form: {} }, roots: {} };
const REQUESTS = [
  { method: 'sampling/createMessage', params: { messages: [], maxTokens: 1 } },
  {
    method: 'elicitation/create',
    params: { mode: 'form', message: 'Sure?', requestedSchema: { type: 'object', properties: {} } },
  },
  { method: 'roots/list' },
  { method: 'ping' },
].map((request, i) => ({ jsonrpc: '2.0', id: `up-${i}`, ...request }));

function asking(result: Record<string, unknown>): Reply {
  return { sse: true, events: REQUESTS, eventGapMs: 20, result };
}

describe('a 2026 upstream that sends requests on a call’s answer', () => {
  let up: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    up = await ScriptedUpstream.start({
      era: '2026',
      tools: [{ name: 'ask', inputSchema: { type: 'object' } }],
      prompts: [{ name: 'greet' }],
    });
    up.onTool('ask', () =>
      asking({ resultType: 'complete', content: [{ type: 'text', text: 'done' }] }),
    );
    up.on('prompts/get', () =>
      asking({
        resultType: 'complete',
        messages: [{ role: 'user', content: { type: 'text', text: 'hello' } }],
      }),
    );
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], { upstreams: [upstream('mod', up.url)] }),
      waitReady: true,
    });
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await up?.stop();
  });

  /** What the upstream was POSTed that is not a request or notification: a client's answer. */
  const answersPosted = (): unknown[] =>
    up.requests.filter((r) => r.httpMethod === 'POST' && r.message !== undefined && !r.method);

  it('a 2026 client gets the response, never an input_required made of them', async () => {
    const call = await modernRequest(gateway.mcpUrl, 'tools/call', { name: 'mod__ask' }, CAPS);
    expect(call.json.result).toMatchObject({ content: [{ type: 'text', text: 'done' }] });
    expect(call.json.result.resultType).not.toBe('input_required');
    const prompt = await modernRequest(gateway.mcpUrl, 'prompts/get', { name: 'mod__greet' }, CAPS);
    expect(prompt.json.result.messages).toEqual([
      { role: 'user', content: { type: 'text', text: 'hello' } },
    ]);
    expect(prompt.json.result.resultType).not.toBe('input_required');
    expect(answersPosted()).toEqual([]);
  });

  it('a 2025 client that declared sampling, elicitation and roots is asked none of them', async () => {
    const opened = await rpc(gateway.mcpUrl, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: CAPS,
      clientInfo: { name: 'raw', version: '1' },
    });
    const session = {
      'mcp-session-id': opened.headers.get('mcp-session-id') ?? '',
      'mcp-protocol-version': '2025-11-25',
    };
    for (const [method, params] of [
      ['tools/call', { name: 'mod__ask', arguments: {} }],
      ['prompts/get', { name: 'mod__greet' }],
    ] as const) {
      const answer = await rpc(gateway.mcpUrl, method, params, session, 'c1');
      // the whole answer: no request before the response
      expect(answer.text).not.toMatch(/"method"/);
      expect(answer.json).toMatchObject({ id: 'c1', result: expect.any(Object) });
    }
    expect(answersPosted()).toEqual([]);
  });
});
