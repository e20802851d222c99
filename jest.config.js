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
const moduleNameMapper = {
  '^@app/(config|discovery|registry|execution|mcp)$': '<rootDir>/libs/$1/src',
};

module.exports = {
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      rootDir: __dirname,
      roots: ['<rootDir>/libs', '<rootDir>/apps'],
      testMatch: ['**/*.spec.ts'],
      transform: { '^.+\\.ts$': swc },
      moduleNameMapper,
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      rootDir: __dirname,
      roots: ['<rootDir>/test'],
      testMatch: ['**/*.e2e-spec.ts'],
      transform: { '^.+\\.ts$': swc },
      moduleNameMapper,
      testTimeout: 60000,
    },
  ],
};
