/**
 * Error codes across eras (wire notes §5, G-17):
 * - 2026-07-28 resources: "resource not found" is -32602; -32002 MUST NOT be emitted
 *   (S26-res "Error Handling"); a gateway is to translate an upstream's -32002 (G-17).
 * - 2026-07-28 basic: -32020 … -32099 are reserved for the MCP spec; implementations MUST NOT emit
 *   undefined codes in that range (S26-basic "Error Codes"). A 2025 upstream's implementation-
 *   defined -32050 (legal in 2025, where -32000…-32099 was the server range) must not reach a
 *   2026 client as is; least of all -32020/-32021/-32022, which a 2026 client reads as
 *   HeaderMismatch / MissingRequiredClientCapability / UnsupportedProtocolVersion.
 */
import { GatewayProcess } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { ScriptedUpstream, upTool } from '../../support/scripted-upstream';
import { modernRequest, envelopeMeta } from '../../support/modern-rpc';
import { openLegacySession, postRaw, rpc } from '../../support/rpc';

describe("era bridging: a 2025 upstream's error codes reaching a 2026 client", () => {
  let up: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    up = await ScriptedUpstream.start({
      era: '2025',
      tools: [
        upTool('custom_err'),
        upTool('looks_like_header_mismatch'),
        upTool('looks_like_missing_capability'),
      ],
      resources: [{ uri: 'docs://gone', name: 'gone' }],
      prompts: [{ name: 'looks_like_missing_capability' }],
    });
    up.on('resources/read', () => ({
      error: { code: -32002, message: 'Resource not found', data: { uri: 'docs://gone' } },
    }));
    up.onTool('custom_err', () => ({
      error: { code: -32050, message: 'Backend quota exhausted' },
    }));
    up.onTool('looks_like_header_mismatch', () => ({
      error: { code: -32020, message: 'Vendor error 20' },
    }));
    // in-band (HTTP 200) and in 2025 the server's own code: not MissingRequiredClientCapability
    const ownMinus32021 = () => ({
      error: { code: -32021, message: 'Vendor error 21', data: { vendor: 21 } },
    });
    up.onTool('looks_like_missing_capability', ownMinus32021);
    up.on('prompts/get', ownMinus32021);
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], {
        upstreams: [upstream('legacy', up.url, { protocol: '2025-11-25' })],
      }),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await up?.stop();
  });

  it('resources/read of a resource the 2025 upstream no longer has: -32602 to a 2026 client, never -32002', async () => {
    const answer = await postRaw(
      gateway.mcpUrl,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'resources/read',
        params: { uri: 'docs://gone', _meta: envelopeMeta({}) },
      }),
      {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'resources/read',
        'mcp-name': 'docs://gone',
      },
    );
    // the request did reach the upstream, which answered -32002
    expect(up.rpcs('resources/read')).toHaveLength(1);
    expect(answer.status).toBe(200);
    expect(answer.json.error.code).toBe(-32602);
  });

  it("a 2025 upstream's implementation-defined -32050 is not emitted to a 2026 client (reserved range)", async () => {
    const answer = await modernRequest(
      gateway.mcpUrl,
      'tools/call',
      { name: 'legacy__custom_err', arguments: {} },
      {},
    );
    expect(up.calls('custom_err')).toHaveLength(1);
    expect(answer.json.error.code).toBe(-32603);
    expect(answer.json.error.message).toContain('-32050');
    expect(answer.json.error.message).toContain('Backend quota exhausted');
  });

  it("a 2025 upstream's -32020 (its own code) reaches a 2026 client as -32603, never as HeaderMismatch", async () => {
    const answer = await modernRequest(
      gateway.mcpUrl,
      'tools/call',
      { name: 'legacy__looks_like_header_mismatch', arguments: {} },
      {},
    );
    expect(answer.status).toBe(200);
    expect(answer.json.error.code).toBe(-32603);
  });

  it("a 2025 client gets the upstream's -32050 as sent", async () => {
    const session = await openLegacySession(gateway.mcpUrl);
    const answer = await rpc(
      gateway.mcpUrl,
      'tools/call',
      { name: 'legacy__custom_err', arguments: {} },
      session,
    );
    expect(answer.json.error).toEqual({ code: -32050, message: 'Backend quota exhausted' });
  });

  it("a 2025 client of a pinned 2025 upstream gets the upstream's own in-band -32020 (2025: implementation-defined range), as directly", async () => {
    const session = await openLegacySession(gateway.mcpUrl);
    const answer = await rpc(
      gateway.mcpUrl,
      'tools/call',
      { name: 'legacy__looks_like_header_mismatch', arguments: {} },
      session,
    );
    expect(up.calls('looks_like_header_mismatch').length).toBeGreaterThan(0);
    // directly the upstream answers {"error":{"code":-32020,"message":"Vendor error 20"}};
    // the gateway answers isError "the upstream answered as a server of another era than the pinned 2025-11-25"
    expect(answer.json.error).toEqual({ code: -32020, message: 'Vendor error 20' });
  });

  // -32021 is MissingRequiredClientCapability in 2026 only (wire notes §5): a 2025 upstream's
  // -32021 is its own implementation-defined code, like its -32020 above, on every method
  it.each([
    ['tools/call', { name: 'legacy__looks_like_missing_capability', arguments: {} }],
    ['prompts/get', { name: 'legacy__looks_like_missing_capability' }],
  ])(
    "a 2025 upstream's in-band -32021 to %s reaches a 2026 client as -32603 naming it (HTTP 200), never as MissingRequiredClientCapability",
    async (method, params) => {
      const answer = await modernRequest(gateway.mcpUrl, method, params, {});
      expect(answer.status).toBe(200);
      expect(answer.json.error.code).toBe(-32603);
      expect(answer.json.error.message).toContain('-32021');
      expect(answer.json.error.message).toContain('Vendor error 21');
    },
  );

  it.each([
    ['tools/call', { name: 'legacy__looks_like_missing_capability', arguments: {} }],
    ['prompts/get', { name: 'legacy__looks_like_missing_capability' }],
  ])(
    "a 2025 client gets a 2025 upstream's -32021 to %s as sent, not a gateway refusal about capabilities",
    async (method, params) => {
      const session = await openLegacySession(gateway.mcpUrl);
      const answer = await rpc(gateway.mcpUrl, method, params, session);
      expect(answer.json.error).toEqual({
        code: -32021,
        message: 'Vendor error 21',
        data: { vendor: 21 },
      });
    },
  );
});
