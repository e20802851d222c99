import { GatewayProcess, waitFor } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { modernListen } from '../../support/modern-rpc';
import { ScriptedUpstream } from '../../support/scripted-upstream';

/**
 * A 2026 upstream that floods its listen with `notifications/tools/list_changed` (2,000 at once)
 * while its tools never change: the client's listen gets at most one a method every 500 ms, the
 * first at once and the burst's last when the interval is up (docs/operations.md §11
 * "Notification streams"), not 2,000 reasons to list tools again. A prompts/list_changed sent
 * after the flood marks its end on the upstream's stream (one stream: the order holds).
 */
const FLOOD = 2000;
const frame = (message: object) => `event: message\ndata: ${JSON.stringify(message)}\n\n`;

describe('an upstream flooding list_changed on a listen', () => {
  let up: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    up = await ScriptedUpstream.start({
      era: '2026',
      tools: [{ name: 't', inputSchema: { type: 'object' } }],
      prompts: [{ name: 'p' }],
      capabilities: { tools: { listChanged: true }, prompts: { listChanged: true } },
    });
    up.on('subscriptions/listen', (req) => ({
      raw: [
        frame({
          jsonrpc: '2.0',
          method: 'notifications/subscriptions/acknowledged',
          params: { notifications: req.params?.notifications ?? {} },
        }),
        frame({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }).repeat(FLOOD),
        frame({ jsonrpc: '2.0', method: 'notifications/prompts/list_changed' }),
        // then the stream stays open, quiet
        ...Array.from({ length: 600 }, () => ': keepalive\n\n'),
      ],
      chunkGapMs: 100,
      headers: { 'content-type': 'text/event-stream' },
    }));
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], { upstreams: [upstream('up', up.url)] }),
      waitReady: true,
    });
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await up?.stop();
  });

  it('the client gets a few list_changed, not one per upstream notification', async () => {
    const stream = await modernListen(
      gateway.mcpUrl,
      'flood',
      { toolsListChanged: true, promptsListChanged: true },
      {},
    );
    try {
      const tools = () =>
        stream.messages.filter((m) => m.method === 'notifications/tools/list_changed').length;
      // the flood was relayed up to its end: the prompts notification came after it
      await stream.waitForMessage((m) => m.method === 'notifications/prompts/list_changed', 30_000);
      // the burst's last one, when its interval is up
      await waitFor(
        () => tools() >= 2,
        10_000,
        () => `only ${tools()} tools/list_changed`,
      );
      // per upstream listen the stream holds: the first, and the burst's last
      expect(tools()).toBeLessThanOrEqual(2 * up.rpcs('subscriptions/listen').length);
      expect(stream.ended).toBe(false);
    } finally {
      stream.close();
    }
  }, 60_000);
});
