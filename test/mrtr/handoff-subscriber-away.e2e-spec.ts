import type { GatewayConfig } from '@app/config';
import { InputHandoff } from '../../libs/mcp/src/mrtr/input-handoff';
import { MrtrSeal } from '../../libs/mcp/src/sealing/mrtr-seal';
import type { RedisClient } from '@app/redis';
import { waitFor } from '../support/gateway-process';
import { SHARED_REDIS_URL, redisClient, uniqueKeyPrefix } from '../support/redis';

/** Two replicas' handoffs over the real Redis of the suites, each with its own key prefix. */
function replicaConfig(keyPrefix: string): GatewayConfig {
  return {
    redisServer: { kind: 'standalone', url: SHARED_REDIS_URL, secrets: { tls: false } },
    sessionKeys: [],
    mcp: {
      identity: 'gw',
      redis: { keyPrefix, connectTimeoutMillis: 2000, commandTimeoutMillis: 1000 },
      execution: { maxResponseBytes: 8_388_608 },
    },
  } as unknown as GatewayConfig;
}

function connection(handoff: InputHandoff, which: 'publisher' | 'subscriber'): RedisClient {
  return (handoff as unknown as Record<typeof which, RedisClient>)[which];
}

/**
 * A resume crosses replicas as a publish to the holder and an acknowledgement and reply back to
 * its sender (docs/operations.md §11 "Multi round-trip and era bridging"). When either way back
 * is closed (the sender's subscriber not subscribed again yet after Redis returned, the holder's
 * publisher refused), the holder must not take the input: its client is told to send it again
 * (503), and a second sending taken as "answered already" would lose the answer.
 */
describe('InputHandoff across replicas when the way back is closed', () => {
  let sender: InputHandoff;
  let holder: InputHandoff;
  const ran: unknown[] = [];
  let keyPrefix: string;

  beforeEach(async () => {
    keyPrefix = uniqueKeyPrefix();
    const config = replicaConfig(keyPrefix);
    // one seal for both: the replicas' shared MCP_SESSION_KEYS
    const seal = new MrtrSeal(config);
    sender = new InputHandoff(config, seal);
    holder = new InputHandoff(config, seal);
    await sender.onModuleInit();
    await holder.onModuleInit();
    ran.length = 0;
    holder.hold('call', (input) => {
      ran.push(input);
      return Promise.resolve(true);
    });
  });

  afterEach(async () => {
    await sender.onApplicationShutdown();
    await holder.onApplicationShutdown();
  });

  it("a sender whose own subscriber is away publishes nothing: unreachable at once, the holder's input untaken, and the same input taken once it is subscribed again", async () => {
    const away = connection(sender, 'subscriber');
    const closed = new Promise((r) => away.once('end', r));
    away.disconnect();
    await closed;
    // what reaches the holder's channel
    const probe = redisClient();
    const published: string[] = [];
    probe.on('message', (_channel: string, text: string) => published.push(text));
    await probe.subscribe(`${keyPrefix}:{gw}:mrtr:${holder.replicaId}`);
    try {
      await expect(sender.resume(holder.replicaId, 'call', 'first', 10_000)).resolves.toEqual({
        kind: 'unreachable',
      });
      // what a holder that got it would have done by now (a publish and a reply on one Redis)
      await new Promise((r) => setTimeout(r, 500));
      expect(published).toEqual([]);
      expect(ran).toEqual([]);
    } finally {
      probe.disconnect();
    }
    await away.connect();
    let outcome: unknown;
    await waitFor(async () => {
      outcome = await sender.resume(holder.replicaId, 'call', 'again', 10_000);
      return (outcome as { kind: string }).kind !== 'unreachable';
    }, 10_000);
    expect(outcome).toEqual({ kind: 'ok', value: true });
    expect(ran).toEqual(['again']);
  }, 30_000);

  it('a holder that cannot acknowledge a resume (its publisher refused) does not act on it: the sender is told unreachable, and the input is taken when sent again', async () => {
    const refused = connection(holder, 'publisher');
    refused.disconnect();
    await expect(sender.resume(holder.replicaId, 'call', 'first', 20_000)).resolves.toEqual({
      kind: 'unreachable',
    });
    expect(ran).toEqual([]);
    await refused.connect();
    await expect(sender.resume(holder.replicaId, 'call', 'again', 10_000)).resolves.toEqual({
      kind: 'ok',
      value: true,
    });
    expect(ran).toEqual(['again']);
  }, 30_000);
});
