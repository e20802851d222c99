import { GatewayProcess, waitFor } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { modernListen } from '../../support/modern-rpc';
import { ScriptedUpstream } from '../../support/scripted-upstream';
import type { SseReader } from '../../support/sse-reader';

/**
 * A 2026 upstream that ends every `subscriptions/listen` as soon as it acknowledged it. The
 * gateway re-opens each client's upstream listen with backoff (docs/operations.md §11
 * "Notification streams"), and that is bounded work; its log must be bounded too
 * (docs/security.md "Hostile sources: bounded work"): the upstream, not the clients, decides how
 * often a listen ends, so the lines it costs are counted per upstream, at most one a minute
 * after the first, not one per re-open of every client's listen (here 12 listens re-opened
 * about four times each in 10 s would be ~50 lines).
 */
const LISTENS = 12;
const frame = (message: object) => `event: message\ndata: ${JSON.stringify(message)}\n\n`;

describe('an upstream that ends every listen at once', () => {
  let up: ScriptedUpstream;
  let gateway: GatewayProcess;
  const streams: SseReader[] = [];

  beforeAll(async () => {
    up = await ScriptedUpstream.start({
      era: '2026',
      tools: [{ name: 't', inputSchema: { type: 'object' } }],
      capabilities: { tools: { listChanged: true } },
    });
    up.on('subscriptions/listen', (req) => ({
      headers: { 'content-type': 'text/event-stream' },
      raw: frame({
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: { notifications: req.params?.notifications ?? {} },
      }),
    }));
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], { upstreams: [upstream('up', up.url)] }),
      waitReady: true,
    });
  }, 60_000);

  afterAll(async () => {
    for (const stream of streams) stream.close();
    await gateway?.stop();
    await up?.stop();
  });

  it('costs a line or two per upstream, not one per re-open of each listen', async () => {
    for (let i = 0; i < LISTENS; i++)
      streams.push(await modernListen(gateway.mcpUrl, `L${i}`, { toolsListChanged: true }, {}));
    const listens = () => up.rpcs('subscriptions/listen').length;
    // each listen opened, then re-opened after 1 s, 2 s and 4 s
    await waitFor(
      () => listens() >= LISTENS * 4,
      60_000,
      () => `only ${listens()} upstream listens`,
    );
    const lines = gateway.output
      .split('\n')
      .filter((line) => /Upstream up: .*subscriptions\/listen ended/.test(line));
    expect(lines.length).toBeLessThanOrEqual(2);
    // the client streams are still open: the gateway keeps re-opening, it only logs less
    expect(streams.every((s) => !s.ended)).toBe(true);
  }, 90_000);
});
