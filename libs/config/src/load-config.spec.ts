// class-transformer's @Type needs the metadata polyfill that Nest normally loads first.
import 'reflect-metadata';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';
import { ConfigValidationError } from './config-errors';
import type { GatewayConfig } from './gateway-config';
import { defaultMaxConnections, openFileLimit } from './connection-limit';
import { loadGatewayConfig } from './load-config';
import { toolsCapPerUpstream } from './mcp-config.model';

type Env = Record<string, string | undefined>;
type Files = Record<string, string | object>;

const KEY_A = Buffer.alloc(32, 0xa1);
const KEY_B = Buffer.alloc(32, 0xb2);
/** A valid MCP_SESSION_KEYS value, needed by every profile other than local. */
const SESSION_KEYS = `k1:${KEY_A.toString('base64')}`;

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A temporary cwd holding these files (YAML text, or an object written as YAML). */
function makeCwd(files: Files): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-gateway-config-'));
  dirs.push(dir);
  for (const [path, content] of Object.entries(files)) {
    const full = join(dir, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, typeof content === 'string' ? content : stringify(content));
  }
  return dir;
}

function bundle(id: string, prefix: string, extra: Record<string, unknown> = {}): object {
  return {
    id,
    manifestUrl: `http://${id}.svc:8080/tool-manifest`,
    baseEndpoint: `http://${id}.svc:8080/mcp`,
    namePrefix: prefix,
    ...extra,
  };
}

/** A config file with one valid bundle; `mcp` keys given here replace those of the base. */
function mcpTree(mcp: Record<string, unknown> = {}): object {
  return { mcp: { identity: 'gw-test', bundles: [bundle('alpha', 'alpha.')], ...mcp } };
}

/** Loads `tree` as MCP_CONFIG_FILE (local profile unless env says otherwise). */
function loadTree(tree: object, env: Env = {}): GatewayConfig {
  const cwd = makeCwd({ 'gateway.yaml': tree });
  return loadGatewayConfig({
    env: { MCP_CONFIG_FILE: 'gateway.yaml', ...env },
    cwd,
    version: '9.9.9',
  });
}

function failureOf(load: () => unknown): ConfigValidationError {
  let thrown: unknown;
  try {
    load();
  } catch (err) {
    thrown = err;
  }
  expect(thrown).toBeInstanceOf(ConfigValidationError);
  const error = thrown as ConfigValidationError;
  expect(error.name).toBe('ConfigValidationError');
  return error;
}

function problemsOf(tree: object, env: Env = {}): readonly string[] {
  return failureOf(() => loadTree(tree, env)).problems;
}

/** The field path a problem line names: the text before the first ": ". */
function pathOf(problem: string): string {
  return problem.slice(0, problem.indexOf(': '));
}

describe('contract §3 startup rules for bundles', () => {
  it('rejects discovery.enabled: true with no bundle configured (tools/list would stay empty)', () => {
    const problems = problemsOf(mcpTree({ bundles: [] }));
    expect(problems).toEqual([
      'mcp.bundles: discovery.enabled is true but no bundle is configured; tools/list would stay empty forever (contract §3)',
    ]);
  });

  it('rejects discovery.enabled: true when the bundles key is absent (defaults to no bundle)', () => {
    const problems = problemsOf({ mcp: { identity: 'gw-test' } });
    expect(problems.map(pathOf)).toEqual(['mcp.bundles']);
    expect(problems[0]).toContain('no bundle is configured');
  });

  it('rejects discovery.enabled: true when every bundle has enabled: false', () => {
    const problems = problemsOf(
      mcpTree({
        bundles: [
          bundle('alpha', 'alpha.', { enabled: false }),
          bundle('beta', 'beta.', { enabled: false }),
        ],
      }),
    );
    expect(problems).toEqual([
      'mcp.bundles: discovery.enabled is true but every bundle has enabled: false; tools/list would stay empty forever (contract §3)',
    ]);
  });

  it('accepts a disabled bundle next to an enabled one', () => {
    const config = loadTree(
      mcpTree({
        bundles: [bundle('alpha', 'alpha.', { enabled: false }), bundle('beta', 'beta.')],
      }),
    );
    expect(config.bundles.map((b) => [b.id, b.enabled])).toEqual([
      ['alpha', false],
      ['beta', true],
    ]);
  });

  it('rejects two bundles with the same id', () => {
    const problems = problemsOf(
      mcpTree({ bundles: [bundle('alpha', 'alpha.'), bundle('alpha', 'beta.')] }),
    );
    expect(problems).toEqual([
      'mcp.bundles[1].id: "alpha" duplicates mcp.bundles[0].id (contract §3)',
    ]);
  });

  it('rejects two bundles with the same namePrefix', () => {
    const problems = problemsOf(
      mcpTree({ bundles: [bundle('alpha', 'shared.'), bundle('beta', 'shared.')] }),
    );
    expect(problems).toEqual([
      'mcp.bundles[1].namePrefix: "shared." duplicates mcp.bundles[0].namePrefix (contract §3)',
    ]);
  });

  it('rejects two bundles whose namePrefix is a prefix of another (a. and a.b.)', () => {
    const problems = problemsOf(mcpTree({ bundles: [bundle('one', 'a.'), bundle('two', 'a.b.')] }));
    expect(problems).toEqual([
      'mcp.bundles[1].namePrefix: "a.b." starts with mcp.bundles[0].namePrefix "a.", so a tool name could belong to both (contract §3)',
    ]);
  });

  it('rejects two bundles whose namePrefix is a prefix of another (a.b. listed before a.)', () => {
    const problems = problemsOf(mcpTree({ bundles: [bundle('one', 'a.b.'), bundle('two', 'a.')] }));
    expect(problems).toEqual([
      'mcp.bundles[0].namePrefix: "a.b." starts with mcp.bundles[1].namePrefix "a.", so a tool name could belong to both (contract §3)',
    ]);
  });

  it('accepts prefixes that share leading characters without one being a prefix of the other (a. and ab.)', () => {
    const config = loadTree(mcpTree({ bundles: [bundle('one', 'a.'), bundle('two', 'ab.')] }));
    expect(config.bundles.map((b) => b.namePrefix)).toEqual(['a.', 'ab.']);
  });

  it('reports each missing required bundle field by its path', () => {
    const problems = problemsOf(mcpTree({ bundles: [{ id: 'alpha' }] }));
    expect([...new Set(problems.map(pathOf))].sort()).toEqual([
      'mcp.bundles[0].baseEndpoint',
      'mcp.bundles[0].manifestUrl',
      'mcp.bundles[0].namePrefix',
    ]);
  });
});

