// class-transformer's @Type needs the metadata polyfill that Nest normally loads first.
import 'reflect-metadata';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ConfigValidationError } from './config-errors';
import type { GatewayConfig } from './gateway-config';
import { loadGatewayConfig } from './load-config';

type Env = Record<string, string | undefined>;

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function load(mcp: Record<string, unknown>, env: Env = {}): GatewayConfig {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-gateway-auth2-'));
  dirs.push(dir);
  const tree = { identity: 'gw', bundles: [bundle({ mode: 'none' })], ...mcp };
  writeFileSync(join(dir, 'gateway.yaml'), stringify({ mcp: tree }));
  return loadGatewayConfig({
    env: { MCP_CONFIG_FILE: 'gateway.yaml', ...env },
    cwd: dir,
    version: '1',
  });
}

function problems(mcp: Record<string, unknown>, env: Env = {}): readonly string[] {
  try {
    load(mcp, env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigValidationError);
    return (err as ConfigValidationError).problems;
  }
  throw new Error('the config loaded');
}

const EXCHANGE = {
  mode: 'tokenExchange',
  tokenEndpoint: 'https://idp.example/oauth2/token',
  clientId: 'mcp-gateway',
  clientSecretEnv: 'GW_CLIENT_SECRET',
  audience: 'https://tools.example/mcp',
};

function upstream(authorization: object): object {
  return { id: 'tools', url: 'http://127.0.0.1:7000/mcp', authorization };
}

function bundle(authorization: object): object {
  return {
    id: 'alpha',
    manifestUrl: 'http://alpha.svc:8080/tool-manifest',
    baseEndpoint: 'http://alpha.svc:8080/mcp',
    namePrefix: 'alpha.',
    authorization,
  };
}

describe('authorization mode tokenExchange (docs/operations.md §14 "Credentials towards sources")', () => {
  it('resolves every field, the client secret from its environment variable', () => {
    const config = load(
      { upstreams: [upstream({ ...EXCHANGE, scope: 'tools:call' })], bundles: [bundle(EXCHANGE)] },
      { GW_CLIENT_SECRET: 's3cret' },
    );
    const expected = {
      mode: 'tokenExchange',
      tokenEndpoint: EXCHANGE.tokenEndpoint,
      clientId: 'mcp-gateway',
      clientSecret: 's3cret',
      audience: EXCHANGE.audience,
    };
    expect(config.upstreams[0]?.authorization).toEqual({ ...expected, scope: 'tools:call' });
    expect(config.bundles[0]?.authorization).toEqual({ ...expected, scope: undefined });
  });

  it('names every missing field at once, for bundles and upstreams alike', () => {
    expect(
      problems({
        upstreams: [upstream({ mode: 'tokenExchange' })],
        bundles: [bundle({ mode: 'tokenExchange' })],
      }),
    ).toEqual(
      expect.arrayContaining(
        ['mcp.bundles[0]', 'mcp.upstreams[0]'].flatMap((at) =>
          ['tokenEndpoint', 'clientId', 'audience', 'clientSecretEnv'].map(
            (field) => `${at}.authorization.${field}: is required with mode tokenExchange`,
          ),
        ),
      ),
    );
  });

  it('refuses an unset secret variable by name (never a value) and a token endpoint that is not http(s)', () => {
    expect(
      problems({ upstreams: [upstream({ ...EXCHANGE, tokenEndpoint: 'ftp://idp/token' })] }, {}),
    ).toEqual([
      'mcp.upstreams[0].authorization.tokenEndpoint: must be an http(s) URL',
      'mcp.upstreams[0].authorization.clientSecretEnv: environment variable GW_CLIENT_SECRET is not set or empty',
    ]);
  });
});

describe('mcp.rateLimits and mcp.audit (docs/operations.md §14)', () => {
  it('defaults: no bucket, memory store, audit on', () => {
    const { mcp } = load({});
    expect(mcp.rateLimits.perSubject).toBeUndefined();
    expect(mcp.rateLimits.perTool).toBeUndefined();
    expect(mcp.rateLimits.store).toBe('memory');
    expect(mcp.audit.enabled).toBe(true);
  });

  it('reads both buckets', () => {
    const { mcp } = load({
      rateLimits: {
        perSubject: { capacity: 100, refillPerSecond: 10 },
        perTool: { capacity: 5, refillPerSecond: 0.5 },
      },
    });
    expect(mcp.rateLimits.perSubject).toEqual({ capacity: 100, refillPerSecond: 10 });
    expect(mcp.rateLimits.perTool).toEqual({ capacity: 5, refillPerSecond: 0.5 });
  });

  it('names every broken bucket field', () => {
    expect(
      problems({
        rateLimits: {
          perSubject: { capacity: 0, refillPerSecond: -1 },
          perTool: { capacity: 1.5 },
          store: 'memcached',
        },
      }),
    ).toEqual([
      'mcp.rateLimits.perSubject.capacity: must be a positive integer (got 0)',
      'mcp.rateLimits.perSubject.refillPerSecond: must be a number > 0 (per second) (got -1)',
      'mcp.rateLimits.perTool.capacity: must be a positive integer (requests) (got 1.5)',
      'mcp.rateLimits.perTool.refillPerSecond: is required: a number > 0 (per second) (got nothing)',
      'mcp.rateLimits.store: must be one of memory, redis (got "memcached")',
    ]);
  });

  it('store redis needs REDIS_URL, or Sentinel, or a Cluster', () => {
    expect(problems({ rateLimits: { store: 'redis' } })).toEqual([
      'mcp.rateLimits.store: redis needs Redis (REDIS_URL, mcp.redis.sentinels or mcp.redis.clusterNodes; buckets are shared through it)',
    ]);
    expect(
      load({ rateLimits: { store: 'redis' } }, { REDIS_URL: 'redis://127.0.0.1:6379' }).mcp
        .rateLimits.store,
    ).toBe('redis');
  });
});
