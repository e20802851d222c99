import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const REPO = resolve(__dirname, '..', '..');

interface LintMessage {
  readonly ruleId: string | null;
  readonly message: string;
}
interface LintResult {
  readonly filePath: string;
  readonly messages: readonly LintMessage[];
}

/**
 * The module boundaries of docs/architecture.md are enforced by lint (eslint.boundaries.mjs,
 * part of eslint.config.mjs): these files, laid out like the repository's libs in a scratch
 * folder, are linted by the real eslint with the repository's boundary rules, and every
 * forbidden import fails while the allowed ones pass.
 */
describe('lint holds the module boundaries (docs/architecture.md)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcpgw-boundaries-'));
  const files: Record<string, string> = {
    'libs/mcp/src/refresh-by-discovery.ts':
      "import { BundleRefreshService } from '@app/discovery';\nexport const x = BundleRefreshService;\n",
    'libs/execution/src/lookup.ts':
      "import { RegistryService } from '@app/registry';\nexport const x = RegistryService;\n",
    'libs/registry/src/upward.ts':
      "import { McpModule } from '@app/mcp';\nexport const x = McpModule;\n",
    'libs/mcp/src/deep.ts':
      "import { RegistryService } from '@app/registry/src/registry.service';\nexport const x = RegistryService;\n",
    'libs/mcp/src/handlers/by-path.ts':
      "import { UpstreamConnection } from '../../../upstream/src/upstream-connection';\nexport const x = UpstreamConnection;\n",
    'libs/wire/src/nest.ts':
      "import { Injectable } from '@nestjs/common';\nexport const x = Injectable;\n",
    'libs/wire/src/upward.ts':
      "import { GATEWAY_CONFIG } from '@app/config';\nexport const x = GATEWAY_CONFIG;\n",
    'libs/config/src/index.ts': "export * from './gateway-config';\n",
    'libs/mcp/src/second-door.ts':
      "import { ConfigService } from '@nestjs/config';\nexport const x = ConfigService;\n",
    'apps/gateway/src/second-door.ts':
      "import { ConfigService } from '@nestjs/config';\nexport const x = ConfigService;\n",
    'libs/config/src/own-door.ts':
      "import { ConfigService } from '@nestjs/config';\nexport const x = ConfigService;\n",
    'apps/gateway/src/deep.ts':
      "import { McpTransport } from '@app/mcp/src/mcp-transport.service';\nexport const x = McpTransport;\n",
    'libs/mcp/src/allowed.ts':
      "import { RegistryService, CatalogRefresh } from '@app/registry';\nimport { JsonRpcCode } from '@app/wire';\nimport { header } from './http/http-answer';\nexport const x = [RegistryService, CatalogRefresh, JsonRpcCode, header];\n",
    'libs/registry/src/index.ts': "export { RegistryService } from './registry.service';\n",
    // libs/mcp's folders in layers (eslint.boundaries.mjs MCP_FOLDER_LAYERS)
    'libs/mcp/src/relay/upward.ts':
      "import { MrtrCalls } from '../mrtr/mrtr-calls.service';\nexport const x = MrtrCalls;\n",
    'libs/mcp/src/answers/to-root.ts':
      "import { McpModule } from '../mcp.module';\nexport const x = McpModule;\n",
    'libs/mcp/src/listen/to-front-door.ts':
      "import { McpExchanges } from '../http/mcp-exchanges.service';\nexport const x = McpExchanges;\n",
    'libs/mcp/src/mrtr/downward.ts':
      "import { UpstreamRouter } from '../relay/upstream-router';\nimport { MrtrSeal } from '../sealing/mrtr-seal';\nimport { ParkedCall } from './parked-call';\nexport const x = [UpstreamRouter, MrtrSeal, ParkedCall];\n",
    'libs/mcp/src/mcp-root.ts':
      "import { McpExchanges } from './http/mcp-exchanges.service';\nimport { GatewayError } from './errors/gateway-error';\nexport const x = [McpExchanges, GatewayError];\n",
  };
  let results: Map<string, LintResult>;

  beforeAll(() => {
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(join(dir, dirname(file)), { recursive: true });
      writeFileSync(join(dir, file), text);
    }
    writeFileSync(
      join(dir, 'eslint.config.mjs'),
      `import tseslint from ${JSON.stringify(join(REPO, 'node_modules/typescript-eslint/dist/index.js'))};\n` +
        `import { boundaries } from ${JSON.stringify(join(REPO, 'eslint.boundaries.mjs'))};\n` +
        'export default [{ files: ["**/*.ts"], languageOptions: { parser: tseslint.parser } }, ...boundaries];\n',
    );
    const run = spawnSync(
      process.execPath,
      [join(REPO, 'node_modules/eslint/bin/eslint.js'), '--format', 'json', '.'],
      { cwd: dir, encoding: 'utf8' },
    );
    const parsed = JSON.parse(run.stdout) as LintResult[];
    results = new Map(parsed.map((r) => [r.filePath.slice(dir.length + 1), r]));
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const errorsOf = (file: string) =>
    (results.get(file)?.messages ?? []).map((m) => `${m.ruleId ?? ''}: ${m.message}`);

  it.each([
    ['libs/mcp/src/refresh-by-discovery.ts', 'libs/mcp may import only'],
    ['libs/execution/src/lookup.ts', 'libs/execution may import only'],
    ['libs/registry/src/upward.ts', 'libs/registry may import only'],
    ['libs/wire/src/upward.ts', 'libs/wire may import only no other lib'],
    ['libs/wire/src/nest.ts', 'libs/wire is pure'],
    ['libs/mcp/src/deep.ts', 'through its entry point'],
    ['apps/gateway/src/deep.ts', 'through its entry point'],
    ['libs/mcp/src/handlers/by-path.ts', 'never by a relative path'],
    ['libs/mcp/src/second-door.ts', '@Inject(GATEWAY_CONFIG)'],
    ['apps/gateway/src/second-door.ts', '@Inject(GATEWAY_CONFIG)'],
    ['libs/mcp/src/relay/upward.ts', 'libs/mcp/src/relay may import only the folders below it'],
    [
      'libs/mcp/src/answers/to-root.ts',
      'libs/mcp/src/answers may import only the folders below it',
    ],
    ['libs/mcp/src/listen/to-front-door.ts', 'libs/mcp/src/listen may import only'],
  ])('refuses the import in %s', (file, reason) => {
    const errors = errorsOf(file);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('no-restricted-imports');
    expect(errors[0]).toContain(reason);
  });

  it('refuses `export *` in a lib entry point', () => {
    expect(errorsOf('libs/config/src/index.ts')).toEqual([
      expect.stringContaining('no-restricted-syntax'),
    ]);
  });

  it('lets a lib import what lies below it, its own files, and an entry point name its exports', () => {
    expect(errorsOf('libs/mcp/src/allowed.ts')).toEqual([]);
    expect(errorsOf('libs/registry/src/index.ts')).toEqual([]);
    expect(errorsOf('libs/config/src/own-door.ts')).toEqual([]);
  });

  it('lets a folder of libs/mcp import the folders below it and its own files, and the root files every folder', () => {
    expect(errorsOf('libs/mcp/src/mrtr/downward.ts')).toEqual([]);
    expect(errorsOf('libs/mcp/src/mcp-root.ts')).toEqual([]);
  });
});