describe('profiles (contract §3 profile table)', () => {
  it('refuses discovery.enabled: false outside the local profile, saying only the local profile may run without discovery', () => {
    const error = failureOf(() =>
      loadTree(
        { mcp: { identity: 'gw-test', discovery: { enabled: false } } },
        { APP_PROFILE: 'ocp', MCP_SESSION_KEYS: SESSION_KEYS },
      ),
    );
    expect(error.problems).toHaveLength(1);
    expect(pathOf(error.problems[0]!)).toBe('mcp.discovery.enabled');
    expect(error.problems[0]).toContain('under profile "ocp"');
    expect(error.problems[0]).toContain('only the local profile may run without bundle discovery');
    expect(error.message).toContain('only the local profile may run without bundle discovery');
  });

  it('rejects fallbackManifestFile outside the local profile', () => {
    const problems = problemsOf(
      mcpTree({
        bundles: [bundle('alpha', 'alpha.', { fallbackManifestFile: 'file:./config/m.json' })],
      }),
      { APP_PROFILE: 'ocp', MCP_SESSION_KEYS: SESSION_KEYS },
    );
    expect(problems).toEqual([
      'mcp.bundles[0].fallbackManifestFile: is only allowed in the local profile (profile is "ocp"; contract §3)',
    ]);
  });

  it('accepts fallbackManifestFile in the local profile and resolves it to an absolute path under cwd', () => {
    const cwd = makeCwd({
      'gateway.yaml': mcpTree({
        bundles: [bundle('alpha', 'alpha.', { fallbackManifestFile: 'file:./config/m.json' })],
      }),
    });
    const config = loadGatewayConfig({
      env: { MCP_CONFIG_FILE: 'gateway.yaml' },
      cwd,
      version: '1',
    });
    expect(config.profile).toBe('local');
    expect(config.bundles[0]?.fallbackManifestFile).toBe(join(cwd, 'config', 'm.json'));
  });

  it('requires localFixture in the local profile when discovery is disabled', () => {
    const problems = problemsOf({ mcp: { identity: 'gw-test', discovery: { enabled: false } } });
    expect(problems.map(pathOf)).toEqual(['mcp.localFixture']);
    expect(problems[0]).toContain('is required when discovery.enabled is false');
  });

  it('serves the legacy local fixture as one bundle "local-fixture" with manifestFile set (local profile, discovery disabled)', () => {
    const cwd = makeCwd({
      'gateway.yaml': {
        mcp: {
          identity: 'gw-test',
          discovery: { enabled: false },
          localFixture: {
            file: 'file:./fixtures/tools.json',
            baseEndpoint: 'http://127.0.0.1:8081/mcp/',
          },
        },
      },
    });
    const config = loadGatewayConfig({
      env: { MCP_CONFIG_FILE: 'gateway.yaml' },
      cwd,
      version: '1',
    });
    const manifestFile = join(cwd, 'fixtures', 'tools.json');
    expect(config.bundles).toEqual([
      {
        id: 'local-fixture',
        manifestUrl: `file:${manifestFile}`,
        manifestFile,
        baseEndpoint: 'http://127.0.0.1:8081/mcp',
        namePrefix: '',
        enabled: true,
        authorization: { mode: 'none' },
        serverErrorBody: 'show',
      },
    ]);
  });

  it('rejects localFixture when discovery is enabled (remote manifests and the fixture are exclusive)', () => {
    const problems = problemsOf(
      mcpTree({ localFixture: { file: './f.json', baseEndpoint: 'http://127.0.0.1:1/mcp' } }),
    );
    expect(problems).toEqual([
      'mcp.localFixture: is only used when discovery.enabled is false; remove it',
    ]);
  });

  it('defaults APP_PROFILE to local', () => {
    expect(loadTree(mcpTree()).profile).toBe('local');
  });
});

describe('routing addresses are http(s) URLs (contract §1, §10)', () => {
  it.each([
    ['manifestUrl', 'ftp://alpha.svc/tool-manifest', 'must be an http(s) URL (got scheme "ftp")'],
    ['manifestUrl', 'plain words', 'must be an http(s) URL (got "plain words")'],
    ['baseEndpoint', 'ftp://alpha.svc/mcp', 'must be an http(s) URL (got scheme "ftp")'],
    ['baseEndpoint', 'localhost', 'must be an http(s) URL (got "localhost")'],
    [
      'baseEndpoint',
      'http://alpha.svc/mcp?x=1',
      'must not have a query or fragment (tool names are appended as a path segment)',
    ],
    [
      'baseEndpoint',
      'http://alpha.svc/mcp#frag',
      'must not have a query or fragment (tool names are appended as a path segment)',
    ],
    ['baseEndpoint', 'http://user:pw@alpha.svc/mcp', 'must not carry credentials in the URL'],
  ])('rejects %s %p', (field, value, reason) => {
    const problems = problemsOf(
      mcpTree({ bundles: [bundle('alpha', 'alpha.', { [field]: value })] }),
    );
    expect(problems).toEqual([`mcp.bundles[0].${field}: ${reason}`]);
  });

  it('accepts a manifestUrl with a query (only baseEndpoint has tool names appended)', () => {
    const config = loadTree(
      mcpTree({
        bundles: [bundle('alpha', 'alpha.', { manifestUrl: 'https://alpha.svc/m?v=2' })],
      }),
    );
    expect(config.bundles[0]?.manifestUrl).toBe('https://alpha.svc/m?v=2');
  });

  it('strips trailing slashes from baseEndpoint so POST {baseEndpoint}/{toolName} has one slash', () => {
    const config = loadTree(
      mcpTree({
        bundles: [bundle('alpha', 'alpha.', { baseEndpoint: 'https://alpha.svc/mcp//' })],
      }),
    );
    expect(config.bundles[0]?.baseEndpoint).toBe('https://alpha.svc/mcp');
  });
});

