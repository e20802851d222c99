import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { gatewayConfig, upstream } from '../support/fixtures';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { V1Upstream } from '../support/mcp-upstreams';
import { rpc } from '../support/rpc';
import { connectV1 } from '../support/sdk-clients';

const README = 'repo://readme';

/**
 * docs/operations.md §10 "Resource subscriptions": a 2025 session's subscription lives until its
 * unsubscribe, its session id's expiry or its subscribing token's expiry; the gateway holds it for
 * every client on its one shared session with the upstream. When that upstream session is lost
 * and the gateway re-initializes (§10 "Eras": a 404 re-initializes), the log level is told to the
 * new session again (shared-log-level.e2e-spec.ts) — the subscriptions the gateway holds there
 * must be too, or every subscribed client silently stops getting updates while it still holds
 * its subscription (nothing ended it, nothing told it).
 */
describe('resource subscriptions after the upstream session is re-initialized', () => {
  let repo: V1Upstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    repo = await V1Upstream.start({}, { subscribable: true });
    gateway = await GatewayProcess.start({
      // refresh rounds every second: nothing waits for a slow round
      mcp: gatewayConfig([], {
        registry: { refreshIntervalSeconds: 1 },
        upstreams: [upstream('repo', repo.url)],
      }),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await repo?.stop();
  });

  jest.setTimeout(90_000);

  it("a client's live subscription is held on the gateway's new upstream session, and its updates keep reaching it", async () => {
    const client = await connectV1(gateway.mcpUrl);
    try {
      const seen: string[] = [];
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
        seen.push(n.params.uri);
      });
      await client.subscribeResource({ uri: README });
      // let the client's GET stream open before the upstream speaks
      await new Promise((resolve) => setTimeout(resolve, 300));
      await repo.notifyResourceUpdated(README);
      await waitFor(
        () => seen.length === 1,
        5000,
        () => JSON.stringify(seen),
      );

      // the upstream loses its sessions (a restart, an expiry): the gateway's next request
      // meets a 404 and re-initializes
      const before = repo.issuedSessions.length;
      await repo.expireSessions();
      const call = await rpc(gateway.mcpUrl, 'tools/call', {
        name: 'repo__repo_search',
        arguments: { query: 'x' },
      });
      expect(call.json?.result?.isError).not.toBe(true);
      expect(repo.issuedSessions.length).toBeGreaterThan(before);
      // the sessions the gateway opened on the upstream since it lost the first
      const renewed = (): string[] => repo.issuedSessions.slice(before);

      // the client never unsubscribed: a new session must hold the URI for it
      await waitFor(
        () => renewed().some((id) => repo.subscriptions.get(id)?.has(README) === true),
        20_000,
        () =>
          `the upstream's ${renewed().length} new session(s) hold ${JSON.stringify(
            renewed().flatMap((id) => [...(repo.subscriptions.get(id) ?? [])]),
          )}; the client still holds its subscription to ${README}`,
      );
      // and an update of the URI reaches the subscribed client again
      await waitFor(
        async () => {
          await repo.notifyResourceUpdated(README);
          return seen.length >= 2;
        },
        15_000,
        () => `updates seen by the client: ${JSON.stringify(seen)}`,
      );
    } finally {
      await client.close();
    }
  });
});
