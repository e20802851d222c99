import { gatewayConfig, upstream } from '../support/fixtures';
import { GatewayProcess } from '../support/gateway-process';
import { V1Upstream } from '../support/mcp-upstreams';
import { modernRequest } from '../support/modern-rpc';
import { openLegacySession, rpc } from '../support/rpc';

/** The levels of the notifications/message an SSE answer relayed, in order. */
function relayedLevels(text: string): string[] {
  return [...text.matchAll(/^data: (.*)$/gm)]
    .map((m) => JSON.parse(m[1] as string) as { method?: string; params?: { level?: string } })
    .filter((m) => m.method === 'notifications/message')
    .map((m) => m.params?.level ?? '');
}

/**
 * The gateway's 2025 session with an upstream is shared by every client, so no client's
 * `logging/setLevel` may take away what another asked for (docs/operations.md §10 "Logging"):
 * the session is set to the most verbose level any client asked for, the gateway filters per
 * client, a re-initialized session is told that level again, and a 2026 client's `_meta`
 * logLevel widens it too. The upstream is the v1 SDK's server, whose `log-levels` tool logs what
 * its session's level lets through.
 */
describe('the log level of a shared 2025 upstream session', () => {
  let up: V1Upstream;
  const started: GatewayProcess[] = [];

  beforeAll(async () => {
    up = await V1Upstream.start({}, { leveled: true });
  });

  afterAll(async () => {
    await Promise.all(started.map((g) => g.stop()));
    await up?.stop();
  });

  async function gateway(): Promise<GatewayProcess> {
    const g = await GatewayProcess.start({
      mcp: gatewayConfig([], { upstreams: [upstream('up', `${up.url}/mcp`)] }),
      waitReady: true,
    });
    started.push(g);
    return g;
  }

  async function logged2025(g: GatewayProcess, session: Record<string, string>) {
    const answer = await rpc(g.mcpUrl, 'tools/call', { name: 'up__log-levels' }, session);
    expect(answer.text).toContain('logged');
    return relayedLevels(answer.text);
  }

  async function logged2026(g: GatewayProcess, level?: string) {
    const answer = await modernRequest(
      g.mcpUrl,
      'tools/call',
      {
        name: 'up__log-levels',
        arguments: {},
        ...(level !== undefined && { _meta: { 'io.modelcontextprotocol/logLevel': level } }),
      },
      {},
    );
    expect(answer.text).toContain('logged');
    return relayedLevels(answer.text);
  }

  it("one client's less verbose level does not take another's messages away, and a re-initialized session keeps the level", async () => {
    const g = await gateway();
    const a = await openLegacySession(g.mcpUrl);
    const b = await openLegacySession(g.mcpUrl);
    const from = up.setLevels.length;
    expect((await rpc(g.mcpUrl, 'logging/setLevel', { level: 'debug' }, a)).json).toMatchObject({
      result: {},
    });
    expect((await rpc(g.mcpUrl, 'logging/setLevel', { level: 'error' }, b)).json).toMatchObject({
      result: {},
    });
    // the upstream's session stays at the most verbose level asked
    expect(up.setLevels.slice(from).map((s) => s.level)).toEqual(['debug', 'debug']);
    expect(await logged2025(g, a)).toEqual(['debug', 'info', 'error']);
    expect(await logged2025(g, b)).toEqual(['error']);

    // the upstream forgets its sessions: the gateway's new one is told the level before use
    await up.expireSessions();
    const before = up.setLevels.length;
    expect(await logged2025(g, a)).toEqual(['debug', 'info', 'error']);
    expect(up.setLevels.slice(before)).toEqual([{ level: 'debug' }]);
    expect(await logged2025(g, b)).toEqual(['error']);
  });

  it("a 2026 client's logLevel reaches a 2025 upstream whose shared session another client set less verbose", async () => {
    const g = await gateway();
    const b = await openLegacySession(g.mcpUrl);
    await rpc(g.mcpUrl, 'logging/setLevel', { level: 'error' }, b);
    expect(await logged2025(g, b)).toEqual(['error']);
    const from = up.setLevels.length;
    expect(await logged2026(g, 'info')).toEqual(['info', 'error']);
    expect(up.setLevels.slice(from)).toEqual([{ level: 'info' }]);
    // a 2026 request without a logLevel asks for no log messages
    expect(await logged2026(g)).toEqual([]);
    expect(await logged2025(g, b)).toEqual(['error']);
    // already as verbose: nothing is sent again
    expect(await logged2026(g, 'warning')).toEqual(['error']);
    expect(up.setLevels.length).toBe(from + 1);
  });
});