describe('limits and timeouts are positive integers (contract §6)', () => {
  const fields = [
    ['discovery', 'connectTimeoutMillis'],
    ['discovery', 'readTimeoutMillis'],
    ['discovery', 'maxToolsPerBundle'],
    ['discovery', 'maxToolsTotal'],
    ['discovery', 'maxManifestBytes'],
    ['discovery', 'maxToolTimeoutMillis'],
    ['registry', 'refreshIntervalSeconds'],
  ] as const;
  const cases = fields.flatMap(([section, key]) =>
    [0, -1, 1.5, '30'].map((value) => [section, key, value] as const),
  );

  it.each(cases)('rejects mcp.%s.%s: %p', (section, key, value) => {
    const problems = problemsOf(mcpTree({ [section]: { [key]: value } }));
    // Every line names this field, and no other field is blamed.
    expect([...new Set(problems.map(pathOf))]).toEqual([`mcp.${section}.${key}`]);
    for (const p of problems) {
      expect(p).toContain('must be a positive integer');
      expect(p).toContain(`(got ${JSON.stringify(value)})`);
    }
  });

  it('accepts 1 as the smallest value of every limit', () => {
    const config = loadTree(
      mcpTree({
        registry: { refreshIntervalSeconds: 1 },
        discovery: {
          connectTimeoutMillis: 1,
          readTimeoutMillis: 1,
          maxToolsPerBundle: 1,
          maxToolsTotal: 1,
          maxManifestBytes: 1,
          maxToolTimeoutMillis: 1,
        },
      }),
    );
    expect(config.mcp.registry.refreshIntervalSeconds).toBe(1);
    expect(config.mcp.discovery).toMatchObject({
      connectTimeoutMillis: 1,
      readTimeoutMillis: 1,
      maxToolsPerBundle: 1,
      maxToolsTotal: 1,
      maxManifestBytes: 1,
      maxToolTimeoutMillis: 1,
    });
  });

  it('defaults refreshJitterSeconds to 5 (contract §6: first scheduled refresh jitter 0~5 s)', () => {
    expect(loadTree(mcpTree()).mcp.registry.refreshJitterSeconds).toBe(5);
  });

  it('accepts refreshJitterSeconds: 0 (no jitter)', () => {
    expect(
      loadTree(mcpTree({ registry: { refreshJitterSeconds: 0 } })).mcp.registry
        .refreshJitterSeconds,
    ).toBe(0);
  });

  it('rejects refreshJitterSeconds: -1', () => {
    expect(problemsOf(mcpTree({ registry: { refreshJitterSeconds: -1 } }))).toEqual([
      'mcp.registry.refreshJitterSeconds: must be an integer >= 0 (seconds) (got -1)',
    ]);
    expect(problemsOf(mcpTree({ registry: { listChangedRefreshMinIntervalMillis: -5 } }))).toEqual([
      'mcp.registry.listChangedRefreshMinIntervalMillis: must be an integer >= 0 (ms) (got -5)',
    ]);
    expect(
      problemsOf(mcpTree({ registry: { listChangedRefreshMinIntervalMillis: 60_001 } })),
    ).toEqual([
      'mcp.registry.listChangedRefreshMinIntervalMillis: must be at most 60000 (ms) (got 60001)',
    ]);
  });
});

describe('defaults are the contract recommended values (contract §6)', () => {
  it('fills every omitted key with its documented default', () => {
    const config = loadTree(mcpTree());
    expect({ ...config.mcp.registry }).toEqual({
      refreshIntervalSeconds: 30,
      refreshJitterSeconds: 5,
      notFoundRefreshMinIntervalMillis: 1000,
      listChangedRefreshMinIntervalMillis: 1000,
      maxPagesPerList: 100,
    });
    expect(config.mcp.discovery).toEqual({
      enabled: true,
      connectTimeoutMillis: 1000,
      readTimeoutMillis: 3000,
      maxToolsPerBundle: 100,
      maxToolsTotal: 200,
      maxListItemsPerUpstream: 10_000,
      maxManifestBytes: 1_048_576,
      maxToolTimeoutMillis: 30_000,
    });
    expect(config.bundles).toEqual([
      {
        id: 'alpha',
        manifestUrl: 'http://alpha.svc:8080/tool-manifest',
        baseEndpoint: 'http://alpha.svc:8080/mcp',
        namePrefix: 'alpha.',
        enabled: true,
        fallbackManifestFile: undefined,
        authorization: { mode: 'none' },
        serverErrorBody: 'show',
        validateArguments: true,
        pinned: false,
      },
    ]);
    expect(config.server).toEqual({
      host: '0.0.0.0',
      port: 8080,
      managementPort: 9090,
      managementHost: '0.0.0.0',
      mcpListener: 'fastify',
      maxMcpConnections: defaultMaxConnections(openFileLimit()),
    });
    expect(config.redisServer).toBeUndefined();
    expect(config.version).toBe('9.9.9');
    expect(config.mcp.identity).toBe('gw-test');
  });
});

describe('unknown keys and unreadable files are reported', () => {
  it('reports a misspelled key (refreshIntervalSecond) by its path', () => {
    expect(problemsOf(mcpTree({ registry: { refreshIntervalSecond: 30 } }))).toEqual([
      'mcp.registry.refreshIntervalSecond: unknown key (check its spelling and place in the mcp: tree)',
    ]);
  });

  it('reports an unknown key inside a bundle by its index', () => {
    const problems = problemsOf(
      mcpTree({ bundles: [bundle('alpha', 'alpha.', { manifestURL: 'http://x/m' })] }),
    );
    expect(problems).toEqual([
      'mcp.bundles[0].manifestURL: unknown key (check its spelling and place in the mcp: tree)',
    ]);
  });

  it('reports a file with no mcp tree', () => {
    const problems = problemsOf({ gateway: { identity: 'x' } });
    expect(problems).toEqual([
      'gateway: unknown key (check its spelling and place in the mcp: tree)',
      'mcp: is required: the file has no top-level "mcp:" tree (got nothing)',
    ]);
  });

  it('reports an empty config file as having no mcp tree', () => {
    const cwd = makeCwd({ 'gateway.yaml': '' });
    const error = failureOf(() =>
      loadGatewayConfig({ env: { MCP_CONFIG_FILE: 'gateway.yaml' }, cwd, version: '1' }),
    );
    expect(error.problems).toEqual([
      'mcp: is required: the file has no top-level "mcp:" tree (got nothing)',
    ]);
  });

  it('reports unparseable YAML with the file path', () => {
    const cwd = makeCwd({ 'gateway.yaml': 'mcp:\n  identity: [unclosed\n  bundles: {\n' });
    const error = failureOf(() =>
      loadGatewayConfig({ env: { MCP_CONFIG_FILE: 'gateway.yaml' }, cwd, version: '1' }),
    );
    const file = join(cwd, 'gateway.yaml');
    expect(error.problems[0]?.startsWith(`${file}: is not valid YAML (`)).toBe(true);
    // the unreadable file explains the missing mcp: tree; it is not reported a second time
    expect(error.problems).toHaveLength(1);
  });

  it('reports a MCP_CONFIG_FILE that does not exist', () => {
    const cwd = makeCwd({});
    const error = failureOf(() =>
      loadGatewayConfig({ env: { MCP_CONFIG_FILE: 'missing.yaml' }, cwd, version: '1' }),
    );
    expect(error.problems[0]).toBe(`${join(cwd, 'missing.yaml')}: cannot be read (ENOENT)`);
  });

  it('reports an APP_PROFILE that names a profile with no file', () => {
    const cwd = makeCwd({ 'config/application.yaml': mcpTree() });
    const error = failureOf(() =>
      loadGatewayConfig({
        env: { APP_PROFILE: 'staging', MCP_SESSION_KEYS: SESSION_KEYS },
        cwd,
        version: '1',
      }),
    );
    expect(error.problems).toEqual([
      'APP_PROFILE=staging: no profile file config/application-staging.yaml (set MCP_CONFIG_FILE or add the file)',
    ]);
    expect(error.context).toBe(`profile staging; ${join(cwd, 'config', 'application.yaml')}`);
  });
});

