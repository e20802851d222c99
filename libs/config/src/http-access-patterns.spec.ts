import type { ConfigProblem } from './config-problem';
// class-transformer's @Type needs the metadata polyfill that Nest normally loads first.
import 'reflect-metadata';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { ConfigValidationError } from './config-errors';
import {
  compileAccessList,
  listAllows,
  parseHost,
  parseOrigin,
  type AccessList,
} from './http-access-patterns';
import { loadGatewayConfig } from './load-config';

const REPO_ROOT = resolve(__dirname, '..', '..', '..');
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function loadHttp(http: unknown, env: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-gateway-http-'));
  dirs.push(dir);
  const tree = {
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
      ...(http === undefined ? {} : { http }),
    },
  };
  writeFileSync(join(dir, 'gateway.yaml'), stringify(tree));
  return loadGatewayConfig({
    env: { MCP_CONFIG_FILE: 'gateway.yaml', ...env },
    cwd: dir,
    version: '0.0.0',
  });
}

function problemsOf(http: unknown): readonly string[] {
  try {
    loadHttp(http);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigValidationError);
    return (err as ConfigValidationError).problems;
  }
  throw new Error('the config was accepted');
}

function origins(entries: string[]): AccessList {
  const problems: ConfigProblem[] = [];
  const list = compileAccessList(entries, 'origin', 'x', problems);
  expect(problems).toEqual([]);
  return list;
}

function hosts(entries: string[]): AccessList {
  const problems: ConfigProblem[] = [];
  const list = compileAccessList(entries, 'host', 'x', problems);
  expect(problems).toEqual([]);
  return list;
}

const originAllowed = (list: AccessList, origin: string): boolean => {
  const parsed = parseOrigin(origin, false);
  return parsed !== undefined && listAllows(list, parsed);
};
const hostAllowed = (list: AccessList, host: string): boolean => {
  const parsed = parseHost(host, false);
  return parsed !== undefined && listAllows(list, parsed);
};

describe('mcp.http defaults (docs/operations.md §8)', () => {
  it('allows no Origin and checks no Host unless configured', () => {
    const config = loadHttp(undefined, { APP_PROFILE: 'staging' });
    expect(config.mcp.http.allowedOrigins).toEqual([]);
    expect(config.mcp.http.allowedHosts).toEqual([]);
  });

  it('the local profile allows localhost and 127.0.0.1 with any port, as Origin and as Host', () => {
    const config = loadGatewayConfig({
      env: { APP_PROFILE: 'local' },
      cwd: REPO_ROOT,
      version: '0',
    });
    const allowedOrigins = origins(config.mcp.http.allowedOrigins);
    const allowedHosts = hosts(config.mcp.http.allowedHosts);
    for (const origin of [
      'http://localhost:5173',
      'http://localhost',
      'http://127.0.0.1:8080',
      'http://LOCALHOST:1',
      'http://[::1]:3000',
    ]) {
      expect([origin, originAllowed(allowedOrigins, origin)]).toEqual([origin, true]);
    }
    for (const origin of [
      'http://evil.example',
      'https://localhost:5173',
      'http://localhost.evil.example:8080',
      'http://127.0.0.2:8080',
    ]) {
      expect([origin, originAllowed(allowedOrigins, origin)]).toEqual([origin, false]);
    }
    for (const host of ['localhost:8080', 'localhost', '127.0.0.1:9', '[::1]:8080']) {
      expect([host, hostAllowed(allowedHosts, host)]).toEqual([host, true]);
    }
    for (const host of ['evil.example:8080', 'evil.example', '192.168.1.20:8080']) {
      expect([host, hostAllowed(allowedHosts, host)]).toEqual([host, false]);
    }
  });
});

