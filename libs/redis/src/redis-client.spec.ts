import type { RedisConfig, RedisServer } from '@app/config';
import { redisConstruction, redisFailureText, redisOutcomeUnknown } from './redis-client';
import { redisUseOptions } from './redis-uses';

const r = { commandTimeoutMillis: 300, connectTimeoutMillis: 1000 } as RedisConfig;
const secrets = { username: 'gw', password: 'pw', sentinelPassword: 'spw', tls: true };

describe('redisConstruction: one use of one Redis, as ioredis is given it', () => {
  it('a server: the URL, and the environment credentials beside it (the URL wins in ioredis)', () => {
    const made = redisConstruction(
      { kind: 'standalone', url: 'redis://cache:6379', secrets: { tls: false } },
      redisUseOptions('lastGood', r),
    );
    expect(made).toEqual({
      kind: 'redis',
      url: 'redis://cache:6379',
      options: {
        lazyConnect: true,
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        commandTimeout: 300,
        connectTimeout: 1000,
        retryStrategy: expect.any(Function),
      },
    });
  });

  it('Sentinel: the sentinels, the master, both credentials and TLS to both', () => {
    const server: RedisServer = {
      kind: 'sentinel',
      sentinels: [{ host: 's1', port: 26379 }],
      masterName: 'gw',
      secrets,
    };
    const made = redisConstruction(server, redisUseOptions('registrations', r));
    expect(made.kind).toBe('redis');
    expect(made.options).toMatchObject({
      sentinels: [{ host: 's1', port: 26379 }],
      name: 'gw',
      role: 'master',
      username: 'gw',
      password: 'pw',
      sentinelPassword: 'spw',
      tls: {},
      enableTLSForSentinelMode: true,
      sentinelTLS: {},
      failoverDetector: true,
      enableOfflineQueue: true,
      maxRetriesPerRequest: 0,
      commandTimeout: 1000,
    });
    expect('url' in made && made.url).toBeFalsy();
  });

  it('Cluster: the seed nodes, per-node credentials, TLS and timeouts, cluster-level queueing', () => {
    const made = redisConstruction(
      { kind: 'cluster', nodes: [{ host: 'n1', port: 7000 }], secrets },
      redisUseOptions('requestPath', r),
    );
    expect(made).toMatchObject({
      kind: 'cluster',
      nodes: [{ host: 'n1', port: 7000 }],
      options: {
        lazyConnect: true,
        enableOfflineQueue: false,
        slotsRefreshTimeout: 1000,
        redisOptions: {
          username: 'gw',
          password: 'pw',
          tls: {},
          maxRetriesPerRequest: 0,
          commandTimeout: 300,
          connectTimeout: 1000,
        },
      },
    });
  });

  it('a subscriber has no command bound (its SUBSCRIBE waits); a publisher has one', () => {
    expect(redisUseOptions('handoffSubscriber', r).commandTimeout).toBeUndefined();
    expect(redisUseOptions('busSubscriber', r).commandTimeout).toBeUndefined();
    expect(redisUseOptions('handoffPublisher', r).commandTimeout).toBe(1000);
    expect(redisUseOptions('busPublisher', r).commandTimeout).toBe(300);
  });
});

describe("redisFailureText: a failed command in an operator's words", () => {
  it.each([
    [
      'Reached the max retries per request limit (which is 0). Refer to "maxRetriesPerRequest" option for details.',
      'not connected',
    ],
    ["Stream isn't writeable and enableOfflineQueue options is false", 'not connected'],
    ['Command timed out', 'no answer within mcp.redis.commandTimeoutMillis'],
    ['Connection is closed.', 'connection closed'],
    [
      "READONLY You can't write against a read only replica.",
      "READONLY You can't write against a read only replica.",
    ],
  ])('%s', (message, said) => {
    expect(redisFailureText(new Error(message))).toBe(said);
  });

  it('says so when what failed is no Error', () => {
    expect(redisFailureText('x')).toBe('unknown cause');
  });
});

describe('redisOutcomeUnknown: whether a failed command may still run in Redis', () => {
  it.each([
    ['Reached the max retries per request limit (which is 0).', false],
    ["Stream isn't writeable and enableOfflineQueue options is false", false],
    ["READONLY You can't write against a read only replica.", false],
    ['Command timed out', true],
    ['Connection is closed.', true],
  ])('%s: %s', (message, unknown) => {
    expect(redisOutcomeUnknown(new Error(message))).toBe(unknown);
  });
});
