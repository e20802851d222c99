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

function load(management: unknown) {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-gateway-management-config-'));
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
        ...(management === undefined ? {} : { management }),
      },
    }),
  );
  return loadGatewayConfig({ env: { MCP_CONFIG_FILE: 'gateway.yaml' }, cwd: dir, version: '1' });
}

function refusal(management: unknown): string {
  try {
    load(management);
  } catch (err) {
    if (err instanceof ConfigValidationError) return err.message;
    throw err;
  }
  throw new Error('the config was accepted');
}

describe('mcp.management.allowedHosts (the management port Host check)', () => {
  it('is empty by default: only loopback names and IP addresses are served', () => {
    expect(load(undefined).mcp.management.allowedHosts).toEqual([]);
  });

  it('accepts names with and without a port', () => {
    const hosts = ['gw-mgmt.example.com', 'ops.example:9443', 'any.example:*', '[fd00::1]:9090'];
    expect(load({ allowedHosts: hosts }).mcp.management.allowedHosts).toEqual(hosts);
  });

  it.each(['*.example.com', 'http://gw.example', 'gw.example/console', 'gw.example:99999'])(
    'refuses %j at boot, naming the entry',
    (entry) => {
      expect(refusal({ allowedHosts: ['ok.example', entry] })).toContain(
        `mcp.management.allowedHosts[1]: must be a host name "name", "name:port" or "name:*"`,
      );
    },
  );

  it('refuses a value that is not a list, or an entry that is not a string', () => {
    expect(refusal({ allowedHosts: 'gw.example' })).toMatch(
      /mcp\.management\.allowedHosts: must be a list/,
    );
    expect(refusal({ allowedHosts: [9090] })).toMatch(
      /mcp\.management\.allowedHosts.*each entry must be a string/,
    );
    expect(refusal(['x'])).toMatch(/mcp\.management: must be a mapping/);
    expect(refusal({ allowedHost: [] })).toMatch(/mcp\.management\.allowedHost/);
  });
});
