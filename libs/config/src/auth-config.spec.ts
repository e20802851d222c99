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
  const dir = mkdtempSync(join(tmpdir(), 'mcp-gateway-auth-'));
  dirs.push(dir);
  writeFileSync(
    join(dir, 'gateway.yaml'),
    stringify({
      mcp: {
        identity: 'gw-test',
        bundles: [
          {
            id: 'alpha',
            manifestUrl: 'http://alpha.svc:8080/tool-manifest',
            baseEndpoint: 'http://alpha.svc:8080/mcp',
            namePrefix: 'alpha.',
          },
        ],
        ...mcp,
      },
    }),
  );
  return loadGatewayConfig({
    env: { MCP_CONFIG_FILE: 'gateway.yaml', ...env },
    cwd: dir,
    version: '9.9.9',
  });
}

function problems(mcp: Record<string, unknown>, env: Env = {}): readonly string[] {
  try {
    load(mcp, env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigValidationError);
    return (err as ConfigValidationError).problems;
  }
  throw new Error('the config was accepted');
}

const JWT = {
  mode: 'jwt',
  issuer: 'https://idp.example.com/realms/acme',
  audience: 'https://gw.example.com/mcp',
  jwksUrl: 'https://idp.example.com/realms/acme/protocol/openid-connect/certs',
};

describe('mcp.auth (docs/operations.md §13)', () => {
  it('defaults to mode none with the documented jwt defaults', () => {
    const { auth } = load({}).mcp;
    expect(auth).toMatchObject({
      mode: 'none',
      requiredScopes: [],
      clockSkewSeconds: 30,
      introspectionCacheSeconds: 0,
    });
    expect(auth.algorithms).toEqual(['RS256', 'ES256', 'PS256', 'EdDSA']);
  });

  it('accepts a complete jwt section', () => {
    const config = load({ auth: { ...JWT, requiredScopes: ['mcp'], algorithms: ['RS256'] } });
    expect(config.mcp.auth).toMatchObject({ ...JWT, requiredScopes: ['mcp'] });
  });

  it('mode jwt without issuer, audience and jwksUrl names every missing field at once', () => {
    const found = problems({ auth: { mode: 'jwt' } });
    expect(found.map((p) => p.slice(0, p.indexOf(':')))).toEqual(
      expect.arrayContaining(['mcp.auth.issuer', 'mcp.auth.audience', 'mcp.auth.jwksUrl']),
    );
  });

  it('refuses a bad mode, algorithm, skew, audience and URL in one message', () => {
    const found = problems({
      auth: {
        ...JWT,
        audience: 'gw.example.com/mcp',
        jwksUrl: 'ftp://idp/keys',
        algorithms: ['HS256', 'none'],
        clockSkewSeconds: 9999,
      },
      bundles: [],
    }).join('\n');
    expect(found).toContain('mcp.auth.audience: must be an absolute http(s) URI');
    expect(found).toContain('mcp.auth.jwksUrl: must be an http(s) URL');
    expect(found).toContain('mcp.auth.algorithms');
    expect(found).toContain('mcp.auth.clockSkewSeconds');
    expect(problems({ auth: { mode: 'oauth' } }).join('\n')).toContain(
      'mcp.auth.mode: must be one of none, jwt',
    );
  });

  it('token types, introspection bounds and the authorization-server timeout: defaults, and each bad value named', () => {
    expect(load({ auth: JWT }).mcp.auth).toMatchObject({
      tokenTypes: ['at+jwt', 'JWT'],
      introspectionInactiveCacheSeconds: 10,
      introspectionMaxConcurrent: 16,
      authorizationServerTimeoutMillis: 5000,
    });
    const found = problems({
      auth: {
        ...JWT,
        tokenTypes: [],
        introspectionInactiveCacheSeconds: -1,
        introspectionMaxConcurrent: 0,
        authorizationServerTimeoutMillis: 10,
      },
    }).join('\n');
    expect(found).toContain('mcp.auth.tokenTypes: must name at least one JWT "typ" value');
    expect(found).toContain('mcp.auth.introspectionInactiveCacheSeconds: must be an integer');
    expect(found).toContain('mcp.auth.introspectionMaxConcurrent: must be an integer');
    expect(found).toContain('mcp.auth.authorizationServerTimeoutMillis: must be an integer');
    expect(problems({ auth: { ...JWT, tokenTypes: ['at+jwt', 'a b'] } }).join('\n')).toContain(
      'mcp.auth.tokenTypes',
    );
  });

  it('introspection needs a client id and an environment variable that is set; the secret reaches authSecrets only', () => {
    const auth = {
      ...JWT,
      introspectionUrl: 'https://idp.example.com/introspect',
      introspectionClientId: 'gateway',
      introspectionClientSecretEnv: 'GW_INTROSPECTION_SECRET',
    };
    const missing = problems({ auth }).join('\n');
    expect(missing).toContain(
      'mcp.auth.introspectionClientSecretEnv: environment variable GW_INTROSPECTION_SECRET is not set or empty',
    );
    const config = load({ auth }, { GW_INTROSPECTION_SECRET: 's3cr3t-value' });
    expect(config.authSecrets?.introspectionClientSecret).toBe('s3cr3t-value');
    expect(JSON.stringify(config.mcp)).not.toContain('s3cr3t-value');
    const noClient = problems(
      { auth: { ...auth, introspectionClientId: undefined } },
      {
        GW_INTROSPECTION_SECRET: 'x',
      },
    ).join('\n');
    expect(noClient).toContain('mcp.auth.introspectionClientId: is required with introspectionUrl');
  });

  it('introspection alone (no jwksUrl) is a way to check tokens', () => {
    const config = load(
      {
        auth: {
          ...JWT,
          jwksUrl: undefined,
          introspectionUrl: 'https://idp.example.com/introspect',
          introspectionClientId: 'gateway',
          introspectionClientSecretEnv: 'S',
        },
      },
      { S: 'x' },
    );
    expect(config.mcp.auth.jwksUrl).toBeUndefined();
  });
});

describe('mcp.access (docs/operations.md §13 "Access")', () => {
  it('accepts rules of the three match kinds', () => {
    const config = load({
      auth: JWT,
      access: {
        rules: [
          { match: { claim: 'groups', value: 'claims-team' }, sources: ['alpha'] },
          { match: { subject: 'svc-1' }, tools: ['alpha.read'] },
          { match: { scope: 'admin' }, sources: ['alpha'], tools: ['alpha.x'] },
        ],
      },
    });
    expect(config.mcp.access?.rules).toHaveLength(3);
  });

  it('names every broken rule: mixed or empty match, half a claim match, no grant, no auth', () => {
    const found = problems({
      access: {
        rules: [
          { match: { subject: 'a', scope: 'b' }, sources: ['alpha'] },
          { match: {}, sources: ['alpha'] },
          { match: { claim: 'groups' }, sources: ['alpha'] },
          { match: { subject: 'a' } },
          { match: 'everyone', sources: ['alpha'] },
        ],
      },
    }).join('\n');
    expect(found).toContain('mcp.access: needs mcp.auth.mode jwt');
    expect(found).toContain('mcp.access.rules[0].match: must be exactly one of');
    expect(found).toContain('mcp.access.rules[1].match: must be exactly one of');
    expect(found).toContain('mcp.access.rules[2].match: {claim, value} needs both');
    expect(found).toContain('mcp.access.rules[3]: grants nothing');
    expect(found).toContain('mcp.access.rules[4].match');
  });
});