describe('config files: profile layering and MCP_CONFIG_FILE', () => {
  it('merges the profile file over application.yaml: objects merge key by key, the bundles list is replaced', () => {
    const cwd = makeCwd({
      'config/application.yaml': {
        mcp: {
          identity: 'from-base',
          registry: { refreshIntervalSeconds: 45 },
          discovery: { maxToolsTotal: 150, readTimeoutMillis: 2500 },
          bundles: [bundle('alpha', 'alpha.'), bundle('beta', 'beta.')],
        },
      },
      'config/application-ocp.yaml': {
        mcp: {
          registry: { refreshJitterSeconds: 2 },
          discovery: { maxToolsTotal: 120 },
          bundles: [bundle('gamma', 'gamma.')],
        },
      },
    });
    const config = loadGatewayConfig({
      env: { APP_PROFILE: 'ocp', MCP_SESSION_KEYS: SESSION_KEYS },
      cwd,
      version: '1',
    });
    expect(config.profile).toBe('ocp');
    expect(config.mcp.identity).toBe('from-base');
    expect({ ...config.mcp.registry }).toEqual({
      refreshIntervalSeconds: 45,
      refreshJitterSeconds: 2,
      notFoundRefreshMinIntervalMillis: 1000,
      listChangedRefreshMinIntervalMillis: 1000,
      maxPagesPerList: 100,
    });
    expect(config.mcp.discovery.maxToolsTotal).toBe(120);
    expect(config.mcp.discovery.readTimeoutMillis).toBe(2500);
    expect(config.bundles.map((b) => b.id)).toEqual(['gamma']);
    expect(config.sources).toEqual([
      join(cwd, 'config', 'application.yaml'),
      join(cwd, 'config', 'application-ocp.yaml'),
    ]);
  });

  it('reads application-local.yaml when APP_PROFILE is unset', () => {
    const cwd = makeCwd({
      'config/application.yaml': { mcp: { identity: 'from-base' } },
      'config/application-local.yaml': { mcp: { bundles: [bundle('local-one', 'l.')] } },
    });
    const config = loadGatewayConfig({ env: {}, cwd, version: '1' });
    expect(config.bundles.map((b) => b.id)).toEqual(['local-one']);
    expect(config.mcp.identity).toBe('from-base');
  });

  it('uses MCP_CONFIG_FILE alone: the profile files are not read', () => {
    const cwd = makeCwd({
      'config/application.yaml': {
        mcp: { identity: 'from-base', registry: { refreshIntervalSeconds: 99 } },
      },
      'config/application-local.yaml': { mcp: { bundles: [bundle('base-bundle', 'b.')] } },
      'custom/gateway.yaml': mcpTree({ identity: 'from-file' }),
    });
    const config = loadGatewayConfig({
      env: { MCP_CONFIG_FILE: 'custom/gateway.yaml' },
      cwd,
      version: '1',
    });
    expect(config.mcp.identity).toBe('from-file');
    expect(config.mcp.registry.refreshIntervalSeconds).toBe(30);
    expect(config.bundles.map((b) => b.id)).toEqual(['alpha']);
    expect(config.sources).toEqual([join(cwd, 'custom', 'gateway.yaml')]);
  });

  it('uses MCP_CONFIG_FILE even when APP_PROFILE names a profile with no file', () => {
    const config = loadTree(mcpTree(), { APP_PROFILE: 'staging', MCP_SESSION_KEYS: SESSION_KEYS });
    expect(config.profile).toBe('staging');
    expect(config.bundles.map((b) => b.id)).toEqual(['alpha']);
  });
});

describe('bundle authorization (contract §10: "설정에 따라 전달")', () => {
  it('requires valueEnv with mode static', () => {
    expect(
      problemsOf(
        mcpTree({ bundles: [bundle('alpha', 'alpha.', { authorization: { mode: 'static' } })] }),
      ),
    ).toEqual(['mcp.bundles[0].authorization.valueEnv: is required with mode static']);
  });

  it.each([[undefined], ['']])(
    'requires the environment variable named by valueEnv to be set (value %p)',
    (value) => {
      const problems = problemsOf(
        mcpTree({
          bundles: [
            bundle('alpha', 'alpha.', {
              authorization: { mode: 'static', valueEnv: 'ALPHA_TOKEN' },
            }),
          ],
        }),
        { ALPHA_TOKEN: value },
      );
      expect(problems).toEqual([
        'mcp.bundles[0].authorization.valueEnv: environment variable ALPHA_TOKEN is not set or empty',
      ]);
    },
  );

  it('takes the static Authorization value from the environment', () => {
    const config = loadTree(
      mcpTree({
        bundles: [
          bundle('alpha', 'alpha.', { authorization: { mode: 'static', valueEnv: 'ALPHA_TOKEN' } }),
        ],
      }),
      { ALPHA_TOKEN: 'Bearer s3cr3t' },
    );
    expect(config.bundles[0]?.authorization).toEqual({ mode: 'static', value: 'Bearer s3cr3t' });
  });

  it('resolves mode passthrough', () => {
    const config = loadTree(
      mcpTree({ bundles: [bundle('alpha', 'alpha.', { authorization: { mode: 'passthrough' } })] }),
    );
    expect(config.bundles[0]?.authorization).toEqual({ mode: 'passthrough' });
  });

  it('rejects an unknown mode', () => {
    expect(
      problemsOf(
        mcpTree({ bundles: [bundle('alpha', 'alpha.', { authorization: { mode: 'bearer' } })] }),
      ),
    ).toEqual([
      'mcp.bundles[0].authorization.mode: must be one of none, passthrough, static, tokenExchange (got "bearer")',
    ]);
  });

  it('rejects a valueEnv that is not an environment variable name', () => {
    const problems = problemsOf(
      mcpTree({
        bundles: [
          bundle('alpha', 'alpha.', { authorization: { mode: 'static', valueEnv: '1-BAD' } }),
        ],
      }),
      { '1-BAD': 'x' },
    );
    expect(problems).toEqual([
      'mcp.bundles[0].authorization.valueEnv: must be the name of an environment variable (got "1-BAD")',
    ]);
  });
});

