// class-transformer's @Type needs the metadata polyfill that Nest normally loads first.
import 'reflect-metadata';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ConfigValidationError } from './config-errors';
import { loadGatewayConfig } from './load-config';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function load(consoleTree: unknown) {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-gateway-console-config-'));
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
        ...(consoleTree === undefined ? {} : { console: consoleTree }),
      },
    }),
  );
  return loadGatewayConfig({ env: { MCP_CONFIG_FILE: 'gateway.yaml' }, cwd: dir, version: '1' });
}

function refusal(consoleTree: unknown): string {
  try {
    load(consoleTree);
  } catch (err) {
    if (err instanceof ConfigValidationError) return err.message;
    throw err;
  }
  throw new Error('the config was accepted');
}

describe('mcp.console: where the console calls /mcp (docs/operations.md §12)', () => {
  it('has no mcpUrl by default: the console derives it from its own host and PORT', () => {
    expect(load(undefined).mcp.console.mcpUrl).toBeUndefined();
  });

  it.each(['https://mcp.example.com/mcp', 'http://10.0.0.7:8080/mcp', 'http://[::1]:8080/mcp'])(
    'accepts the http(s) URL %s',
    (url) => {
      expect(load({ mcpUrl: url }).mcp.console.mcpUrl).toBe(url);
    },
  );

  it.each([
    'mcp.example.com/mcp',
    'ftp://mcp.example.com/mcp',
    'https://user:pw@mcp.example.com/mcp',
    'https://mcp.example.com/mcp?token=x',
    'https://mcp.example.com/mcp#x',
    '',
  ])('refuses %j at boot, naming mcp.console.mcpUrl', (url) => {
    expect(refusal({ mcpUrl: url })).toMatch(/mcp\.console\.mcpUrl: must be an http\(s\) URL/);
  });

  it('refuses a list where the console section belongs', () => {
    expect(refusal(['x'])).toMatch(/mcp\.console: must be a mapping/);
  });
});
