/**
 * A 2026-07-28 upstream's `complete` result that also carries `inputRequests` and `requestState`
 * (members of the revision's InputRequiredResult, meaningless beside `resultType: "complete"`):
 * a 2025 client must get a 2025 result. asLegacyResult cuts `resultType`, `ttlMs`, `cacheScope`
 * and the upstream's serverInfo, and withoutModernResultMembers cuts `resultType`,
 * `inputRequests` and `requestState` from a 2025 upstream's result (legacy-result-type.e2e-spec),
 * but the same 2026-only members of a 2026 upstream's result reach the 2025 client, the
 * upstream's raw `requestState` with them (docs/operations.md §11 "Results"; wire notes §2:
 * 2025 results have none of the 2026 result vocabulary).
 */
import { GatewayProcess } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { ScriptedUpstream, upTool } from '../../support/scripted-upstream';
import { openLegacySession, rpc } from '../../support/rpc';

const MRTR_MEMBERS = {
  resultType: 'complete',
  inputRequests: { ask: { method: 'roots/list', params: {} } },
  requestState: 'raw-upstream-state',
};

describe("era bridging: a 2026 upstream's complete result with MRTR members, to a 2025 client", () => {
  let modern: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    modern = await ScriptedUpstream.start({
      era: '2026',
      capabilities: { tools: {}, resources: {} },
      tools: [upTool('t')],
      resources: [{ uri: 'm26://r', name: 'r' }],
    });
    modern.onTool('t', () => ({
      result: { content: [{ type: 'text', text: 'done' }], ...MRTR_MEMBERS },
    }));
    modern.on('resources/read', () => ({
      result: { contents: [{ uri: 'm26://r', text: 'r' }], ...MRTR_MEMBERS },
    }));
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], { upstreams: [upstream('modern', modern.url)] }),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await modern?.stop();
  });

  it.each([
    ['tools/call', { name: 'modern__t', arguments: {} }, 'content'],
    ['resources/read', { uri: 'm26://r' }, 'contents'],
  ] as const)(
    '%s: the result has no inputRequests, requestState or resultType',
    async (method, params, key) => {
      const answer = await rpc(
        gateway.mcpUrl,
        method,
        params,
        await openLegacySession(gateway.mcpUrl),
      );
      expect(answer.json.error).toBeUndefined();
      expect(answer.json.result[key]).toBeDefined();
      expect(answer.json.result.resultType).toBeUndefined();
      expect(answer.json.result).not.toHaveProperty('inputRequests');
      expect(answer.json.result).not.toHaveProperty('requestState');
      expect(answer.text).not.toContain('raw-upstream-state');
    },
  );
});
