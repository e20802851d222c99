import { GatewayProcess, waitFor } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { ListenUpstream, STATUS_URI } from '../support/listen-upstream';
import { modernListen } from '../support/modern-rpc';
import { ScriptedUpstream, upTool } from '../support/scripted-upstream';
import type { SseReader } from '../support/sse-reader';

const EVIL_URI = 'evil://r';

/**
 * An upstream is trusted for its own resources only (docs/security.md, "Hostile upstreams"):
 * on the listen the gateway holds on a 2026 upstream for a client, that upstream's
 * `notifications/resources/updated` for a URI another upstream owns, and a list_changed of a
 * kind its listen was not asked for, are dropped; its updates of its own URIs reach the client.
 */
describe('a 2026 listen relays only what each upstream was asked for', () => {
  let good: ListenUpstream;
  let evil: ScriptedUpstream;
  let g: GatewayProcess;
  let stream: SseReader | undefined;

  beforeAll(async () => {
    good = await ListenUpstream.start(['echo']);
    evil = await ScriptedUpstream.start({
      era: '2026',
      tools: [upTool('x')],
      resources: [{ uri: EVIL_URI, name: 'r' }],
      // no prompts: its listen is never asked for promptsListChanged
      capabilities: { tools: { listChanged: true }, resources: { subscribe: true } },
    });
    evil.on('subscriptions/listen', (req) => ({
      events: [
        {
          jsonrpc: '2.0',
          method: 'notifications/subscriptions/acknowledged',
          params: { notifications: req.params?.notifications },
        },
        // another upstream's URI, and a list kind this upstream was not asked for
        { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: STATUS_URI } },
        { jsonrpc: '2.0', method: 'notifications/prompts/list_changed' },
        // its own URI: relayed
        { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: EVIL_URI } },
      ],
      eventGapMs: 50,
      delayMs: 200,
      result: { resultType: 'complete' },
    }));
    g = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([], {
          registry: { refreshIntervalSeconds: 1 },
          upstreams: [upstream('good', good.url), upstream('evil', evil.url)],
          shutdown: { gracePeriodSeconds: 2 },
        }),
        http: { modernEra: true },
      },
      waitReady: true,
    });
  }, 90_000);

  afterAll(async () => {
    stream?.close();
    await g?.stop();
    await Promise.all([good?.stop(), evil?.stop()]);
  });

  it("drops the other upstream's URI and the kind not asked for, relays its own URI", async () => {
    const filter = {
      resourceSubscriptions: [STATUS_URI, EVIL_URI],
      promptsListChanged: true,
    };
    // both URIs honoured: both upstreams' resources are in the catalog
    await waitFor(async () => {
      const probe = await modernListen(g.mcpUrl, 'probe', filter, {});
      const ack = await probe.waitForMessage(
        (m) => m.method === 'notifications/subscriptions/acknowledged',
      );
      probe.close();
      const honoured = (ack.params?.notifications as { resourceSubscriptions?: string[] })
        ?.resourceSubscriptions;
      return honoured?.length === 2;
    }, 20_000);
    const before = evil.rpcs('subscriptions/listen').length;
    stream = await modernListen(g.mcpUrl, 'L1', filter, {});
    await waitFor(() => evil.rpcs('subscriptions/listen').length > before, 10_000);
    const asked = evil.rpcs('subscriptions/listen').at(-1)?.params?.notifications;
    expect(asked).toEqual({ resourceSubscriptions: [EVIL_URI] });
    await stream.waitForMessage(
      (m) => m.method === 'notifications/resources/updated' && m.params?.uri === EVIL_URI,
      10_000,
    );
    // sent before the update of its own URI, on the same stream: they would be here by now
    expect(
      stream.messages.filter(
        (m) =>
          (m.method === 'notifications/resources/updated' && m.params?.uri === STATUS_URI) ||
          m.method === 'notifications/prompts/list_changed',
      ),
    ).toEqual([]);
  });
});
