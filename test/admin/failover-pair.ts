import type Redis from 'ioredis';
import { gatewayConfig, upstream } from '../support/fixtures';
import { V2Upstream } from '../support/mcp-upstreams';
import { GatewayProcess } from '../support/gateway-process';
import { OwnRedis, redisClient, uniqueKeyPrefix } from '../support/redis';
import { SwitchableProxy } from '../support/switchable-proxy';
import { ADMIN_TOKEN } from './admin-support';

/** The registrations hash of a store under `keyPrefix` (the test identity's hash tag). */
export const hashOf = (keyPrefix: string): string =>
  `${keyPrefix}:{mcp-gateway-test}:admin:upstreams`;

/**
 * Two gateway replicas whose Redis is a master (r1) with a replica (r2), both reached through a
 * switchable proxy that plays the master's address in a failover; two upstreams to register.
 * Set up in the enclosing describe's beforeAll, stopped in its afterAll (a stopped replica is
 * woken first).
 */
export interface FailoverPair {
  readonly keyPrefix: string;
  r1: OwnRedis;
  r2: OwnRedis;
  proxy: SwitchableProxy;
  /** A client of r2, the replica to promote. */
  c2: Redis;
  s1: V2Upstream;
  s2: V2Upstream;
  a: GatewayProcess;
  b: GatewayProcess;
}

export function failoverPair(): FailoverPair {
  const pair = { keyPrefix: uniqueKeyPrefix() } as FailoverPair;

  const replica = async (): Promise<GatewayProcess> => {
    const g = GatewayProcess.spawn({
      mcp: gatewayConfig([], {
        redis: { keyPrefix: pair.keyPrefix },
        registry: { refreshIntervalSeconds: 2 },
        upstreams: [upstream('calc', pair.s1.url)],
      }),
      env: { MCP_ADMIN_TOKEN: ADMIN_TOKEN, REDIS_URL: pair.proxy.url },
    });
    await g.waitForListening(60_000);
    return g;
  };

  beforeAll(async () => {
    [pair.r1, pair.r2] = await Promise.all([OwnRedis.start(), OwnRedis.start()]);
    pair.c2 = redisClient(pair.r2.url);
    await pair.c2.call('REPLICAOF', '127.0.0.1', String(pair.r1.port));
    pair.proxy = await SwitchableProxy.start(pair.r1.port);
    [pair.s1, pair.s2] = await Promise.all([V2Upstream.start(), V2Upstream.start()]);
    [pair.a, pair.b] = await Promise.all([replica(), replica()]);
  }, 120_000);

  afterAll(async () => {
    for (const g of [pair.a, pair.b]) g?.child.kill('SIGCONT');
    await Promise.all([pair.a?.stop(), pair.b?.stop()]);
    await Promise.all([pair.s1?.stop(), pair.s2?.stop()]);
    pair.c2?.disconnect();
    await pair.proxy?.stop();
    await Promise.all([pair.r1?.stop(), pair.r2?.stop()]);
  });

  return pair;
}
