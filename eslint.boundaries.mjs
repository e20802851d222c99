// Module boundaries (docs/architecture.md, "The house"): which lib may import which, only
// through a lib's entry point, and entry points that name what they export. Imported by
// eslint.config.mjs; test/lint/boundaries.e2e-spec.ts holds forbidden imports against it.

/** The libs each lib may import (@app/<name>); everything else is refused. Imports run downward. */
export const ALLOWED_LIB_IMPORTS = {
  wire: [],
  'http-body': ['wire'],
  observability: ['wire'],
  config: ['wire'],
  redis: ['config'],
  identity: ['config', 'observability', 'wire'],
  registry: ['config', 'observability', 'redis', 'wire'],
  upstream: ['config', 'http-body', 'identity', 'observability', 'wire'],
  execution: ['config', 'http-body', 'identity', 'observability', 'upstream', 'wire'],
  registrations: ['config', 'observability', 'redis', 'registry', 'upstream', 'wire'],
  discovery: [
    'config',
    'http-body',
    'identity',
    'observability',
    'registrations',
    'registry',
    'upstream',
    'wire',
  ],
  mcp: [
    'config',
    'execution',
    'http-body',
    'identity',
    'observability',
    'redis',
    'registry',
    'upstream',
    'wire',
  ],
};

const DEEP_IMPORT = {
  group: ['@app/*/**'],
  message: 'import a lib through its entry point (@app/<name>), never a file inside it',
};
const OTHER_LIB_BY_PATH = {
  group: ['**/libs/**', '../**/src/**'],
  message: 'import another lib as @app/<name>, never by a relative path',
};

/**
 * Config reaches DI through one door, `@Inject(GATEWAY_CONFIG)` (libs/config/src/config.module.ts):
 * ConfigService, which that provider is derived from, is libs/config's own business.
 */
const ONE_CONFIG_DOOR = {
  group: ['@nestjs/config'],
  message:
    "take the config as @Inject(GATEWAY_CONFIG) config: GatewayConfig; @nestjs/config is libs/config's own",
};

/**
 * libs/mcp's folders, lowest first (docs/architecture.md "McpModule's parts"): a folder imports
 * only folders before it, so no two folders import each other; the files at libs/mcp/src's root
 * (the Nest modules and the entry point) may import every folder, and no folder imports them.
 */
export const MCP_FOLDER_LAYERS = [
  // what every part uses: error values, JSON-RPC messages, sealed ids' caller, session owners
  'errors',
  'jsonrpc',
  'sealing',
  'session',
  // the shapes of an answer, then the handler contract over them
  'answers',
  'methods',
  'limits',
  'audit',
  // the relay part
  'relay',
  'tasks',
  'mrtr',
  // what a caller is offered, its notification streams, the search tools
  'servers',
  'listen',
  'search',
  // the methods part, then the front door
  'handlers',
  'codecs',
  'http',
];

/** The restrictions of libs/<lib>: its allowed libs, no deep imports, no relative paths into another lib. */
function libPatterns(lib, allowed) {
  return [
    DEEP_IMPORT,
    OTHER_LIB_BY_PATH,
    {
      group: ['@app/*', `!@app/${lib}`, ...allowed.map((name) => `!@app/${name}`)],
      message: `libs/${lib} may import only ${allowed.length === 0 ? 'no other lib' : allowed.map((n) => `@app/${n}`).join(', ')} (docs/architecture.md)`,
    },
    ...(lib === 'wire'
      ? [{ group: ['@nestjs/*'], message: 'libs/wire is pure: no Nest, no I/O' }]
      : []),
    ...(lib === 'config' ? [] : [ONE_CONFIG_DOOR]),
  ];
}

/** A folder of libs/mcp: libs/mcp's restrictions, and none of the folders above it or the root files. */
function mcpFolderPatterns(folder, index) {
  const above = MCP_FOLDER_LAYERS.slice(index + 1);
  const below = MCP_FOLDER_LAYERS.slice(0, index);
  return [
    ...libPatterns('mcp', ALLOWED_LIB_IMPORTS.mcp),
    {
      group: ['../*', '!../..', `!../${folder}`, ...below.map((f) => `!../${f}`)],
      message: `libs/mcp/src/${folder} may import only the folders below it${below.length === 0 ? ' (none)' : `: ${below.join(', ')}`}; ${above.length === 0 ? 'nothing' : above.join(', ')} and the root files are above it (eslint.boundaries.mjs MCP_FOLDER_LAYERS, docs/architecture.md)`,
    },
  ];
}

/** One config object per lib, and one per folder of libs/mcp (its layer). */
export const boundaries = [
  ...Object.entries(ALLOWED_LIB_IMPORTS).map(([lib, allowed]) => ({
    files: [`libs/${lib}/src/**/*.ts`],
    rules: { 'no-restricted-imports': ['error', { patterns: libPatterns(lib, allowed) }] },
  })),
  ...MCP_FOLDER_LAYERS.map((folder, index) => ({
    files: [`libs/mcp/src/${folder}/**/*.ts`],
    rules: {
      'no-restricted-imports': ['error', { patterns: mcpFolderPatterns(folder, index) }],
    },
  })),
  {
    files: ['apps/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [DEEP_IMPORT, OTHER_LIB_BY_PATH, ONE_CONFIG_DOOR] },
      ],
    },
  },
  {
    files: ['libs/*/src/index.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ExportAllDeclaration',
          message: "a lib's entry point names what it exports: no `export *`",
        },
      ],
    },
  },
];
