import 'reflect-metadata';
import Redis from 'ioredis';
import type { GatewayConfig } from '@app/config';
import { redisUseOptions } from '@app/redis';
import { PinnedTools, type CatalogTool } from '@app/registry';
import { RedisPinStore } from '../../libs/registry/src/pins/pin-store';
import { SHARED_REDIS_URL, deleteKeys, redisClient, uniqueKeyPrefix } from '../support/redis';

/**
 * Two replicas' approvals of pinned tools on one real Redis, each sync in the order a test needs
 * (docs/operations.md §6 "Pinned tool definitions"): when the store loses its data, every
 * replica writes back the approvals the store lacks, not only the first to notice, so an
 * approval the first had not read yet is not lost.
 */
describe('approvals of pinned tools written back by every replica after Redis loses them', () => {
  const redis = redisClient();
  const keyPrefix = uniqueKeyPrefix();
  const replicas: PinnedTools[] = [];
  const config = {
    mcp: {
      identity: 'gw',
      redis: { keyPrefix, commandTimeoutMillis: 2000, connectTimeoutMillis: 2000 },
      discovery: { maxManifestBytes: 1_048_576 },
      execution: { maxResponseBytes: 8_388_608 },
    },
  } as unknown as GatewayConfig;

  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.onApplicationShutdown()));
    await deleteKeys(redis, keyPrefix);
    redis.disconnect();
  });

  const tool = (name: string): CatalogTool =>
    ({
      name,
      sourceId: 'shop',
      fingerprint: `fp-${name}`,
      publishedJson: JSON.stringify({ name, inputSchema: { type: 'object' } }),
      route: { kind: 'bundle', bundle: { pinned: true } },
    }) as unknown as CatalogTool;
  const tools = [tool('shop.order'), tool('shop.refund')];

  async function replica(): Promise<PinnedTools> {
    const pins = new PinnedTools(
      new RedisPinStore(
        new Redis(SHARED_REDIS_URL, redisUseOptions('pins', config.mcp.redis)),
        config,
      ),
    );
    await pins.start();
    replicas.push(pins);
    return pins;
  }

  /** A sync now (as the timer would run it), in the order the test needs. */
  const sync = (pins: PinnedTools): Promise<void> =>
    (pins as unknown as { sync(): Promise<void> }).sync();

  /** The tools this replica serves (not held) of the catalog, screened now. */
  const served = (pins: PinnedTools): string[] => {
    const screened = pins.screen(tools, Date.now());
    pins.commit(screened);
    return screened.tools.map((t) => t.name).sort();
  };

  async function approve(pins: PinnedTools, name: string): Promise<void> {
    served(pins);
    const digest = pins.held(name)?.digest as string;
    const outcome = await pins.approve('shop', [{ name, digest }], 'op', Date.now());
    expect(outcome).toMatchObject({ approved: [name], shared: true });
  }

  it('the replica that had not read the newest approval writes back first: the other writes back the rest', async () => {
    const [a, b] = [await replica(), await replica()];
    await approve(a, 'shop.order');
    await sync(b);
    // approved on a after b's last read
    await approve(a, 'shop.refund');
    expect(served(b)).toEqual(['shop.order']);
    await deleteKeys(redis, keyPrefix);
    await sync(b);
    await sync(a);
    await sync(b);
    await sync(a);
    expect(served(a)).toEqual(['shop.order', 'shop.refund']);
    expect(served(b)).toEqual(['shop.order', 'shop.refund']);
    expect((await redis.hkeys(`${keyPrefix}:{gw}:pins`)).sort()).toEqual([
      'shop\nshop.order',
      'shop\nshop.refund',
    ]);
    // a replica started now reads both
    const c = await replica();
    expect(served(c)).toEqual(['shop.order', 'shop.refund']);
  });
});
