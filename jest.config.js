const { availableParallelism } = require('node:os');

/** Jest: unit tests next to the code (*.spec.ts), e2e suites under test/ (*.e2e-spec.ts). */
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
    },
    module: { type: 'commonjs' },
  },
];
const esmToCjs = '<rootDir>/test/jest/esm-to-cjs.transformer.js';
/** ES-module-only packages that Jest must see as CommonJS. */
const transformIgnorePatterns = [
  '/node_modules/(?!(@nestjs|file-type|strtok3|token-types|uint8array-extras|@tokenizer|jose)/)',
];
const moduleNameMapper = {
  '^@app/(config|discovery|registry|execution|http-body|mcp|observability|upstream|identity|wire|redis|registrations)$':
    '<rootDir>/libs/$1/src',
};

/**
 * The suites that must answer alike on the opt-in node:http /mcp listener (MCP_HTTP_SERVER=node):
 * run a second time in the e2e-node-listener project, in the same run and worker pool as the rest.
 */
const nodeListenerSuites = [
  'bundles/jsonrpc-wire',
  'bundles/origin-and-host',
  'bundles/repeated-headers',
  'upstreams/forward-header-repeated',
  'upstreams/session-end',
  'bundles/tools-list-gzip',
  'bundles/sdk-clients',
  'bundles/mcp-listeners',
  'resilience/cancellation',
  'resilience/graceful-shutdown',
  'resilience/connection-limit',
  'resilience/mcp-slow-client',
  'auth/refused-before-body',
];

module.exports = {
  // e2e suites start real processes; a unit test never comes near this.
  testTimeout: 60000,
  // A gateway or server a failed e2e test could not stop must not keep CI waiting after the
  // run: the results are final once the last suite reports.
  forceExit: true,
  // The e2e suites mostly wait on real processes (a serial run keeps a 2-core machine a quarter
  // busy): three workers there run them in a third of the time.
  maxWorkers: Math.ceil(availableParallelism() * 1.5),
  // the longest e2e suites first, so none starts last and holds the run's end
  testSequencer: '<rootDir>/test/jest/slow-first-sequencer.js',
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      rootDir: __dirname,
      roots: ['<rootDir>/libs', '<rootDir>/apps'],
      testMatch: ['**/*.spec.ts'],
      transform: { '^.+\\.ts$': swc, '^.+\\.m?js$': esmToCjs },
      transformIgnorePatterns,
      moduleNameMapper,
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      rootDir: __dirname,
      roots: ['<rootDir>/test'],
      testMatch: ['**/*.e2e-spec.ts'],
      setupFiles: ['<rootDir>/test/jest/e2e-setup.ts'],
      transform: { '^.+\\.ts$': swc, '^.+\\.m?js$': esmToCjs },
      transformIgnorePatterns,
      moduleNameMapper,
    },
    {
      displayName: 'e2e-node-listener',
      testEnvironment: 'node',
      rootDir: __dirname,
      roots: ['<rootDir>/test'],
      testMatch: nodeListenerSuites.map((suite) => `<rootDir>/test/${suite}.e2e-spec.ts`),
      setupFiles: [
        '<rootDir>/test/jest/e2e-setup.ts',
        '<rootDir>/test/jest/node-listener-setup.ts',
      ],
      transform: { '^.+\\.ts$': swc, '^.+\\.m?js$': esmToCjs },
      transformIgnorePatterns,
      moduleNameMapper,
    },
  ],
};
