import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type Redis from 'ioredis';
import type { GatewayConfig } from '@app/config';
import { MrtrSeal } from '../../libs/mcp/src/sealing/mrtr-seal';
import { stopAfterEach } from '../support/cleanup';
import { gatewayConfig, upstream } from '../support/fixtures';
import { GatewayProcess, TEST_SESSION_KEYS, waitFor } from '../support/gateway-process';
import { redisClient, SHARED_REDIS_URL, uniqueKeyPrefix } from '../support/redis';
import { openLegacySession, rpc } from '../support/rpc';
import { ScriptedUpstream } from '../support/scripted-upstream';
import { connectV1 } from '../support/sdk-clients';

const HOT = 'res://hot';
const update = (params: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  method: 'notifications/resources/updated',
  params,
});

/**
 * An upstream's `notifications/resources/updated` are bounded in the work they cause
 * (docs/operations.md §10 "Resource subscriptions"; docs/security.md "Hostile upstreams"): a
 * burst for one URI is coalesced (the first at once, one more when 500 ms are up, never
 * dropped), and what is relayed is the URI and a small `_meta`, not whatever else the upstream
 * put in its params. Before, 1,000 updates of 89 bytes to 3,000 subscribed sessions made
 * 1,000 publishes of 384 KB on the replicas' Redis channel (384 MB) and took RSS from 274 to
 * 671 MB.
 */
describe('bursts of resource updates', () => {
  const track = stopAfterEach();
  let listener: Redis | undefined;
  afterEach(async () => {
    await listener?.quit().catch(() => undefined);
    listener = undefined;
  });

  it('1,000 updates of one URI, some of them padded with a megabyte, reach the subscribed client and the Redis channel as a few small messages; a later one still arrives', async () => {
    const up = track(
      await ScriptedUpstream.start({
        resources: [{ uri: HOT, name: 'hot' }],
        capabilities: { tools: {}, resources: { subscribe: true } },
        sessionId: 'up-session',
        getStream: true,
      }),
    );
    up.on('resources/subscribe', () => ({ result: {} }));
    const keyPrefix = uniqueKeyPrefix();
    const gateway = track(
      await GatewayProcess.start({
        waitReady: true,
        env: { MCP_SESSION_KEYS: TEST_SESSION_KEYS, REDIS_URL: SHARED_REDIS_URL },
        mcp: gatewayConfig([], { upstreams: [upstream('u', up.url)], redis: { keyPrefix } }),
      }),
    );
    listener = redisClient();
    const published: string[] = [];
    listener.on('pmessage', (_pattern: string, _channel: string, text: string) =>
      published.push(text),
    );
    await listener.psubscribe(`${keyPrefix}:*:resource-updates`);

    // fifty more sessions subscribed, without streams, as many clients hold them
    for (let i = 0; i < 50; i++) {
      const session = await openLegacySession(gateway.mcpUrl);
      await rpc(gateway.mcpUrl, 'resources/subscribe', { uri: HOT }, session);
    }
    const client = await connectV1(gateway.mcpUrl);
    track({ stop: () => client.close() });
    const seen: Record<string, unknown>[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      seen.push(n.params);
    });
    await client.subscribeResource({ uri: HOT });
    await waitFor(
      () => up.openStreams > 0,
      5_000,
      () => 'the gateway opened no GET stream',
    );
    // let the client's GET stream open before the upstream speaks
    await new Promise((r) => setTimeout(r, 300));

    const padding = 'x'.repeat(1024 * 1024);
    for (let i = 0; i < 1000; i++)
      up.push(
        update(
          i % 100 === 0
            ? { uri: HOT, padding, _meta: { big: padding } }
            : { uri: HOT, _meta: { n: i } },
        ),
      );
    await waitFor(
      () => seen.length >= 1,
      5_000,
      () => 'no update reached the client',
    );
    // the burst's last messages are sent when its interval is up: wait until nothing more comes
    // for a second (a loaded machine may deliver the trailing one well after the interval)
    for (let quiet = 0, count = seen.length, rounds = 0; quiet < 4 && rounds < 40; rounds++) {
      await new Promise((r) => setTimeout(r, 250));
      quiet = seen.length === count && published.length === count ? quiet + 1 : 0;
      count = seen.length;
    }
    expect(seen.length).toBeGreaterThanOrEqual(1);
    expect(seen.length).toBeLessThanOrEqual(6);
    for (const params of seen) {
      expect(params.uri).toBe(HOT);
      expect(params).not.toHaveProperty('padding');
      expect(JSON.stringify(params).length).toBeLessThan(2_000);
    }
    expect(published.length).toBe(seen.length);
    // what crosses is sealed with the session keys (resource-update-bus.ts): opened as a replica would
    const [kid, key] = TEST_SESSION_KEYS.split(':') as [string, string];
    const seal = new MrtrSeal({
      sessionKeys: [{ kid, key: Buffer.from(key, 'base64') }],
      mcp: gatewayConfig([]),
    } as unknown as GatewayConfig);
    for (const text of published) {
      expect(text.length).toBeLessThan(30_000);
      const opened = seal.open('resource-bus', text, 0, text.length) as {
        body: { sessions: string[] };
      };
      // the subscribed client's stream is on this replica: only the 50 others are shared
      expect(opened.body.sessions).toHaveLength(50);
    }

    // a later update, after the interval, is delivered at once: nothing is dropped
    const before = seen.length;
    up.push(update({ uri: HOT, _meta: { n: 'later' } }));
    await waitFor(
      () => seen.length === before + 1,
      5_000,
      () => JSON.stringify(seen),
    );
    expect(seen.at(-1)).toEqual({ uri: HOT, _meta: { n: 'later' } });
  });
});
