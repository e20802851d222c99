import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { gatewayConfig, upstream } from '../support/fixtures';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { V1Upstream } from '../support/mcp-upstreams';
import { ListenUpstream, STATUS_URI } from '../support/listen-upstream';
import { connectV1, connectV2 } from '../support/sdk-clients';

const README = 'repo://readme';

/**
 * Resource updates of a 2025 upstream reach the 2025 clients that subscribed through the
 * gateway (docs/operations.md §10 "Resource subscriptions"): `resources/subscribe` goes to the
 * owner on the gateway's session with it, its `notifications/resources/updated` arrive on that
 * session's GET stream and are relayed to the GET stream of every client session subscribed to
 * the URI — not to others. The upstream is told `resources/unsubscribe` only when the last
 * subscribed session leaves. Before, the update stopped at the gateway (a direct client got it
 * within 400 ms). The official v1 and v2 clients open their GET stream themselves.
 */
describe('resource updates relayed to subscribed 2025 sessions', () => {
  let repo: V1Upstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    repo = await V1Upstream.start({}, { subscribable: true });
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], { upstreams: [upstream('repo', repo.url)] }),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await repo?.stop();
  });

  /** The URIs the upstream holds subscriptions for, over all of its sessions. */
  function upstreamSubscribed(): string[] {
    return [...repo.subscriptions.values()].flatMap((uris) => [...uris]);
  }

  it('the subscribed v1 and v2 clients get the update, an unsubscribed one does not; the last unsubscribe reaches the upstream', async () => {
    const a = await connectV1(gateway.mcpUrl);
    const b = await connectV2(gateway.mcpUrl);
    const c = await connectV1(gateway.mcpUrl);
    try {
      const seen = { a: [] as string[], b: [] as string[], c: [] as string[] };
      a.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
        seen.a.push(n.params.uri);
      });
      b.setNotificationHandler('notifications/resources/updated', (n) => {
        seen.b.push(n.params.uri);
      });
      c.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
        seen.c.push(n.params.uri);
      });
      const capabilities = a.getServerCapabilities();
      expect(capabilities?.resources).toMatchObject({ subscribe: true });

      await a.subscribeResource({ uri: README });
      await b.subscribeResource({ uri: README });
      expect(upstreamSubscribed()).toContain(README);
      // let the clients' GET streams open before the upstream speaks
      await new Promise((resolve) => setTimeout(resolve, 300));

      await repo.notifyResourceUpdated(README);
      await waitFor(
        () => seen.a.length === 1 && seen.b.length === 1,
        5000,
        () => JSON.stringify(seen),
      );
      expect(seen).toEqual({ a: [README], b: [README], c: [] });

      // a leaves: b still subscribes, so the upstream keeps the subscription
      await a.unsubscribeResource({ uri: README });
      expect(upstreamSubscribed()).toContain(README);
      await repo.notifyResourceUpdated(README);
      await waitFor(
        () => seen.b.length === 2,
        5000,
        () => JSON.stringify(seen),
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(seen).toEqual({ a: [README], b: [README, README], c: [] });

      // b leaves too: now the upstream is told
      await b.unsubscribeResource({ uri: README });
      expect(upstreamSubscribed()).not.toContain(README);
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]);
    }
  });
});

/**
 * A 2025 client's subscription to a resource of a 2026 upstream, which has no
 * resources/subscribe: the gateway holds a `subscriptions/listen` on the upstream with the
 * session's URIs as `resourceSubscriptions` and relays what it delivers to the session's GET
 * stream; unsubscribing ends that listen (docs/operations.md §10 "Resource subscriptions").
 * The upstream is a real v2 SDK server (test/support/listen-upstream.ts).
 */
describe('a 2025 subscription to a 2026 upstream is bridged to subscriptions/listen', () => {
  let status: ListenUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    status = await ListenUpstream.start();
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], {
        upstreams: [upstream('status', status.url, { protocol: '2026-07-28' })],
      }),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await status?.stop();
  });

  it.each(['v1', 'v2-legacy'] as const)(
    'the %s client subscribes, gets the update on its GET stream, and unsubscribing ends the listen',
    async (kind) => {
      const client =
        kind === 'v1' ? await connectV1(gateway.mcpUrl) : await connectV2(gateway.mcpUrl);
      const seen: string[] = [];
      try {
        if (kind === 'v1')
          (client as Awaited<ReturnType<typeof connectV1>>).setNotificationHandler(
            ResourceUpdatedNotificationSchema,
            (n) => {
              seen.push(n.params.uri);
            },
          );
        else
          (client as Awaited<ReturnType<typeof connectV2>>).setNotificationHandler(
            'notifications/resources/updated',
            (n) => {
              seen.push(n.params.uri);
            },
          );
        const listensBefore = status.listensSeen.length;
        await client.subscribeResource({ uri: STATUS_URI });
        await waitFor(() => status.openListens > 0, 5000);
        const listen = status.listensSeen[listensBefore] as {
          params?: { notifications?: { resourceSubscriptions?: string[] } };
        };
        expect(listen.params?.notifications?.resourceSubscriptions).toEqual([STATUS_URI]);
        // let the client's GET stream open before the upstream speaks
        await new Promise((resolve) => setTimeout(resolve, 300));
        status.notifyResourceUpdated(STATUS_URI);
        await waitFor(
          () => seen.length === 1,
          5000,
          () => JSON.stringify(seen),
        );
        expect(seen).toEqual([STATUS_URI]);

        await client.unsubscribeResource({ uri: STATUS_URI });
        await waitFor(() => status.openListens === 0, 5000);
      } finally {
        await client.close();
      }
    },
  );
});
