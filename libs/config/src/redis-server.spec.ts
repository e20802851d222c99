// class-transformer's @Type needs the metadata polyfill that Nest normally loads first.
import 'reflect-metadata';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ConfigValidationError } from './config-errors';
import type { GatewayConfig } from './gateway-config';
import { loadGatewayConfig } from './load-config';
import { describeRedisServer, parseRedisNode } from './redis-server';

type Env = Record<string, string | undefined>;

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function load(redis: Record<string, unknown>, env: Env = {}): GatewayConfig {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-gateway-redis-'));
  dirs.push(dir);
  const tree = {
    identity: 'gw',
    bundles: [
      {
        id: 'a',
        manifestUrl: 'http://127.0.0.1:1/m',
        baseEndpoint: 'http://127.0.0.1:1',
        namePrefix: 'a.',
      },
    ],
    redis,
  };
  writeFileSync(join(dir, 'gateway.yaml'), stringify({ mcp: tree }));
  return loadGatewayConfig({
    env: { MCP_CONFIG_FILE: 'gateway.yaml', ...env },
    cwd: dir,
    version: '1',
  });
}

function problems(redis: Record<string, unknown>, env: Env = {}): readonly string[] {
  try {
    load(redis, env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigValidationError);
    return (err as ConfigValidationError).problems;
  }
  throw new Error('the config loaded');
}

describe('mcp.redis: one server, Sentinel or Cluster (docs/operations.md §5)', () => {
  it('Sentinel: the sentinels and the master name, with credentials and TLS from the environment', () => {
    const config = load(
      {
        sentinels: ['10.0.0.1:26379', 'sentinel-b.redis:26380', '[fd00::3]:26379'],
        masterName: 'gw',
      },
      {
        REDIS_USERNAME: 'gateway',
        REDIS_PASSWORD: 'data-secret',
        REDIS_SENTINEL_PASSWORD: 'sentinel-secret',
        REDIS_TLS: 'true',
      },
    );
    expect(config.redisServer).toEqual({
      kind: 'sentinel',
      masterName: 'gw',
      sentinels: [
        { host: '10.0.0.1', port: 26379 },
        { host: 'sentinel-b.redis', port: 26380 },
        { host: 'fd00::3', port: 26379 },
      ],
      secrets: {
        username: 'gateway',
        password: 'data-secret',
        sentinelPassword: 'sentinel-secret',
        tls: true,
      },
    });
    expect(describeRedisServer(config.redisServer!)).toBe('Sentinel master gw (3 sentinels)');
  });

  it('Cluster: the seed nodes', () => {
    const config = load({ clusterNodes: ['10.0.0.1:7000', '10.0.0.2:7001'] });
    expect(config.redisServer).toEqual({
      kind: 'cluster',
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '10.0.0.2', port: 7001 },
      ],
      secrets: { tls: false },
    });
  });

  it('a log line never carries the URL credential', () => {
    const config = load({}, { REDIS_URL: 'redis://user:pw@cache.svc:6380/2' });
    expect(describeRedisServer(config.redisServer!)).toBe('redis://cache.svc:6380');
  });

  it('refuses two kinds at once, half a Sentinel, bad entries, an empty list and a bad REDIS_TLS', () => {
    expect(problems({ clusterNodes: ['a:1'] }, { REDIS_URL: 'redis://x:6379' })).toEqual([
      'REDIS_URL and mcp.redis.clusterNodes: name one Redis (a server, Sentinel or a Cluster), not 2',
    ]);
    expect(problems({ sentinels: ['a:1'], masterName: 'm', clusterNodes: ['b:2'] })).toEqual([
      'mcp.redis.sentinels and mcp.redis.clusterNodes: name one Redis (a server, Sentinel or a Cluster), not 2',
    ]);
    expect(problems({ sentinels: ['a:26379'] })).toEqual([
      'mcp.redis.sentinels: needs mcp.redis.masterName (the master they watch)',
    ]);
    expect(problems({ masterName: 'm' })).toEqual([
      'mcp.redis.masterName: only with mcp.redis.sentinels (the master they watch)',
    ]);
    expect(problems({ clusterNodes: ['a:70000'] })).toEqual([
      'mcp.redis.clusterNodes: each entry must be host:port (got ["a:70000"])',
      'mcp.redis.clusterNodes[0]: must be host:port with a port 1..65535 (got "a:70000")',
    ]);
    expect(problems({ clusterNodes: ['just-a-host'] })).toEqual([
      'mcp.redis.clusterNodes: each entry must be host:port (got ["just-a-host"])',
      'mcp.redis.clusterNodes[0]: must be host:port with a port 1..65535 (got "just-a-host")',
    ]);
    expect(problems({ sentinels: [], masterName: 'm' })).toEqual([
      'mcp.redis.sentinels: must name at least one sentinel (host:port) (got [])',
    ]);
    expect(problems({}, { REDIS_TLS: 'yes' })).toEqual([
      'REDIS_TLS: must be true or false (got "yes")',
    ]);
  });

  it('parses host:port, [v6]:port, and refuses a port out of range', () => {
    expect(parseRedisNode('redis-0.redis:6379')).toEqual({ host: 'redis-0.redis', port: 6379 });
    expect(parseRedisNode('[::1]:7000')).toEqual({ host: '::1', port: 7000 });
    expect(parseRedisNode('h:0')).toBeUndefined();
    expect(parseRedisNode('h')).toBeUndefined();
    expect(parseRedisNode('::1:7000')).toBeUndefined();
    expect(parseRedisNode('[:]:6379')).toBeUndefined();
    expect(parseRedisNode('h:65535')).toEqual({ host: 'h', port: 65535 });
    expect(parseRedisNode('h:65536')).toBeUndefined();
  });
});
