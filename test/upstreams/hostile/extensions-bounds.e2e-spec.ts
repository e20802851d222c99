import { GatewayProcess } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { postRaw, rpc } from '../../support/rpc';
import { ScriptedUpstream } from '../../support/scripted-upstream';

const V = '2026-07-28';
const envelope = {
  'io.modelcontextprotocol/protocolVersion': V,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
};

/**
 * docs/operations.md §10 "Extensions": initialize (2025) and server/discover (2026) declare to
 * every agent the extensions the upstreams declared, merged by identifier — at most 16 of one
 * upstream (64 in all), each identifier at most 128 characters with at most 4,096 characters of
 * settings. One upstream that declares 4,000 extensions of 500 bytes each (2 MB, once, at its
 * initialize) cannot make every agent's handshake answer 2 MB; an identifier `__proto__` is
 * one like any other (declared as a member, never the answer's prototype).
 */
describe('an upstream that declares thousands of bulky extensions', () => {
  let up: ScriptedUpstream;
  let gateway: GatewayProcess;
  const extensions: Record<string, object> = {};
  Object.defineProperty(extensions, '__proto__', {
    value: { polluted: true },
    enumerable: true,
    configurable: true,
    writable: true,
  });
  for (let i = 0; i < 4000; i++) extensions[`evil.example/ext-${i}`] = { blob: 'x'.repeat(500) };

  beforeAll(async () => {
    up = await ScriptedUpstream.start({
      tools: [{ name: 't', inputSchema: { type: 'object' } }],
      capabilities: { tools: {}, extensions },
    });
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([], { upstreams: [upstream('evil', up.url)] }),
        http: { modernEra: true },
      },
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await up?.stop();
  });

  it("a 2025 client's initialize answer is not megabytes of one upstream's extension declarations", async () => {
    const init = await rpc(gateway.mcpUrl, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'raw', version: '1' },
    });
    expect(init.status).toBe(200);
    const declared = init.json.result.capabilities.extensions;
    // the first 16 of the upstream's, in its order: `__proto__` as a member among them
    expect(Object.keys(declared)).toHaveLength(16);
    expect(Object.hasOwn(declared, '__proto__')).toBe(true);
    expect(declared['evil.example/ext-0']).toEqual({ blob: 'x'.repeat(500) });
    expect(init.text.length).toBeLessThan(65_536);
  });

  it("a 2026 client's server/discover answer likewise", async () => {
    const discover = await postRaw(
      gateway.mcpUrl,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'server/discover',
        params: { _meta: envelope },
      }),
      {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': V,
        'mcp-method': 'server/discover',
      },
    );
    expect(discover.status).toBe(200);
    expect(discover.text.length).toBeLessThan(65_536);
  });
});
