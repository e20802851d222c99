import { GatewayProcess } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { ScriptedUpstream } from '../support/scripted-upstream';
import { SseReader } from '../support/sse-reader';

const V = '2026-07-28';
const URI = 'res://hostile/a';
const envelope = {
  'io.modelcontextprotocol/protocolVersion': V,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
};

/**
 * docs/security.md "Hostile upstreams", _Update work_: an upstream's change notifications reach
 * clients as what the notification type holds — of notifications/resources/updated the URI and
 * a small `_meta`, of a list change nothing — on a 2026 client's subscriptions/listen as on the
 * 2025 paths: one upstream cannot make each relayed copy megabytes long. (A listen passes every
 * update, in order; one its client cannot keep up with is closed past listen.maxQueuedBytes,
 * test/modern/stream-backpressure.e2e-spec.ts.)
 */
describe("a 2026 upstream's resources/updated on the listen the gateway holds for a 2026 client", () => {
  let up: ScriptedUpstream;
  let gateway: GatewayProcess;
  const JUNK = 'J'.repeat(50_000);
  const BURST = 40;
  let toolListens = 0;
  let resourceListens = 0;

  beforeAll(async () => {
    up = await ScriptedUpstream.start({
      era: '2026',
      resources: [{ uri: URI, name: 'a' }],
      tools: [{ name: 't', inputSchema: { type: 'object' } }],
      capabilities: { tools: { listChanged: true }, resources: { subscribe: true } },
    });
    up.on('subscriptions/listen', (req) => {
      const asked = req.params?.notifications ?? {};
      const toolsOnly = asked.toolsListChanged === true;
      if (toolsOnly ? toolListens++ > 0 : resourceListens++ > 0) return { hang: true };
      const ack = {
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: { notifications: req.params?.notifications ?? {} },
      };
      const updates = Array.from({ length: BURST }, (_, i) =>
        toolsOnly
          ? {
              jsonrpc: '2.0',
              method: 'notifications/tools/list_changed',
              params: { junk: JUNK, seq: i, _meta: { big: JUNK } },
            }
          : {
              jsonrpc: '2.0',
              method: 'notifications/resources/updated',
              params: { uri: URI, junk: JUNK, seq: i, _meta: { big: JUNK } },
            },
      );
      const frames = [ack, ...updates].map((m) => `event: message\ndata: ${JSON.stringify(m)}\n\n`);
      return {
        status: 200,
        headers: { 'content-type': 'text/event-stream' },
        raw: frames,
        chunkGapMs: 5,
      };
    });
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([], { upstreams: [upstream('hostile', up.url)] }),
        http: { modernEra: true },
      },
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await up?.stop();
  });

  it('the client gets the URI without what the upstream added, not 40 copies of 100 KB', async () => {
    const stream = await SseReader.open(
      gateway.mcpUrl,
      'POST',
      {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': V,
        'mcp-method': 'subscriptions/listen',
      },
      JSON.stringify({
        jsonrpc: '2.0',
        id: 'L',
        method: 'subscriptions/listen',
        params: { _meta: envelope, notifications: { resourceSubscriptions: [URI] } },
      }),
    );
    try {
      const ack = await stream.waitForMessage(() => true);
      expect(ack.params.notifications).toEqual({ resourceSubscriptions: [URI] });
      await stream.waitForMessage((m) => m.method === 'notifications/resources/updated');
      // let the whole burst arrive (it is sent within ~0.3 s)
      await new Promise((r) => setTimeout(r, 1500));
      const updates = stream.messages.filter((m) => m.method === 'notifications/resources/updated');
      const largest = Math.max(...updates.map((m) => JSON.stringify(m).length));
      // the URI and nothing the upstream added (its _meta is over 1 KB), each in order
      expect(updates.every((m) => JSON.stringify(m.params).length < 2048)).toBe(true);
      expect(updates[0].params.uri).toBe(URI);
      expect(updates[0].params).not.toHaveProperty('junk');
      expect(largest).toBeLessThan(2048);
    } finally {
      stream.close();
    }
  });

  it("an upstream's list_changed on its listen reaches the client without the upstream's own params (the catalog's own list_changed has none), not 40 copies of 100 KB", async () => {
    const stream = await SseReader.open(
      gateway.mcpUrl,
      'POST',
      {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': V,
        'mcp-method': 'subscriptions/listen',
      },
      JSON.stringify({
        jsonrpc: '2.0',
        id: 'T',
        method: 'subscriptions/listen',
        params: { _meta: envelope, notifications: { toolsListChanged: true } },
      }),
    );
    try {
      await stream.waitForMessage(() => true);
      await stream.waitForMessage((m) => m.method === 'notifications/tools/list_changed');
      await new Promise((r) => setTimeout(r, 1500));
      const changes = stream.messages.filter(
        (m) => m.method === 'notifications/tools/list_changed',
      );
      const largest = Math.max(...changes.map((m) => JSON.stringify(m).length));
      expect(largest).toBeLessThan(2048);
      expect(changes[0].params).not.toHaveProperty('junk');
    } finally {
      stream.close();
    }
  });
});