describe('environment: listeners and Redis', () => {
  it('reads PORT, MANAGEMENT_PORT and HOST', () => {
    const config = loadTree(mcpTree(), {
      PORT: '18080',
      MANAGEMENT_PORT: '19090',
      HOST: '127.0.0.1',
    });
    expect(config.server).toMatchObject({ host: '127.0.0.1', port: 18080, managementPort: 19090 });
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '-1'],
    ['PORT', '80.5'],
    ['MANAGEMENT_PORT', '70000'],
    ['MANAGEMENT_PORT', ' 9091'],
  ])('rejects %s=%p (must be a TCP port)', (name, value) => {
    expect(problemsOf(mcpTree(), { [name]: value })).toEqual([
      `${name}: must be a TCP port 0..65535 (got "${value}")`,
    ]);
  });

  it('rejects MANAGEMENT_PORT equal to PORT', () => {
    expect(problemsOf(mcpTree(), { PORT: '9000', MANAGEMENT_PORT: '9000' })).toEqual([
      'MANAGEMENT_PORT: must differ from PORT (both 9000); /actuator must not share the /mcp listener',
    ]);
  });

  it('rejects PORT equal to the default MANAGEMENT_PORT', () => {
    expect(problemsOf(mcpTree(), { PORT: '9090' }).map(pathOf)).toEqual(['MANAGEMENT_PORT']);
  });

  it('allows both ports to be 0 (each listener picks a free port)', () => {
    const config = loadTree(mcpTree(), { PORT: '0', MANAGEMENT_PORT: '0' });
    expect(config.server.port).toBe(0);
    expect(config.server.managementPort).toBe(0);
  });

  it.each(['redis://127.0.0.1:6379', 'rediss://cache.svc:6380/2'])(
    'accepts REDIS_URL %p',
    (url) => {
      expect(loadTree(mcpTree(), { REDIS_URL: url }).redisServer).toEqual({
        kind: 'standalone',
        url,
        secrets: { tls: false },
      });
    },
  );

  it.each(['http://127.0.0.1:6379', '127.0.0.1:6379', 'not a url'])(
    'rejects REDIS_URL %p (must be redis:// or rediss://)',
    (url) => {
      expect(problemsOf(mcpTree(), { REDIS_URL: url })).toEqual([
        'REDIS_URL: must be a redis:// or rediss:// URL',
      ]);
    },
  );
});

describe('environment: MCP_SESSION_KEYS (DESIGN "No sticky sessions")', () => {
  it('starts without MCP_SESSION_KEYS outside the local profile, with no key: stateless legacy mode (docs/operations.md §9)', () => {
    const config = loadTree(mcpTree(), { APP_PROFILE: 'ocp' });
    expect(config.sessionKeys).toEqual([]);
    expect(config.sessionKeysEphemeral).toBe(false);
  });

  it('parses "kid:base64" entries with 32-byte keys in order; the first one seals', () => {
    const config = loadTree(mcpTree(), {
      APP_PROFILE: 'ocp',
      MCP_SESSION_KEYS: `new:${KEY_B.toString('base64')}, old:${KEY_A.toString('base64')}`,
    });
    expect(config.sessionKeys.map((k) => k.kid)).toEqual(['new', 'old']);
    expect(config.sessionKeys[0]?.key.equals(KEY_B)).toBe(true);
    expect(config.sessionKeys[1]?.key.equals(KEY_A)).toBe(true);
    expect(config.sessionKeysEphemeral).toBe(false);
  });

  it('rejects a key that does not decode to 32 bytes', () => {
    const problems = problemsOf(mcpTree(), {
      MCP_SESSION_KEYS: `k1:${Buffer.alloc(16, 1).toString('base64')}`,
    });
    expect(problems).toEqual([
      'MCP_SESSION_KEYS[0] (kid k1): the key must decode from base64 to 32 bytes (got 16)',
    ]);
  });

  it.each([
    KEY_A.toString('base64'),
    `:${KEY_A.toString('base64')}`,
    `bad kid!:${KEY_A.toString('base64')}`,
  ])('rejects an entry without a valid kid (%p)', (value) => {
    expect(problemsOf(mcpTree(), { MCP_SESSION_KEYS: value })).toEqual([
      'MCP_SESSION_KEYS[0]: must be "kid:base64key" with a kid of [A-Za-z0-9_-]{1,16}',
    ]);
  });

  it('rejects the same kid twice', () => {
    const problems = problemsOf(mcpTree(), {
      MCP_SESSION_KEYS: `k1:${KEY_A.toString('base64')},k1:${KEY_B.toString('base64')}`,
    });
    expect(problems).toEqual(['MCP_SESSION_KEYS[1]: kid "k1" appears twice']);
  });

  it('generates one ephemeral 32-byte key in the local profile when MCP_SESSION_KEYS is unset', () => {
    const first = loadTree(mcpTree());
    const second = loadTree(mcpTree());
    expect(first.sessionKeysEphemeral).toBe(true);
    expect(first.sessionKeys).toHaveLength(1);
    expect(first.sessionKeys[0]?.kid).toBe('local');
    expect(first.sessionKeys[0]?.key).toHaveLength(32);
    expect(first.sessionKeys[0]?.key.equals(second.sessionKeys[0]!.key)).toBe(false);
  });
});

