/**
 * Cache hints are a 2026-07-28 thing (wire notes §3): "A legacy (2025) backend sends no hints at
 * all. Count it as `ttlMs:0` and `cacheScope:"private"`, unless gateway configuration says
 * otherwise" (docs/operations.md §10 `cacheTtlMillis`: "when the upstream sends none (every 2025
 * upstream)"). A 2025 result may carry any member (SCH25 `Result` is `[key: string]: unknown`),
 * so a 2025 upstream's own `ttlMs`/`cacheScope` members mean nothing: taken as hints, they would
 * let a 2025 server have a 2026 client (and every shared cache in front of it) keep one user's
 * resource for an hour as `public`.
 */
import { GatewayProcess } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { ScriptedUpstream, upTool } from '../../support/scripted-upstream';
import { modernRequest } from '../../support/modern-rpc';
import { postRaw, STANDARD_HEADERS } from '../../support/rpc';
import { envelopeMeta, MODERN } from '../../support/modern-rpc';

const OWN_MEMBERS = { ttlMs: 3_600_000, cacheScope: 'public' };

describe("era bridging: a 2025 upstream's own ttlMs/cacheScope members are no cache hints for a 2026 client", () => {
  let legacy: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    legacy = await ScriptedUpstream.start({
      era: '2025',
      capabilities: { tools: {}, resources: {}, prompts: {} },
      tools: [upTool('t')],
      prompts: [{ name: 'p' }],
    });
    legacy.on('resources/read', () => ({
      result: { contents: [{ uri: 'docs://alice', text: "alice's notes" }], ...OWN_MEMBERS },
    }));
    legacy.on('resources/list', () => ({
      result: { resources: [{ uri: 'docs://alice', name: 'alice' }], ...OWN_MEMBERS },
    }));
    legacy.on('prompts/list', () => ({ result: { prompts: [{ name: 'p' }], ...OWN_MEMBERS } }));
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

  it('resources/read: ttlMs 0 and private, as for any 2025 upstream', async () => {
    const answer = await postRaw(
      gateway.mcpUrl,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'resources/read',
        params: { uri: 'docs://alice', _meta: envelopeMeta({}) },
      }),
      {
        ...STANDARD_HEADERS,
        'mcp-protocol-version': MODERN,
        'mcp-method': 'resources/read',
        'mcp-name': 'docs://alice',
      },
    );
    expect(answer.json.result.contents[0].text).toBe("alice's notes");
    expect(answer.json.result).toMatchObject({ ttlMs: 0, cacheScope: 'private' });
  });

  it.each(['resources/list', 'prompts/list'])(
    '%s: ttlMs 0 and private, as for any 2025 upstream',
    async (method) => {
      const answer = await modernRequest(gateway.mcpUrl, method, {}, {});
      expect(answer.json.result).toMatchObject({ ttlMs: 0, cacheScope: 'private' });
    },
  );
});
