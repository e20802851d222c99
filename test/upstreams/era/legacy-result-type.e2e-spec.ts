/**
 * `resultType` is a 2026-07-28 member (wire notes §2: "2025-11-25 … Results have no
 * `resultType`"); a 2025 result may carry any member (SCH25 `Result` is `[key: string]: unknown`),
 * so a 2025 upstream's own `resultType` means nothing, as its `ttlMs`/`cacheScope` mean nothing
 * (legacy-cache-members.e2e-spec.ts). Read as the 2026 one, it let a 2025 server have the gateway
 * refuse its answers (an unknown value, input_required outside the three methods that may answer
 * it, a task outside tools/call), fail its list pulls, or take its result for a multi round-trip
 * request, and handed its raw `requestState` to a 2026 client. Those members (and `inputRequests`)
 * are cut: its answers are 2025 results, complete for a client of either era.
 */
import { GatewayProcess } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { ScriptedUpstream, upTool } from '../../support/scripted-upstream';
import { envelopeMeta, MODERN } from '../../support/modern-rpc';
import { openLegacySession, postRaw, rpc, STANDARD_HEADERS } from '../../support/rpc';

const INPUT_REQUIRED = {
  resultType: 'input_required',
  inputRequests: {
    ask: {
      method: 'elicitation/create',
      params: { message: 'm', requestedSchema: { type: 'object', properties: {} } },
    },
  },
  requestState: 'upstream-state',
};

/** A 2026-07-28 request of `method` with its headers (Mcp-Name: `name`). */
function modern(url: string, method: string, params: Record<string, unknown>, name?: string) {
  return postRaw(
    url,
    JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: { ...params, _meta: envelopeMeta({ elicitation: { form: {} } }) },
    }),
    {
      ...STANDARD_HEADERS,
      'mcp-protocol-version': MODERN,
      'mcp-method': method,
      ...(name === undefined ? {} : { 'mcp-name': name }),
    },
  );
}

describe("era bridging: a 2025 upstream's own resultType member is no 2026 result type", () => {
  let legacy: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    legacy = await ScriptedUpstream.start({
      era: '2025',
      capabilities: { tools: {}, resources: {}, prompts: {}, completions: {} },
      tools: [upTool('t')],
      resources: [{ uri: 'docs://a', name: 'a' }],
    });
    legacy.on('prompts/list', () => ({
      result: { prompts: [{ name: 'p' }], resultType: 'partial' },
    }));
    legacy.on('prompts/get', () => ({
      result: {
        messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }],
        ...INPUT_REQUIRED,
      },
    }));
    legacy.on('resources/read', () => ({
      result: { contents: [{ uri: 'docs://a', text: 'a' }], resultType: 'incomplete' },
    }));
    legacy.on('completion/complete', () => ({
      result: { completion: { values: ['x'] }, resultType: 'input_required' },
    }));
    legacy.onTool('t', () => ({
      result: { content: [{ type: 'text', text: 'done' }], resultType: 'task' },
    }));
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], {
        upstreams: [upstream('legacy', legacy.url, { protocol: '2025-11-25' })],
      }),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await legacy?.stop();
  });

  it('a list page carrying one is pulled: its prompt is published', async () => {
    const listed = await rpc(
      gateway.mcpUrl,
      'prompts/list',
      {},
      await openLegacySession(gateway.mcpUrl),
    );
    expect(listed.json.result.prompts.map((p: { name: string }) => p.name)).toEqual(['legacy__p']);
  });

  const cases: readonly [string, Record<string, unknown>, string | undefined, string][] = [
    ['prompts/get', { name: 'legacy__p' }, 'legacy__p', 'messages'],
    ['resources/read', { uri: 'docs://a' }, 'docs://a', 'contents'],
    [
      'completion/complete',
      { ref: { type: 'ref/prompt', name: 'legacy__p' }, argument: { name: 'a', value: '' } },
      undefined,
      'completion',
    ],
    ['tools/call', { name: 'legacy__t', arguments: {} }, 'legacy__t', 'content'],
  ];

  it.each(cases)(
    '%s: a 2026 client gets the result, complete',
    async (method, params, name, key) => {
      const before = legacy.rpcs(method).length;
      const answer = await modern(gateway.mcpUrl, method, params, name);
      expect(answer.json.error).toBeUndefined();
      expect(answer.json.result[key]).toBeDefined();
      expect(answer.json.result.resultType).toBe('complete');
      expect(answer.text).not.toContain('upstream-state');
      expect(legacy.rpcs(method).length).toBe(before + 1);
    },
  );

  it.each(cases)('%s: a 2025 client gets the result', async (method, params, _name, key) => {
    const answer = await rpc(
      gateway.mcpUrl,
      method,
      params,
      await openLegacySession(gateway.mcpUrl),
    );
    expect(answer.json.error).toBeUndefined();
    expect(answer.json.result[key]).toBeDefined();
    expect(answer.json.result.resultType).toBeUndefined();
    expect(answer.text).not.toContain('upstream-state');
  });
});
