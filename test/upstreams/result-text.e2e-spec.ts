/**
 * A 2026-07-28 upstream's result reaches the client as the upstream wrote it, with only the
 * members of its era's envelope cut out (docs/operations.md §10 "Routing"): numbers beyond double
 * precision, number spellings and escapes in `structuredContent` and `_meta` are not serialized
 * again, for a 2025 client and a 2026 one alike, over a JSON answer and an SSE one.
 */
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { postRaw, rpc } from '../support/rpc';
import { ScriptedUpstream, upTool, type ReceivedRequest } from '../support/scripted-upstream';

const V = '2026-07-28';

/** Written as no JSON.stringify of the parsed value would write it. */
const KEPT = String.raw`"structuredContent":{"big":12345678901234567890,"f":1.50,"s":"caf\u00e9"}`;
const RESULT =
  String.raw`{"content":[{"type":"text","text":"caf\u00e9"}],${KEPT},"resultType":"complete",` +
  String.raw`"ttlMs":0,"cacheScope":"private","_meta":{"io.modelcontextprotocol/serverInfo":` +
  String.raw`{"name":"scripted-up","version":"9"},"example.com/n":1.0}}`;

function answer(req: ReceivedRequest, sse: boolean) {
  const text = `{"jsonrpc":"2.0","id":${JSON.stringify(req.id)},"result":${RESULT}}`;
  return sse
    ? { headers: { 'content-type': 'text/event-stream' }, raw: `event: message\ndata: ${text}\n\n` }
    : { headers: { 'content-type': 'application/json' }, raw: text };
}

/** A raw 2026-07-28 request: `tools/call` of `name`, or `resources/read` of a URI. */
function modernRequest(
  url: string,
  method: 'tools/call' | 'resources/read',
  name: string,
): ReturnType<typeof postRaw> {
  const params = {
    ...(method === 'tools/call' ? { name, arguments: {} } : { uri: name }),
    _meta: {
      'io.modelcontextprotocol/protocolVersion': V,
      'io.modelcontextprotocol/clientCapabilities': {},
      'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
    },
  };
  return postRaw(url, JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }), {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': V,
    'mcp-method': method,
    'mcp-name': name,
  });
}

const modernCall = (url: string, name: string) => modernRequest(url, 'tools/call', name);

describe("a 2026 upstream's result text, passed on", () => {
  let up: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    up = await ScriptedUpstream.start({ era: '2026', tools: [upTool('json'), upTool('sse')] });
    up.onTool('json', (req) => answer(req, false));
    up.onTool('sse', (req) => answer(req, true));
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], { upstreams: [upstream('mod', up.url)] }),
    });
    await waitFor(async () => {
      const listed = await rpc(gateway.mcpUrl, 'tools/list', {}, {}, 'tl');
      return (listed.json?.result?.tools ?? []).length === 2;
    }, 20_000);
  });

  afterAll(async () => {
    await gateway?.stop();
    await up?.stop();
  });

  it.each(['json', 'sse'])(
    'a 2025 client gets the members as written, without the envelope (%s answer)',
    async (tool) => {
      const called = await rpc(gateway.mcpUrl, 'tools/call', { name: `mod__${tool}` }, {}, 3);
      expect(called.status).toBe(200);
      expect(called.text).toContain(KEPT);
      expect(called.text).toContain('"_meta":{"example.com/n":1.0}');
      expect(called.json.result).toEqual({
        content: [{ type: 'text', text: 'café' }],
        structuredContent: { big: Number('12345678901234567890'), f: 1.5, s: 'café' },
        _meta: { 'example.com/n': 1 },
      });
    },
  );

  it.each(['json', 'sse'])(
    "a 2026 client gets them as written, with the gateway's envelope (%s answer)",
    async (tool) => {
      const called = await modernCall(gateway.mcpUrl, `mod__${tool}`);
      expect(called.status).toBe(200);
      expect(called.text).toContain(KEPT);
      expect(called.text).not.toContain('scripted-up');
      const result = called.json.result as Record<string, any>;
      expect(result.resultType).toBe('complete');
      expect(result.structuredContent).toEqual({
        big: Number('12345678901234567890'),
        f: 1.5,
        s: 'café',
      });
      expect(result._meta['example.com/n']).toBe(1);
      expect(result._meta['io.modelcontextprotocol/serverInfo'].name).not.toBe('scripted-up');
    },
  );
});

/**
 * docs/operations.md §11 "Cache hints": a 2026 client's `resources/read` carries the hints the
 * owning upstream put on the result (absent: 0, private), capped by `cache.maxTtlMillis`; a 2025
 * client's result never has them. The projection for 2025 clients (asLegacyResult) cuts them
 * from the result, so they travel beside it.
 */
describe("a 2026 upstream's cache hints on resources/read", () => {
  let up: ScriptedUpstream;
  let gateway: GatewayProcess;
  const contents = (uri: string) => [{ uri, mimeType: 'text/plain', text: 'r' }];

  beforeAll(async () => {
    up = await ScriptedUpstream.start({
      era: '2026',
      resources: ['r://kept', 'r://long', 'r://bare', 'r://spaced'].map((uri) => ({
        uri,
        name: uri,
      })),
    });
    up.on('resources/read', (req) => {
      const uri = String(req.params?.uri);
      const base = { contents: contents(uri), resultType: 'complete' };
      if (uri === 'r://kept') return { result: { ...base, ttlMs: 12_345, cacheScope: 'public' } };
      if (uri === 'r://long')
        return { result: { ...base, ttlMs: 900_000, cacheScope: 'public' }, sse: true };
      if (uri === 'r://bare') return { result: base };
      // JSON whitespace with a line break: the gateway serializes the result again
      const text = JSON.stringify(
        { jsonrpc: '2.0', id: req.id, result: { ...base, ttlMs: 5_000, cacheScope: 'public' } },
        null,
        2,
      );
      return { headers: { 'content-type': 'application/json' }, raw: text };
    });
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], { upstreams: [upstream('mod', up.url)] }),
    });
    await waitFor(async () => {
      const listed = await rpc(gateway.mcpUrl, 'resources/list', {}, {}, 'rl');
      return (listed.json?.result?.resources ?? []).length === 4;
    }, 20_000);
  });

  afterAll(async () => {
    await gateway?.stop();
    await up?.stop();
  });

  const modernRead = (uri: string) => modernRequest(gateway.mcpUrl, 'resources/read', uri);

  it.each([
    ['r://kept', { ttlMs: 12_345, cacheScope: 'public' }],
    ['r://long', { ttlMs: 60_000, cacheScope: 'public' }],
    ['r://bare', { ttlMs: 0, cacheScope: 'private' }],
    ['r://spaced', { ttlMs: 5_000, cacheScope: 'public' }],
  ])("a 2026 client reading %s gets the upstream's hints, capped: %j", async (uri, hints) => {
    const read = await modernRead(uri);
    expect(read.status).toBe(200);
    expect(read.json.result).toMatchObject({
      contents: contents(uri),
      resultType: 'complete',
      ...hints,
    });
  });

  it('a 2025 client reading the same resource gets no hints', async () => {
    const read = await rpc(gateway.mcpUrl, 'resources/read', { uri: 'r://kept' }, {}, 4);
    expect(read.json.result).toEqual({ contents: contents('r://kept') });
  });
});