describe('validate once, list every problem (DESIGN "Validate once, fail fast")', () => {
  it('throws one ConfigValidationError listing every problem of a config with several at once', () => {
    const error = failureOf(() =>
      loadTree(
        {
          mcp: {
            identity: 'gw-test',
            registry: { refreshIntervalSecond: 30, refreshJitterSeconds: -1 },
            discovery: { maxToolsTotal: 0, readTimeoutMillis: 1.5 },
            bundles: [
              bundle('alpha', 'a.', { baseEndpoint: 'ftp://alpha.svc/mcp' }),
              bundle('alpha', 'a.b.', { authorization: { mode: 'static' } }),
            ],
          },
        },
        { PORT: 'abc', REDIS_URL: 'http://cache:6379' },
      ),
    );
    expect(error.problems.map(pathOf)).toEqual([
      'mcp.registry.refreshIntervalSecond',
      'mcp.registry.refreshJitterSeconds',
      'mcp.discovery.readTimeoutMillis',
      'mcp.discovery.maxToolsTotal',
      'PORT',
      'REDIS_URL',
      'mcp.bundles[0].baseEndpoint',
      'mcp.bundles[1].id',
      'mcp.bundles[1].authorization.valueEnv',
      'mcp.bundles[1].namePrefix',
    ]);
    expect(error.problems).toHaveLength(10);
    expect(error.message).toContain(': 10 problems\n');
    for (const problem of error.problems) expect(error.message).toContain(`  - ${problem}`);
  });
});

describe('malformed sections are reported, not crashed on', () => {
  // A section of the wrong type must give the one-message ConfigValidationError, never a TypeError.
  it.each([
    ['mcp: with no value', 'mcp:\n'],
    ['discovery: null', 'mcp:\n  identity: gw\n  discovery: null\n  bundles: []\n'],
    ['a null bundle entry', 'mcp:\n  identity: gw\n  bundles:\n    - null\n'],
    ['a bundle written as a plain string', 'mcp:\n  identity: gw\n  bundles:\n    - alpha\n'],
    [
      'authorization: null',
      'mcp:\n  identity: gw\n  bundles:\n    - id: a\n      manifestUrl: http://a/m\n      baseEndpoint: http://a/t\n      namePrefix: a.\n      authorization: null\n',
    ],
    [
      'localFixture: null',
      'mcp:\n  identity: gw\n  discovery:\n    enabled: false\n  localFixture: null\n',
    ],
  ])('reports %s as a ConfigValidationError', (_label, text) => {
    const cwd = makeCwd({ 'gateway.yaml': text });
    failureOf(() =>
      loadGatewayConfig({ env: { MCP_CONFIG_FILE: 'gateway.yaml' }, cwd, version: '1' }),
    );
  });
});

describe('shapes that once slipped through are refused with the field named', () => {
  it.each(['registry', 'discovery', 'execution', 'session', 'redis', 'shutdown'])(
    'refuses a list where the %s section (a mapping) belongs',
    (section) => {
      const error = failureOf(() => loadTree(mcpTree({ [section]: [] })));
      expect(error.problems).toEqual([
        `mcp.${section}: must be a mapping of keys (not a list or a value) (got [])`,
      ]);
    },
  );

  it('refuses mcp: [] with a message naming it', () => {
    const error = failureOf(() => loadTree({ mcp: [] }));
    expect(error.problems).toEqual([
      'mcp: must be a mapping of keys (not a list or a value) (got [])',
    ]);
  });

  it('refuses a list where a bundle authorization section belongs', () => {
    const error = failureOf(() =>
      loadTree(mcpTree({ bundles: [bundle('alpha', 'alpha.', { authorization: [] })] })),
    );
    expect(error.problems).toEqual([
      'mcp.bundles[0].authorization: must be a mapping of keys (not a list or a value) (got [])',
    ]);
  });

  it('refuses a bundle entry that is a list, and says bundles must be a list when it is a number', () => {
    expect(
      failureOf(() => loadTree(mcpTree({ bundles: [bundle('alpha', 'alpha.'), []] }))).problems,
    ).toEqual([expect.stringMatching(/^mcp\.bundles(\[1\])?: each bundle must be a mapping/)]);
    expect(failureOf(() => loadTree(mcpTree({ bundles: 7 }))).problems).toEqual([
      'mcp.bundles: must be a list of bundles (got 7)',
    ]);
  });

  it.each([
    ['registry', 'refreshIntervalSeconds', 2_592_000],
    ['registry', 'refreshJitterSeconds', 86_400],
    ['discovery', 'connectTimeoutMillis', 3_000_000_000],
    ['discovery', 'readTimeoutMillis', 3_000_000_000],
    ['discovery', 'maxToolTimeoutMillis', 3_000_000_000],
    ['redis', 'commandTimeoutMillis', 3_000_000_000],
    ['shutdown', 'gracePeriodSeconds', 2_147_484],
  ])(
    'refuses %s.%s = %d, beyond what a Node timer can hold or sense allows',
    (section, key, value) => {
      const error = failureOf(() => loadTree(mcpTree({ [section]: { [key]: value } })));
      expect(error.problems).toEqual([
        expect.stringMatching(new RegExp(`^mcp\\.${section}\\.${key}: must be at most`)),
      ]);
    },
  );

  it('refuses a YAML alias that contains itself, without a stack trace', () => {
    const cwd = makeCwd({
      'gateway.yaml':
        'mcp: &x\n  identity: gw\n  registry: *x\n  bundles:\n    - {id: a, manifestUrl: "http://a/m", baseEndpoint: "http://a/t", namePrefix: "a."}\n',
    });
    const error = failureOf(() =>
      loadGatewayConfig({ env: { MCP_CONFIG_FILE: 'gateway.yaml' }, cwd, version: '1' }),
    );
    expect(error.problems).toEqual([expect.stringContaining('recursive YAML alias')]);
  });

  it.each(['../', './', '/', 'a//'])(
    'refuses namePrefix %p, which no tool name could satisfy',
    (prefix) => {
      const error = failureOf(() => loadTree(mcpTree({ bundles: [bundle('alpha', prefix)] })));
      expect(error.problems).toEqual([
        expect.stringMatching(/^mcp\.bundles\[0\]\.namePrefix: .*path segment/),
      ]);
    },
  );

  it('accepts a namePrefix with a trailing slash (a/)', () => {
    expect(loadTree(mcpTree({ bundles: [bundle('alpha', 'alpha/')] })).bundles[0]?.namePrefix).toBe(
      'alpha/',
    );
  });

  it('refuses a static Authorization value with control characters, naming the variable and never the value', () => {
    const error = failureOf(() =>
      loadTree(
        mcpTree({
          bundles: [
            bundle('alpha', 'alpha.', { authorization: { mode: 'static', valueEnv: 'AUTHV' } }),
          ],
        }),
        {
          AUTHV: 'Bearer abc\r\nX-Evil: 1',
        },
      ),
    );
    expect(error.problems).toEqual([
      'mcp.bundles[0].authorization.valueEnv: AUTHV holds characters an HTTP header cannot carry',
    ]);
    expect(error.message).not.toContain('abc');
  });

  it('does not add the discovery-disabled rules when discovery.enabled is not a boolean', () => {
    const error = failureOf(() => loadTree(mcpTree({ discovery: { enabled: 'yes' } })));
    expect(error.problems).toEqual(['mcp.discovery.enabled: must be true or false (got "yes")']);
  });
});

