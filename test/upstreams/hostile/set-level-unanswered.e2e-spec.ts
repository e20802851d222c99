import { GatewayProcess } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { rpc } from '../../support/rpc';
import { ScriptedUpstream } from '../../support/scripted-upstream';

jest.setTimeout(60_000);
const CALL_MILLIS = 12_000;

/**
 * docs/operations.md §10: logging/setLevel goes to every 2025 upstream that offers logging and is
 * answered once they have, or after 2 s at most — its answer does not depend on theirs, and SDK
 * clients send and await it right after initialize, so one upstream that never answers must not
 * hold every client's setLevel for its callMillis.
 */
describe('an upstream that offers logging and never answers logging/setLevel', () => {
  let evil: ScriptedUpstream;
  let honest: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    honest = await ScriptedUpstream.start({
      tools: [{ name: 'h', inputSchema: { type: 'object' } }],
      capabilities: { tools: {}, logging: {} },
    });
    honest.on('logging/setLevel', () => ({ result: {} }));
    evil = await ScriptedUpstream.start({
      tools: [{ name: 'e', inputSchema: { type: 'object' } }],
      capabilities: { tools: {}, logging: {} },
    });
    evil.on('logging/setLevel', () => ({ hang: true }));
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([], {
          upstreams: [
            upstream('honest', honest.url),
            upstream('evil', evil.url, { timeouts: { callMillis: CALL_MILLIS } }),
          ],
        }),
      },
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await evil?.stop();
    await honest?.stop();
  });

  it("a client's logging/setLevel is answered without waiting out the hostile upstream's callMillis", async () => {
    const init = await rpc(gateway.mcpUrl, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'raw', version: '1' },
    });
    const headers: Record<string, string> = { 'mcp-protocol-version': '2025-11-25' };
    const session = init.headers.get('mcp-session-id');
    if (session !== null) headers['mcp-session-id'] = session;
    const started = performance.now();
    const answer = await rpc(gateway.mcpUrl, 'logging/setLevel', { level: 'error' }, headers);
    const millis = Math.round(performance.now() - started);
    expect(answer.json?.result).toEqual({});
    expect(evil.rpcs('logging/setLevel').length).toBeGreaterThanOrEqual(1);
    expect(honest.rpcs('logging/setLevel').length).toBeGreaterThanOrEqual(1);
    // answered after the 2 s wait, well before the hostile upstream's 12 s (6 s of margin for a
    // loaded machine)
    expect(millis).toBeLessThan(8000);
  });
});
