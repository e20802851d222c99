// Module boundaries (docs/architecture.md, "The house"): which lib may import which, only
// through a lib's entry point, and entry points that name what they export. Imported by
// eslint.config.mjs; libs/wire/src/boundaries.spec.ts holds forbidden imports against it.

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
  discovery: ['config', 'http-body', 'identity', 'observability', 'registry', 'upstream', 'wire'],
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

/** One config object per lib: its allowed libs, no deep imports, no relative paths into another lib. */
export const boundaries = [
  ...Object.entries(ALLOWED_LIB_IMPORTS).map(([lib, allowed]) => ({
    files: [`libs/${lib}/src/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
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
          ],
        },
      ],
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
