/**
 * `logging/setLevel` is a 2025-only method: 2026-07-28 removed it (wire notes §2.11, G-28: "The
 * gateway must not forward 2025-only methods to 2026 backends; answer locally or translate";
 * a 2026 server answers it 404 -32601, W-raw). docs/operations.md §10 "Logging": a 2025 session's
 * level is "put in the `_meta` of the session's requests to 2026 upstreams, which have no
 * setLevel". A 2026 server may still advertise the deprecated `logging` capability (SCH26
 * ServerCapabilities.logging), so "offers logging" does not make it a setLevel target.
 */
import { GatewayProcess } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { ScriptedUpstream, upTool } from '../../support/scripted-upstream';
import { openLegacySession, rpc } from '../../support/rpc';

describe("era bridging: a 2025 client's logging/setLevel in front of a 2026 upstream", () => {
  let modern: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    modern = await ScriptedUpstream.start({
      era: '2026',
      capabilities: { tools: {}, logging: {} },
      tools: [upTool('work')],
    });
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], {
        upstreams: [upstream('m', modern.url, { protocol: '2026-07-28' })],
      }),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await modern?.stop();
  });

  it("is answered {} and never sent to the 2026 upstream as a request; the level goes in the next call's _meta", async () => {
    const session = await openLegacySession(gateway.mcpUrl);
    const set = await rpc(gateway.mcpUrl, 'logging/setLevel', { level: 'warning' }, session);
    expect(set.json.result).toEqual({});
    const call = await rpc(
      gateway.mcpUrl,
      'tools/call',
      { name: 'm__work', arguments: {} },
      session,
    );
    expect(call.json.result).toBeDefined();
    expect(modern.calls('work')[0]?.params?._meta?.['io.modelcontextprotocol/logLevel']).toBe(
      'warning',
    );
    // the upstream answered the setLevel the gateway sent it 404 -32601 (a method its revision lacks)
    const sent = modern.rpcs('logging/setLevel');
    expect(
      sent.map((r) => ({ headers: r.headers['mcp-protocol-version'], params: r.params })),
    ).toEqual([]);
  });
});
