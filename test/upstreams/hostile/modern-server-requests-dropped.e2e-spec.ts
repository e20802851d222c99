import { GatewayProcess, waitFor } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { modernListen } from '../../support/modern-rpc';
import { ScriptedUpstream } from '../../support/scripted-upstream';

/**
 * A 2026-07-28 upstream that packs 300 `ping` requests into the stream of a listen the gateway
 * holds on it. That revision has no client responses, so such requests are dropped unanswered
 * (docs/security.md "What an upstream can make the gateway do"): no answer is POSTed, none is
 * queued as owed, and the gateway does not log them as answers it could not keep up with
 * (the "belong to no caller left unanswered" line is for 2025 sessions, whose requests it owes
 * an answer).
 */
const PINGS = 300;
const frame = (message: object) => `event: message\ndata: ${JSON.stringify(message)}\n\n`;

describe('a 2026 upstream sending requests on a listen', () => {
  let up: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    up = await ScriptedUpstream.start({
      era: '2026',
      tools: [{ name: 't', inputSchema: { type: 'object' } }],
      capabilities: { tools: { listChanged: true } },
    });
    up.on('subscriptions/listen', (req) => ({
      headers: { 'content-type': 'text/event-stream' },
      raw: [
        frame({
          jsonrpc: '2.0',
          method: 'notifications/subscriptions/acknowledged',
          params: { notifications: req.params?.notifications ?? {} },
        }),
        Array.from({ length: PINGS }, (_, i) =>
          frame({ jsonrpc: '2.0', id: `ping-${i}`, method: 'ping' }),
        ).join(''),
        frame({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }),
        ...Array.from({ length: 100 }, () => ': keepalive\n\n'),
      ],
      chunkGapMs: 100,
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

  it('drops them: nothing answered, nothing logged as owed', async () => {
    const stream = await modernListen(gateway.mcpUrl, 'L', { toolsListChanged: true }, {});
    try {
      // the list_changed after the pings marks their end on the upstream's stream
      await stream.waitForMessage((m) => m.method === 'notifications/tools/list_changed', 30_000);
      await waitFor(
        () => /list_changed; refreshing it/.test(gateway.output),
        10_000,
        () => 'the list_changed after the pings was not read',
      );
      expect({
        answersPosted: up.requests.filter((r) => r.httpMethod === 'POST' && r.method === undefined)
          .length,
        owedLine: /server request\(s\) that belong to no caller left unanswered/.test(
          gateway.output,
        ),
      }).toEqual({ answersPosted: 0, owedLine: false });
    } finally {
      stream.close();
    }
  }, 60_000);
});
