import { GatewayProcess, waitFor } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { ListenUpstream } from '../support/listen-upstream';
import { modernListen, modernRequest } from '../support/modern-rpc';
import type { SseReader } from '../support/sse-reader';

/**
 * The 2026 sibling of resource-owner-change: a client's listen on `shared://x`, owned by the
 * earlier upstream `a` when the listen opened. `a` then stops listing it; the later `b` (which
 * lists it too) becomes its owner: resources/read goes to `b`. docs/security.md "Its own
 * notifications only": "only what that upstream's listen was asked for is relayed: its
 * notifications/resources/updated for the URIs it owns … An update it sends for another
 * source's URI … is dropped". The upstream listen held on `a` is narrowed when the owner changes,
 * and what `a` still sends for the URI is dropped.
 */
const X = 'shared://x';

describe('a 2026 listen when the URI changes owner', () => {
  let a: ListenUpstream;
  let b: ListenUpstream;
  let gateway: GatewayProcess;
  let stream: SseReader | undefined;

  beforeAll(async () => {
    a = await ListenUpstream.start(['ea'], [X]);
    b = await ListenUpstream.start(['eb'], [X]);
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([], {
          registry: { refreshIntervalSeconds: 1 },
          upstreams: [upstream('a', a.url), upstream('b', b.url)],
        }),
        http: { modernEra: true },
      },
      waitReady: true,
    });
  }, 60_000);

  afterAll(async () => {
    stream?.close();
    await gateway?.stop();
    await Promise.all([a?.stop(), b?.stop()]);
  });

  it("after the owner changed, the old owner's updates are dropped and the new owner's relayed", async () => {
    const updates = (): number =>
      stream!.messages.filter((m) => m.method === 'notifications/resources/updated').length;
    stream = await modernListen(gateway.mcpUrl, 'L1', { resourceSubscriptions: [X] }, {});
    const ack = await stream.waitForMessage(
      (m) => m.method === 'notifications/subscriptions/acknowledged',
    );
    expect(ack.params?.notifications?.resourceSubscriptions).toEqual([X]);
    await waitFor(
      () => a.openListens === 1,
      10_000,
      () => 'no listen on a',
    );
    // control: while `a` owns it, its update is relayed
    a.notifyResourceUpdated(X);
    await waitFor(
      () => updates() === 1,
      5000,
      () => `got ${updates()}`,
    );

    // `a` stops listing X: `b` owns it after the next refresh round (1 s)
    (a as any).extraResources = [];
    const readFrom = async (): Promise<string | undefined> =>
      (await modernRequest(gateway.mcpUrl, 'resources/read', { uri: X, name: X }, {})).json?.result
        ?.contents?.[0]?.text;
    await waitFor(
      async () => b.listensSeen.length > 0 && (await readFrom()) === 'ok',
      20_000,
      () => 'b never became the owner',
    );
    await new Promise((r) => setTimeout(r, 1500));

    // the new owner's update
    b.notifyResourceUpdated(X);
    await new Promise((r) => setTimeout(r, 1000));
    const afterOwner = updates();
    // the old owner's update of a URI it no longer owns (nor lists)
    a.notifyResourceUpdated(X);
    await new Promise((r) => setTimeout(r, 1000));
    expect({ fromNewOwner: afterOwner - 1, fromOldOwner: updates() - afterOwner }).toEqual({
      fromNewOwner: 1,
      fromOldOwner: 0,
    });
  }, 60_000);
});
