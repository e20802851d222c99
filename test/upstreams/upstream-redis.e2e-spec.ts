import { GatewayProcess } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { V2Upstream } from '../support/mcp-upstreams';
import { SHARED_REDIS_URL, deleteKeys, redisClient, uniqueKeyPrefix } from '../support/redis';
import { rpc } from '../support/rpc';

/**
 * docs/operations.md §10 "Lists": an upstream's last good lists live in Redis too, so a replica
 * that starts while the upstream is down serves them from the shared copy (status degraded, source
 * redis).
 */
describe('upstream last good lists in Redis', () => {
  const keyPrefix = uniqueKeyPrefix();
  const redis = redisClient();
  let calc: V2Upstream;

  beforeAll(async () => {
    calc = await V2Upstream.start();
  });

  afterAll(async () => {
    await calc?.stop().catch(() => undefined);
    await deleteKeys(redis, keyPrefix);
    redis.disconnect();
  });

  it('a replica started while the upstream is down serves the lists another replica stored', async () => {
    const config = (url: string) =>
      gatewayConfig([], {
        redis: { keyPrefix },
        upstreams: [upstream('calc', url, { timeouts: { listMillis: 800, connectMillis: 200 } })],
      });
    const first = await GatewayProcess.start({
      mcp: config(calc.url),
      env: { REDIS_URL: SHARED_REDIS_URL },
      waitReady: true,
    });
    let names: string[];
    try {
      const list = await rpc(first.mcpUrl, 'tools/list');
      names = list.json.result.tools.map((t: { name: string }) => t.name);
      expect(names).toEqual(['calc__add', 'calc__shout']);
      // the write is fire and forget: wait until it is in Redis
      const key = `${keyPrefix}:{mcp-gateway-test:upstream/calc}:lists`;
      for (let i = 0; i < 50 && (await redis.get(key)) === null; i++)
        await new Promise((r) => setTimeout(r, 50));
      const stored = JSON.parse((await redis.get(key)) ?? '{}');
      expect(stored).toMatchObject({ v: 1, upstreamId: 'calc', lists: { era: '2026' } });
      expect(JSON.stringify(stored)).not.toContain(calc.url);
    } finally {
      await first.stop();
    }
    const url = calc.url;
    await calc.stop();

    const second = await GatewayProcess.start({
      mcp: config(url),
      env: { REDIS_URL: SHARED_REDIS_URL },
      waitReady: true,
    });
    try {
      const list = await rpc(second.mcpUrl, 'tools/list');
      expect(list.json.result.tools.map((t: { name: string }) => t.name)).toEqual(names);
      expect(list.json.result._meta['io.github.mcp-gateway/partialSources']).toEqual([
        { id: 'calc', kind: 'upstream', state: 'last-good' },
      ]);
      const status = (await (await fetch(`${second.managementUrl}/actuator/upstreams`)).json()) as {
        upstreams: unknown[];
      };
      expect(status.upstreams[0]).toMatchObject({
        id: 'calc',
        status: 'degraded',
        source: 'redis',
        era: '2026',
        lastErrorType: 'UpstreamUnreachableError',
      });
      // a call still tries the upstream and fails with an isError result naming it
      const call = await rpc(second.mcpUrl, 'tools/call', {
        name: 'calc__add',
        arguments: { a: 1, b: 2 },
      });
      expect(call.json.result.isError).toBe(true);
      expect(call.json.result.content[0].text).toContain('calc');
      expect(call.json.result.content[0].text).not.toContain('127.0.0.1');
    } finally {
      await second.stop();
    }
  });
});
