// class-transformer's @Type needs the metadata polyfill that Nest normally loads first.
import 'reflect-metadata';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ConfigValidationError } from './config-errors';
import type { GatewayConfig } from './gateway-config';
import { loadGatewayConfig } from './load-config';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

type Env = Record<string, string | undefined>;

function load(mcp: Record<string, unknown>, env: Env = {}): GatewayConfig {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-gateway-upstreams-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'gateway.yaml'), stringify({ mcp: { identity: 'gw-test', ...mcp } }));
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
  throw new Error('the configuration was accepted');
}

const bundle = (id: string, prefix: string, extra: object = {}): object => ({
  id,
  manifestUrl: `http://${id}.svc/tool-manifest`,
  baseEndpoint: `http://${id}.svc/mcp`,
  namePrefix: prefix,
  ...extra,
});
const upstream = (id: string, extra: object = {}): object => ({
  id,
  url: `http://${id}.svc:3000/mcp`,
  ...extra,
});

describe('mcp.upstreams[] (docs/operations.md §10 "Configuration")', () => {
  it('resolves defaults: prefix <id>__, auto protocol, callMillis from maxToolTimeoutMillis', () => {
    const config = load({ upstreams: [upstream('github')] });
    expect(config.upstreams).toEqual([
      {
        id: 'github',
        url: 'http://github.svc:3000/mcp',
        namePrefix: 'github__',
        enabled: true,
        protocol: 'auto',
        lists: 'snapshot',
        connectMillis: 1000,
        listMillis: 5000,
        callMillis: 30_000,
        forwardHeaders: [],
        authorization: { mode: 'none' },
        validateArguments: false,
        pinned: false,
      },
    ]);
    expect(config.bundles).toEqual([]);
  });

  it('takes lists: live and refuses a list mode it does not know, naming the field', () => {
    expect(load({ upstreams: [upstream('a', { lists: 'live' })] }).upstreams[0]?.lists).toBe(
      'live',
    );
    expect(() => load({ upstreams: [upstream('a', { lists: 'sometimes' })] })).toThrow(
      /mcp\.upstreams\[0\]\.lists: must be one of snapshot, live/,
    );
  });

  it('takes pinned and validateArguments per upstream, and refuses pinned with lists: live (docs/operations.md §6)', () => {
    const [u] = load({
      upstreams: [upstream('a', { pinned: true, validateArguments: true })],
    }).upstreams;
    expect(u).toMatchObject({ pinned: true, validateArguments: true });
    expect(problems({ upstreams: [upstream('a', { pinned: true, lists: 'live' })] })).toEqual([
      expect.stringMatching(
        /^mcp\.upstreams\[0\]\.pinned: a pinned upstream needs lists "snapshot"/,
      ),
    ]);
    expect(() => load({ upstreams: [upstream('a', { pinned: 'yes' })] })).toThrow(
      /mcp\.upstreams\[0\]\.pinned: must be true or false/,
    );
  });

  it('accepts discovery enabled with upstreams and no bundle', () => {
    expect(load({ upstreams: [upstream('a')] }).upstreams).toHaveLength(1);
  });

  it('writes characters of the id outside [A-Za-z0-9_-] as _ in the default prefix', () => {
    expect(load({ upstreams: [upstream('git.hub')] }).upstreams[0]?.namePrefix).toBe('git_hub__');
  });

  it('takes every configured field, lower-cases forwarded header names and reads static authorization from env', () => {
    const [u] = load(
      {
        upstreams: [
          upstream('a', {
            namePrefix: 'alpha-',
            protocol: '2026-07-28',
            timeouts: { connectMillis: 50, listMillis: 700, callMillis: 900 },
            forwardHeaders: ['X-Mcp-Token'],
            authorization: { mode: 'static', valueEnv: 'A_TOKEN' },
          }),
        ],
      },
      { A_TOKEN: 'Bearer s3cret' },
    ).upstreams;
    expect(u).toMatchObject({
      namePrefix: 'alpha-',
      protocol: '2026-07-28',
      connectMillis: 50,
      listMillis: 700,
      callMillis: 900,
      forwardHeaders: ['x-mcp-token'],
      authorization: { mode: 'static', value: 'Bearer s3cret' },
    });
  });

  it('allows namePrefix "" for the only enabled source, and refuses it beside another', () => {
    expect(
      load({ upstreams: [upstream('solo', { namePrefix: '' })] }).upstreams[0]?.namePrefix,
    ).toBe('');
    expect(
      load({
        upstreams: [upstream('solo', { namePrefix: '' }), upstream('off', { enabled: false })],
      }).upstreams,
    ).toHaveLength(2);
    expect(
      problems({ bundles: [bundle('b', 'b.')], upstreams: [upstream('solo', { namePrefix: '' })] }),
    ).toEqual([
      'mcp.upstreams[0].namePrefix: "" is allowed only when this upstream is the only enabled source (2 sources are enabled); names of two sources could collide',
    ]);
  });

  it('names every broken field in one refusal', () => {
    const found = problems(
      {
        bundles: [bundle('dup', 'dup.')],
        upstreams: [
          { id: 'dup', url: 'ftp://x/mcp', namePrefix: 'a.b', protocol: '2024-01-01' },
          upstream('h', {
            forwardHeaders: ['Host', 'Connection', 'X-Ok'],
            timeouts: { listMillis: 0 },
          }),
          upstream('s', { authorization: { mode: 'static' } }),
          upstream('e', { authorization: { mode: 'static', valueEnv: 'MISSING_ENV' } }),
          { url: 'http://x/mcp' },
        ],
      },
      {},
    );
    expect(found).toEqual(
      expect.arrayContaining([
        'mcp.upstreams[0].namePrefix: must use only [A-Za-z0-9_-] and be at most 48 characters (got "a.b")',
        'mcp.upstreams[0].protocol: must be one of auto, 2025-11-25, 2026-07-28 (got "2024-01-01")',
        'mcp.upstreams[1].timeouts.listMillis: must be a positive integer (ms) (got 0)',
        'mcp.upstreams[4].id: is required: an upstream id ([A-Za-z0-9._-]{1,64}) (got nothing)',
        'mcp.upstreams[0].id: "dup" duplicates mcp.bundles[0].id (ids are unique across bundles and upstreams)',
        'mcp.upstreams[0].url: must be an http(s) URL (got scheme "ftp")',
        expect.stringMatching(/^mcp\.upstreams\[1\]\.forwardHeaders: "Host" may not be forwarded/),
        expect.stringMatching(
          /^mcp\.upstreams\[1\]\.forwardHeaders: "Connection" may not be forwarded/,
        ),
        'mcp.upstreams[2].authorization.valueEnv: is required with mode static',
        'mcp.upstreams[3].authorization.valueEnv: environment variable MISSING_ENV is not set or empty',
      ]),
    );
    expect(found.some((p) => p.includes('X-Ok'))).toBe(false);
  });

  it('never quotes the query, fragment or userinfo of a URL it refuses (docs/operations.md §10)', () => {
    const found = problems({
      bundles: [
        {
          ...bundle('b', 'b.'),
          manifestUrl: 'svc.example/tool-manifest?sig=SECRET1',
          baseEndpoint: 'https://svc.example/invoke?k=SECRET2',
        },
      ],
      upstreams: [
        { id: 'u', url: 'mcp.example.com/mcp?api_key=SECRET3' },
        { id: 'v', url: 'user:SECRET4@mcp.example.com/mcp' },
      ],
      auth: {
        mode: 'jwt',
        issuer: 'https://issuer.example',
        audience: 'gw.example/mcp?SECRET5',
        jwksUrl: 'issuer.example/jwks#SECRET6',
      },
      tracing: { endpoint: 'collector.example/v1/traces?token=SECRET7' },
    });
    expect(found).toEqual(
      expect.arrayContaining([
        'mcp.upstreams[0].url: must be an http(s) URL (got "mcp.example.com/mcp?…")',
        'mcp.upstreams[1].url: must be an http(s) URL (got scheme "user")',
        'mcp.bundles[0].manifestUrl: must be an http(s) URL (got "svc.example/tool-manifest?…")',
        'mcp.auth.jwksUrl: must be an http(s) URL (got "issuer.example/jwks#…")',
        'mcp.tracing.endpoint: must be an http(s) URL (the OTLP/HTTP traces endpoint) (got "collector.example/v1/traces?…")',
      ]),
    );
    expect(found.filter((p) => p.includes('SECRET'))).toEqual([]);
  });

  it('checks prefix overlap across bundles and upstreams together', () => {
    expect(
      problems({
        bundles: [bundle('b', 'gh')],
        upstreams: [upstream('gh', { namePrefix: 'gh__' })],
      }),
    ).toEqual([
      'mcp.upstreams[0].namePrefix: "gh__" starts with mcp.bundles[0].namePrefix "gh", so a published name could belong to both',
    ]);
    expect(
      problems({
        upstreams: [upstream('a', { namePrefix: 'x_' }), upstream('b', { namePrefix: 'x_' })],
      }),
    ).toEqual([
      'mcp.upstreams[1].namePrefix: "x_" duplicates mcp.upstreams[0].namePrefix (prefixes are unique across bundles and upstreams)',
    ]);
    // the default prefix takes part too
    expect(problems({ upstreams: [upstream('a'), upstream('b', { namePrefix: 'a__x' })] })).toEqual(
      [
        'mcp.upstreams[1].namePrefix: "a__x" starts with mcp.upstreams[0].namePrefix "a__", so a published name could belong to both',
      ],
    );
  });

  it('still refuses a config with neither bundles nor upstreams', () => {
    expect(problems({ upstreams: [] })[0]).toContain('no bundle is configured');
    expect(problems({ upstreams: [upstream('a', { enabled: false })] })[0]).toContain(
      'every bundle has enabled: false',
    );
  });
});

describe('mcp.upstreams[].cacheTtlMillis / cacheScope (docs/operations.md §11 "Cache hints")', () => {
  it('takes the cache hints an upstream that sends none contributes; absent, they stay absent (0, private)', () => {
    const config = load({
      upstreams: [upstream('old', { cacheTtlMillis: 30_000, cacheScope: 'public' }), upstream('b')],
    });
    expect(config.upstreams[0]).toMatchObject({ cacheTtlMillis: 30_000, cacheScope: 'public' });
    expect(config.upstreams[1]).not.toHaveProperty('cacheTtlMillis');
    expect(config.upstreams[1]).not.toHaveProperty('cacheScope');
  });

  it('refuses a negative or fractional ttl and an unknown scope, naming each field', () => {
    const found = problems({
      upstreams: [
        upstream('a', { cacheTtlMillis: -1 }),
        upstream('b', { cacheTtlMillis: 1.5, cacheScope: 'shared' }),
      ],
    });
    expect(found.join('\n')).toContain('mcp.upstreams[0].cacheTtlMillis');
    expect(found.join('\n')).toContain('mcp.upstreams[1].cacheTtlMillis');
    expect(found.join('\n')).toContain('mcp.upstreams[1].cacheScope');
  });
});
