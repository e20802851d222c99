import { GatewayProcess, waitFor } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { ListenUpstream, STATUS_URI } from '../support/listen-upstream';
import { modernListen } from '../support/modern-rpc';
import type { SseReader } from '../support/sse-reader';

/**
 * A well-behaved 2026 upstream (the v2 SDK) that keeps sending small resource updates on the
 * listen the gateway holds for a client. A listen is a stream of notifications, not one answer:
 * `execution.maxResponseBytes` caps each update on it, as on the 2025 GET stream, never the
 * listen's whole life (docs/security.md "Bytes"; docs/operations.md §11: a 2026 listen "passes
 * each update in order"). Here the cap is lowered to 100 kB, which 2,000 updates of ~150 bytes
 * pass together (with the default 8 MiB the same holds after ~45,000 such updates): every
 * update reaches the client on one upstream listen, which is never cut for size.
 */
const CAP = 100_000;
const UPDATES = 2_000;

describe.each([
  ['control: the default 8 MiB cap', undefined],
  [`a ${CAP}-byte cap`, CAP],
])('a long-lived upstream listen, %s', (_label, cap) => {
  let up: ListenUpstream;
  let gateway: GatewayProcess;
  let stream: SseReader | undefined;

  beforeAll(async () => {
    up = await ListenUpstream.start(['echo']);
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([], {
          upstreams: [upstream('up', up.url)],
          ...(cap === undefined ? {} : { execution: { maxResponseBytes: cap } }),
        }),
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

  it('every update reaches a client that reads, on one upstream listen', async () => {
    await waitFor(async () => {
      const probe = await modernListen(
        gateway.mcpUrl,
        'probe',
        { resourceSubscriptions: [STATUS_URI] },
        {},
      );
      const ack = await probe.waitForMessage(
        (m) => m.method === 'notifications/subscriptions/acknowledged',
      );
      probe.close();
      return (ack.params?.notifications?.resourceSubscriptions ?? []).includes(STATUS_URI);
    }, 20_000);
    // the probe's own upstream listen may open (and close) after its client stream closed:
    // let it come and go before counting, so only the listen held for L1 is counted
    await waitFor(() => up.openListens === 0, 10_000);
    await new Promise((r) => setTimeout(r, 1000));
    await waitFor(() => up.openListens === 0, 10_000);
    const before = up.listensSeen.length;
    stream = await modernListen(gateway.mcpUrl, 'L1', { resourceSubscriptions: [STATUS_URI] }, {});
    await waitFor(
      () => up.openListens === 1,
      10_000,
      () => 'no upstream listen',
    );
    // ~1,000 updates a second, 20 every 20 ms, each ~150 bytes on the upstream's stream
    for (let sent = 0; sent < UPDATES; sent += 20) {
      for (let i = 0; i < 20; i++) up.notifyResourceUpdated(STATUS_URI);
      await new Promise((r) => setTimeout(r, 20));
    }
    const got = (): number =>
      stream!.messages.filter((m) => m.method === 'notifications/resources/updated').length;
    await waitFor(
      () => got() >= UPDATES,
      10_000,
      () => `got ${got()} of ${UPDATES} updates`,
    ).catch(() => undefined);
    expect({
      updates: got(),
      upstreamListens: up.listensSeen.length - before,
      cutForSize: /subscriptions\/listen ended \(the upstream's answer exceeded the limit/.test(
        gateway.output,
      ),
    }).toEqual({ updates: UPDATES, upstreamListens: 1, cutForSize: false });
  }, 90_000);
});
