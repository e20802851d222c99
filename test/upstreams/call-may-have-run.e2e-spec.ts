/**
 * A tool call that failed after its request may have reached the upstream (the connection reset
 * once the request was read, no answer within callMillis, an answer refused as broken) may have
 * run there: its isError text says so and asks the agent to check before calling a tool that
 * changes data again, as a Tool Service's call says (docs/operations.md §10 "Routing"). One that
 * never reached it (the connection refused) says nothing of the kind. Either era of the client,
 * either era of the upstream; never retried by the gateway.
 */
import { GatewayProcess } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { envelopeMeta, MODERN } from '../support/modern-rpc';
import { callTool, postRaw, STANDARD_HEADERS } from '../support/rpc';
import { ScriptedUpstream, upTool } from '../support/scripted-upstream';

const ADVICE =
  'It may still have run on the upstream; check before retrying a tool that changes data.';

/** A 2026-07-28 tools/call; resolves with the JSON-RPC response. */
async function modernCall(url: string, name: string): Promise<any> {
  const answer = await postRaw(
    url,
    JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name, arguments: {}, _meta: envelopeMeta({}) },
    }),
    {
      ...STANDARD_HEADERS,
      'mcp-protocol-version': MODERN,
      'mcp-method': 'tools/call',
      'mcp-name': name,
    },
  );
  return answer.json;
}

const textOf = (response: any): string =>
  (response.result?.content ?? []).map((c: { text?: string }) => c.text ?? '').join('\n');

describe.each(['2025', '2026'] as const)('a %s upstream whose call may have run', (era) => {
  let up: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    up = await ScriptedUpstream.start({
      era,
      tools: ['reset', 'slow', 'garbage', 'ok'].map((n) => upTool(n)),
    });
    up.onTool('reset', () => ({ reset: true }));
    up.onTool('slow', () => ({ delayMs: 3000, result: { content: [] } }));
    up.onTool('garbage', () => ({ raw: 'not json at all' }));
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], {
        upstreams: [upstream('up', up.url, { timeouts: { callMillis: 800 } })],
      }),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await up?.stop();
  });

  it.each([
    ['reset once the request was read', 'reset'],
    ['no answer within callMillis', 'slow'],
    ['an answer that is not JSON-RPC', 'garbage'],
  ])(
    '%s: isError, naming the upstream, saying it may have run (2025 and 2026 clients)',
    async (_, tool) => {
      const before = up.calls(tool).length;
      for (const response of [
        await callTool(gateway.mcpUrl, `up__${tool}`, {}),
        await modernCall(gateway.mcpUrl, `up__${tool}`),
      ]) {
        expect(response.error).toBeUndefined();
        expect(response.result.isError).toBe(true);
        expect(textOf(response)).toContain('Upstream up');
        expect(textOf(response)).toContain(ADVICE);
      }
      // one request per call: never sent again by the gateway
      expect(up.calls(tool).length - before).toBe(2);
    },
  );

  it('a call that succeeds carries no such words', async () => {
    const response = await callTool(gateway.mcpUrl, 'up__ok', {});
    expect(response.result.isError).toBeUndefined();
    expect(JSON.stringify(response)).not.toContain('may still have run');
  });
});

describe('an upstream that refuses the connection', () => {
  it('is "could not be reached" without the may-have-run words', async () => {
    const up = await ScriptedUpstream.start({ tools: [upTool('t')] });
    const gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], { upstreams: [upstream('gone', up.url)] }),
      waitReady: true,
    });
    try {
      await up.stop();
      const response = await callTool(gateway.mcpUrl, 'gone__t', {});
      expect(response.result.isError).toBe(true);
      expect(textOf(response)).toContain('Upstream gone');
      expect(textOf(response)).toContain('refused the connection');
      expect(textOf(response)).not.toContain('may still have run');
    } finally {
      await gateway.stop();
    }
  });
});