describe('environment placeholders in config files (${NAME} / ${NAME:default})', () => {
  const withPort = (): object =>
    mcpTree({
      bundles: [
        bundle('alpha', 'alpha.', {
          manifestUrl: 'http://127.0.0.1:${SAMPLE_PORT:8081}/tool-manifest',
          baseEndpoint: 'http://127.0.0.1:${SAMPLE_PORT:8081}/mcp',
        }),
      ],
    });

  it('reads the variable before validation, so the local profile follows SAMPLE_PORT', () => {
    const config = loadTree(withPort(), { SAMPLE_PORT: '18081' });
    expect(config.bundles[0]?.manifestUrl).toBe('http://127.0.0.1:18081/tool-manifest');
    expect(config.bundles[0]?.baseEndpoint).toBe('http://127.0.0.1:18081/mcp');
  });

  it('uses the default when the variable is unset', () => {
    expect(loadTree(withPort()).bundles[0]?.manifestUrl).toBe(
      'http://127.0.0.1:8081/tool-manifest',
    );
  });

  it('refuses to boot on a placeholder without a default whose variable is unset, naming the field', () => {
    const problems = problemsOf(mcpTree({ identity: '${GATEWAY_IDENTITY}' }));
    expect(problems).toContain(
      'mcp.identity: ${GATEWAY_IDENTITY} names an environment variable that is not set',
    );
  });

  it('names a field whose variable is unset once, for the variable, not again for the placeholder text it was left with', () => {
    const problems = problemsOf(
      mcpTree({
        bundles: [bundle('alpha', 'alpha.', { manifestUrl: 'http://127.0.0.1:${NO_PORT}/m' })],
        upstreams: [{ id: 'u', url: '${NO_URL}', namePrefix: 'u__' }],
      }),
    );
    expect(problems.filter((p) => pathOf(p) === 'mcp.bundles[0].manifestUrl')).toEqual([
      'mcp.bundles[0].manifestUrl: ${NO_PORT} names an environment variable that is not set',
    ]);
    expect(problems.filter((p) => pathOf(p) === 'mcp.upstreams[0].url')).toEqual([
      'mcp.upstreams[0].url: ${NO_URL} names an environment variable that is not set',
    ]);
  });

  it('validates what the variable holds like any written value', () => {
    const problems = problemsOf(withPort(), { SAMPLE_PORT: 'x y' });
    expect(problems.map(pathOf)).toEqual(
      expect.arrayContaining(['mcp.bundles[0].manifestUrl', 'mcp.bundles[0].baseEndpoint']),
    );
  });
});

describe('bundles[].serverErrorBody (what agents see of 5xx bodies)', () => {
  it('defaults to show in the local profile and hide elsewhere', () => {
    expect(loadTree(mcpTree()).bundles[0]?.serverErrorBody).toBe('show');
    expect(
      loadTree(mcpTree(), { APP_PROFILE: 'ocp', MCP_SESSION_KEYS: SESSION_KEYS }).bundles[0]
        ?.serverErrorBody,
    ).toBe('hide');
  });

  it('keeps an explicit choice in any profile', () => {
    const tree = mcpTree({ bundles: [bundle('alpha', 'alpha.', { serverErrorBody: 'show' })] });
    expect(
      loadTree(tree, { APP_PROFILE: 'ocp', MCP_SESSION_KEYS: SESSION_KEYS }).bundles[0]
        ?.serverErrorBody,
    ).toBe('show');
  });

  it('refuses another value, naming the field', () => {
    const problems = problemsOf(
      mcpTree({ bundles: [bundle('alpha', 'alpha.', { serverErrorBody: 'verbose' })] }),
    );
    expect(problems).toEqual([
      'mcp.bundles[0].serverErrorBody: must be one of hide, show (got "verbose")',
    ]);
  });
});

describe('environment: MCP_HTTP_SERVER (which listener serves /mcp)', () => {
  it('defaults to fastify and accepts node', () => {
    expect(loadTree(mcpTree()).server.mcpListener).toBe('fastify');
    expect(loadTree(mcpTree(), { MCP_HTTP_SERVER: 'node' }).server.mcpListener).toBe('node');
  });

  it('refuses another value with the other problems, naming the variable', () => {
    expect(problemsOf(mcpTree(), { MCP_HTTP_SERVER: 'express' })).toEqual([
      'MCP_HTTP_SERVER: must be one of fastify, node (got "express")',
    ]);
  });
});

describe('environment: MCP_HEAP_GROWING_PERCENT (V8 old-generation growing factor)', () => {
  it("is unset by default (V8's own factor) and takes an integer 1..300", () => {
    expect(loadTree(mcpTree()).server.heapGrowingPercent).toBeUndefined();
    expect(loadTree(mcpTree(), { MCP_HEAP_GROWING_PERCENT: '30' }).server.heapGrowingPercent).toBe(
      30,
    );
    expect(loadTree(mcpTree(), { MCP_HEAP_GROWING_PERCENT: '1' }).server.heapGrowingPercent).toBe(
      1,
    );
    expect(loadTree(mcpTree(), { MCP_HEAP_GROWING_PERCENT: '300' }).server.heapGrowingPercent).toBe(
      300,
    );
  });

  it.each(['0', '301', '3.5', '-5', 'thirty', ' 30'])(
    'refuses %p with the other problems, naming the variable',
    (raw) => {
      expect(problemsOf(mcpTree(), { MCP_HEAP_GROWING_PERCENT: raw })).toEqual([
        `MCP_HEAP_GROWING_PERCENT: must be an integer 1..300 (got "${raw}")`,
      ]);
    },
  );
});

describe('mcp.http.maxConnections (docs/operations.md §1)', () => {
  it('takes the configured limit', () => {
    expect(loadTree(mcpTree({ http: { maxConnections: 500 } })).server.maxMcpConnections).toBe(500);
  });

  it('refuses a limit that is not a positive integer, naming the field', () => {
    expect(problemsOf(mcpTree({ http: { maxConnections: 0 } }))).toEqual([
      'mcp.http.maxConnections: must be a positive integer (connections) (got 0)',
    ]);
  });
});

