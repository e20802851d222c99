import { GatewayProcess, waitFor } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { modernListen } from '../../support/modern-rpc';
import { ScriptedUpstream, upTool } from '../../support/scripted-upstream';
import type { SseReader } from '../../support/sse-reader';

/**
 * docs/operations.md §10 "Nesting"/"Width"; docs/security.md "Nesting": an upstream message
 * nested deeper than 129 levels (or holding more than 250,000 values) is refused before it is
 * parsed; on a stream of notifications (the 2025 GET stream, a 2026 upstream's
 * `subscriptions/listen` held for a client) such a message is dropped and the stream goes on:
 * the update after it reaches the client, on the same upstream listen (not re-opened 1 s later
 * with the updates in between lost).
 */
const URI = 'deep://r';
const frame = (m: string): string => `event: message\ndata: ${m}\n\n`;
const nested = (depth: number): string => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

const BAD: Record<string, string> = {
  // control: a small log message in the same place; the update after it is relayed
  control: `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"fine"}}`,
  // a log message nested 200 deep (progress and log messages never go on a listen anyway)
  deep: `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":${nested(200)}}}`,
  // a log message holding 300,000 values (600 KB, under the 8 MiB answer cap)
  wide: `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":[${'0,'.repeat(300_000)}0]}}`,
};

describe.each(Object.keys(BAD))('a %s notification on a 2026 upstream listen', (kind) => {
  let up: ScriptedUpstream;
  let gateway: GatewayProcess;
  let stream: SseReader | undefined;
  let listens = 0;
  /** The next upstream listen carries the bad message and the update after it; later ones say nothing. */
  let armed = false;

  beforeAll(async () => {
    up = await ScriptedUpstream.start({
      era: '2026',
      tools: [upTool('x')],
      resources: [{ uri: URI, name: 'r' }],
      capabilities: { tools: {}, resources: { subscribe: true } },
    });
    up.on('subscriptions/listen', (req) => {
      listens += 1;
      const ack = frame(
        JSON.stringify({
          jsonrpc: '2.0',
          method: 'notifications/subscriptions/acknowledged',
          params: { notifications: req.params?.notifications ?? {} },
        }),
      );
      const update = frame(
        JSON.stringify({
          jsonrpc: '2.0',
          method: 'notifications/resources/updated',
          params: { uri: URI },
        }),
      );
      // only the first listen of the client's stream carries the bad message and the update
      // after it; the ones re-opened later say nothing
      const first = armed;
      armed = false;
      return {
        headers: { 'content-type': 'text/event-stream' },
        raw: [
          ack,
          ...(first ? [frame(BAD[kind]!), update] : []),
          ...Array.from({ length: 300 }, () => ': keepalive\n\n'),
        ],
        chunkGapMs: 100,
      };
    });
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([], { upstreams: [upstream('up', up.url)] }),
        http: { modernEra: true },
      },
      waitReady: true,
    });
  }, 60_000);

  afterAll(async () => {
    stream?.close();
    await gateway?.stop();
    await up?.stop();
  });

  it('is dropped; the update after it reaches the client; the upstream listen stays open', async () => {
    listens = 0;
    armed = true;
    stream = await modernListen(gateway.mcpUrl, 'L1', { resourceSubscriptions: [URI] }, {});
    const ack = await stream.waitForMessage(
      (m) => m.method === 'notifications/subscriptions/acknowledged',
    );
    // the pull is done (waitReady): the URI's owner is known to take resource subscriptions
    expect(ack.params?.notifications?.resourceSubscriptions).toEqual([URI]);
    await waitFor(
      () => listens >= 1,
      10_000,
      () => 'no upstream listen',
    );
    // the update follows the bad message by 100 ms on the upstream's stream
    await new Promise((r) => setTimeout(r, 5000));
    const updates = stream.messages.filter(
      (m) => m.method === 'notifications/resources/updated' && m.params?.uri === URI,
    );
    expect({
      updates: updates.length,
      upstreamListens: listens,
      listenFailed:
        /Upstream up: subscriptions\/listen ended \(the upstream's answer (nests deeper|holds more)/.test(
          gateway.output,
        ),
    }).toEqual({ updates: 1, upstreamListens: 1, listenFailed: false });
  }, 60_000);
});