describe('origin entries compare by scheme, host and port', () => {
  it('lowercases the host and folds the default port of http and https', () => {
    const list = origins(['HTTPS://App.Example.COM', 'http://tools.example:8080/']);
    expect(originAllowed(list, 'https://app.example.com')).toBe(true);
    expect(originAllowed(list, 'https://app.example.com:443')).toBe(true);
    expect(originAllowed(list, 'https://app.example.com:8443')).toBe(false);
    expect(originAllowed(list, 'http://app.example.com')).toBe(false);
    expect(originAllowed(list, 'http://tools.example:8080')).toBe(true);
    expect(originAllowed(list, 'http://tools.example')).toBe(false);
  });

  it('"scheme://host:*" allows every port of that scheme and host, and nothing else', () => {
    const list = origins(['http://dev.example:*']);
    expect(originAllowed(list, 'http://dev.example:3000')).toBe(true);
    expect(originAllowed(list, 'http://dev.example')).toBe(true);
    expect(originAllowed(list, 'https://dev.example:3000')).toBe(false);
    expect(originAllowed(list, 'http://sub.dev.example:3000')).toBe(false);
  });

  it('a request Origin may not use the "*" port, a path or user info', () => {
    const list = origins(['http://dev.example:*']);
    expect(originAllowed(list, 'http://dev.example:*')).toBe(false);
    expect(originAllowed(list, 'http://dev.example:80/x')).toBe(false);
    expect(originAllowed(list, 'http://u@dev.example:80')).toBe(false);
  });

  it('"null" is an entry of its own', () => {
    expect(origins(['null']).exact.has('null')).toBe(true);
    expect(origins(['http://a.example']).exact.has('null')).toBe(false);
  });

  it('a bare host entry is port 80; "host:*" any port', () => {
    const list = hosts(['gw.example', 'api.example:8443', 'dev.example:*']);
    expect(hostAllowed(list, 'gw.example')).toBe(true);
    expect(hostAllowed(list, 'gw.example:80')).toBe(true);
    expect(hostAllowed(list, 'gw.example:8080')).toBe(false);
    expect(hostAllowed(list, 'API.example:8443')).toBe(true);
    expect(hostAllowed(list, 'api.example')).toBe(false);
    expect(hostAllowed(list, 'dev.example:1234')).toBe(true);
  });
});

describe('mcp.http: a malformed entry refuses the boot, one line per entry', () => {
  it('names every malformed origin and host entry with its index', () => {
    const problems = problemsOf({
      allowedOrigins: [
        'http://ok.example',
        'http://*.example.com',
        'example.com',
        'http://a.example/path',
        '*',
        'ftp://files.example',
        'http://a.example:99999',
      ],
      allowedHosts: ['localhost:*', 'http://localhost', 'localhost:0', '*.example', ''],
    });
    const syntax =
      'must be an origin "scheme://host[:port]" or "scheme://host:*" (any port), or "null"; ' +
      'no path, query, user info or wildcard host';
    const hostSyntax =
      'must be "host[:port]" or "host:*" (any port); no scheme, path or wildcard host';
    expect(problems).toEqual([
      `mcp.http.allowedOrigins[1]: ${syntax} (got "http://*.example.com")`,
      `mcp.http.allowedOrigins[2]: ${syntax} (got "example.com")`,
      `mcp.http.allowedOrigins[3]: ${syntax} (got "http://a.example/path")`,
      `mcp.http.allowedOrigins[4]: ${syntax} (got "*")`,
      `mcp.http.allowedOrigins[5]: ${syntax} (got "ftp://files.example")`,
      `mcp.http.allowedOrigins[6]: ${syntax} (got "http://a.example:99999")`,
      `mcp.http.allowedHosts[1]: ${hostSyntax} (got "http://localhost")`,
      `mcp.http.allowedHosts[2]: ${hostSyntax} (got "localhost:0")`,
      `mcp.http.allowedHosts[3]: ${hostSyntax} (got "*.example")`,
      `mcp.http.allowedHosts[4]: ${hostSyntax} (got "")`,
    ]);
  });

  it('refuses a value that is not a list, or an entry that is not a string', () => {
    const problems = problemsOf({ allowedOrigins: 'http://a.example', allowedHosts: [42] });
    expect(problems).toEqual([
      expect.stringMatching(/^mcp\.http\.allowedOrigins: must be a list of origins/),
      expect.stringMatching(/^mcp\.http\.allowedHosts: each entry must be a string/),
    ]);
  });

  it('refuses an unknown key under mcp.http', () => {
    expect(problemsOf({ allowedOrigin: ['http://a.example'] })).toEqual([
      'mcp.http.allowedOrigin: unknown key (check its spelling and place in the mcp: tree)',
    ]);
  });
});