describe('environment: MANAGEMENT_HOST', () => {
  it('defaults to HOST and can bind the management listener elsewhere', () => {
    expect(loadTree(mcpTree(), { HOST: '10.0.0.5' }).server.managementHost).toBe('10.0.0.5');
    expect(
      loadTree(mcpTree(), { HOST: '0.0.0.0', MANAGEMENT_HOST: '127.0.0.1' }).server.managementHost,
    ).toBe('127.0.0.1');
  });
});

describe('execution limits that contradict each other (docs/operations.md §1, execution.*)', () => {
  it('refuses maxInFlightAnswerBytes below maxResponseBytes', () => {
    expect(
      problemsOf(mcpTree({ execution: { maxInFlightAnswerBytes: 1000, maxResponseBytes: 2000 } })),
    ).toEqual([
      'mcp.execution.maxInFlightAnswerBytes: 1000 is smaller than execution.maxResponseBytes (2000); one answer within the size limit could never be held',
    ]);
  });

  it('refuses a budget beyond 2^53 - 1', () => {
    expect(problemsOf(mcpTree({ execution: { maxInFlightAnswerBytes: 1e20 } }))[0]).toContain(
      'mcp.execution.maxInFlightAnswerBytes: must be at most 2^53 - 1 (bytes)',
    );
  });
});

describe('discovery.maxListItemsPerUpstream', () => {
  const base = { identity: 'gw-test', bundles: [bundle('alpha', 'a.')] };

  it('defaults to 10000; a set value is the cap of resources, templates and prompts', () => {
    expect(loadTree({ mcp: base }).mcp.discovery.maxListItemsPerUpstream).toBe(10_000);
    expect(
      loadTree({ mcp: { ...base, discovery: { maxListItemsPerUpstream: 50 } } }).mcp.discovery
        .maxListItemsPerUpstream,
    ).toBe(50);
  });

  it.each([0, -1, 2.5, 'many', 1_000_001])('%p is refused, naming the field', (value) => {
    const error = failureOf(() =>
      loadTree({ mcp: { ...base, discovery: { maxListItemsPerUpstream: value } } }),
    );
    expect(error.problems.map(pathOf)).toEqual(['mcp.discovery.maxListItemsPerUpstream']);
  });
});

describe('discovery.maxToolsPerUpstream', () => {
  it('defaults to maxToolsPerBundle and never passes maxToolsTotal; a set value is the cap', () => {
    const base = { identity: 'gw-test', bundles: [bundle('alpha', 'a.')] };
    const cap = (discovery: Record<string, unknown>) =>
      toolsCapPerUpstream(loadTree({ mcp: { ...base, discovery } }).mcp.discovery);
    expect(cap({})).toEqual({ limit: 100, key: 'maxToolsPerUpstream' });
    expect(cap({ maxToolsPerBundle: 40 })).toEqual({ limit: 40, key: 'maxToolsPerUpstream' });
    expect(cap({ maxToolsPerUpstream: 7 })).toEqual({ limit: 7, key: 'maxToolsPerUpstream' });
    expect(cap({ maxToolsPerUpstream: 5000, maxToolsTotal: 300 })).toEqual({
      limit: 300,
      key: 'maxToolsTotal',
    });
  });

  it.each([0, -1, 2.5, 'many'])('%p is refused, naming the field', (value) => {
    const error = failureOf(() =>
      loadTree({
        mcp: {
          identity: 'gw-test',
          discovery: { maxToolsPerUpstream: value },
          bundles: [bundle('alpha', 'a.')],
        },
      }),
    );
    expect(error.problems.map(pathOf)).toEqual(['mcp.discovery.maxToolsPerUpstream']);
    expect(error.problems[0]).toContain('must be a positive integer (tools)');
  });
});

describe('MCP_ADMIN_TOKEN length (docs/operations.md §15 "Access")', () => {
  const keys = `k1:${Buffer.alloc(32, 1).toString('base64')}`;

  it('outside the local profile a token under 32 characters is accepted and marked weak (warned at boot)', () => {
    const short = loadTree(mcpTree(), {
      APP_PROFILE: 'prod',
      MCP_ADMIN_TOKEN: 'x',
      MCP_SESSION_KEYS: keys,
    });
    expect(short.admin).toMatchObject({ token: 'x', weakToken: true });
    const long = loadTree(mcpTree(), {
      APP_PROFILE: 'prod',
      MCP_ADMIN_TOKEN: 'a'.repeat(32),
      MCP_SESSION_KEYS: keys,
    });
    expect(long.admin?.weakToken).toBe(false);
  });

  it('in local a short token is not marked', () => {
    expect(loadTree(mcpTree(), { MCP_ADMIN_TOKEN: 'x' }).admin?.weakToken).toBe(false);
  });
});

describe('virtual servers and tool search (docs/operations.md §16)', () => {
  it('refuses two virtual servers with one id, and one that would serve nothing, naming each', () => {
    const problems = problemsOf(
      mcpTree({
        virtualServers: [
          { id: 'team', tools: ['alpha.*'] },
          { id: 'team', sources: ['alpha'] },
          { id: 'empty' },
        ],
      }),
    );
    expect(problems).toContain(
      'mcp.virtualServers[1].id: "team" duplicates mcp.virtualServers[0].id',
    );
    expect(problems.some((p) => p.startsWith('mcp.virtualServers[2]: names no sources'))).toBe(
      true,
    );
  });

  it('refuses tool selection without tool search, for /mcp and for a virtual server', () => {
    const problems = problemsOf(
      mcpTree({
        toolSearch: { select: true },
        virtualServers: [{ id: 'team', tools: ['alpha.*'], toolSelect: true }],
      }),
    );
    expect(problems.map(pathOf)).toEqual(
      expect.arrayContaining(['mcp.toolSearch.select', 'mcp.virtualServers[0].toolSelect']),
    );
  });

  it('accepts tool selection with tool search', () => {
    const config = loadTree(
      mcpTree({
        toolSearch: { enabled: true, select: true },
        virtualServers: [{ id: 'team', tools: ['alpha.*'], toolSearch: true, toolSelect: true }],
      }),
    );
    expect(config.mcp.toolSearch).toEqual({ enabled: true, select: true });
    expect(config.mcp.virtualServers[0]?.toolSelect).toBe(true);
  });
});
