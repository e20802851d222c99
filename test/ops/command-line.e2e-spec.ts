import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  GATEWAY_ENTRY,
  GatewayProcess,
  REPO_ROOT,
  TEST_SESSION_KEYS,
} from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { TestToolService } from '../support/tool-service';

/** The gateway's command line: it takes no arguments but `--help` and `--version`. */
describe('node dist/apps/gateway/main.js arguments', () => {
  const run = (...args: string[]) =>
    spawnSync(process.execPath, [GATEWAY_ENTRY, ...args], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', PORT: '0', MANAGEMENT_PORT: '0' },
      encoding: 'utf8',
      timeout: 15_000,
    });

  it('--help prints the usage and the settings it reads, and exits 0 without listening', () => {
    const out = run('--help');
    expect(out.status).toBe(0);
    expect(out.stdout).toContain('Usage: node dist/apps/gateway/main.js');
    expect(out.stdout).toContain('MCP_CONFIG_FILE');
    expect(out.stdout).not.toContain('listening:');
  });

  it('--help names every variable of the environment table in docs/operations.md', () => {
    const docs = readFileSync(join(REPO_ROOT, 'docs', 'operations.md'), 'utf8');
    const table = docs.slice(docs.indexOf('### Environment'), docs.indexOf('### The `mcp:` tree'));
    const names = [...table.matchAll(/^\| `([A-Z_]+)`/gm)].map((m) => m[1]!);
    expect(names.length).toBeGreaterThan(8);
    const help = run('--help').stdout;
    for (const name of names) expect(help).toContain(name);
  });

  it('--version prints the version', () => {
    const out = run('--version');
    expect(out.status).toBe(0);
    expect(out.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('any other argument stops it with a plain line (exit 2) instead of booting', () => {
    const out = run('--port', '9999');
    expect(out.status).toBe(2);
    expect(out.stderr).toContain('Unknown argument: --port 9999');
    expect(out.stdout).not.toContain('listening:');
  });
});

describe('a short MCP_ADMIN_TOKEN outside local (docs/operations.md §1)', () => {
  it('is taken, with a warning at boot that names it guessable', async () => {
    const service = await TestToolService.start(manifest('a', [tool({ name: 'a.t' })]));
    const gateway = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('a', service, 'a.')]),
      env: {
        APP_PROFILE: 'staging',
        MCP_ADMIN_TOKEN: 'short',
        MCP_SESSION_KEYS: TEST_SESSION_KEYS,
      },
      waitReady: true,
    });
    try {
      await gateway.waitForOutput(/MCP_ADMIN_TOKEN has fewer than 32 characters/);
      const res = await fetch(`${gateway.managementUrl}/admin/upstreams`, {
        headers: { authorization: 'Bearer short' },
      });
      expect(res.status).toBe(200);
    } finally {
      await gateway.stop();
      await service.stop();
    }
  });
});

describe('a config file of its own without APP_PROFILE (README "Configuration")', () => {
  it('boots on the local profile and says so, with what that profile does', async () => {
    const service = await TestToolService.start(manifest('a', [tool({ name: 'a.t' })]));
    const unset = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('a', service, 'a.')]),
      env: { APP_PROFILE: '' },
      waitReady: true,
    });
    const chosen = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('a', service, 'a.')]),
      env: { APP_PROFILE: 'local' },
      waitReady: true,
    });
    try {
      await unset.waitForOutput(
        /APP_PROFILE is not set: the local profile applies to MCP_CONFIG_FILE too/,
      );
      expect(unset.output).toContain('profile local');
      // a profile chosen on purpose, local included, is not warned about
      expect(chosen.output).not.toContain('APP_PROFILE is not set');
    } finally {
      await Promise.all([unset.stop(), chosen.stop()]);
      await service.stop();
    }
  });
});

describe('MCP_HEAP_GROWING_PERCENT (docs/operations.md §1)', () => {
  it('stops the boot with one line when it is no integer 1..300', async () => {
    const gateway = GatewayProcess.spawn({ env: { MCP_HEAP_GROWING_PERCENT: '0' } });
    expect(await gateway.waitForExit()).toBe(1);
    expect(gateway.output).toContain(
      'MCP_HEAP_GROWING_PERCENT: must be an integer 1..300 (got "0")',
    );
    expect(gateway.output).toContain('The gateway did not start.');
  });

  it('boots with the value the chart and npm start set, and serves', async () => {
    const service = await TestToolService.start(manifest('a', [tool({ name: 'a.t' })]));
    const gateway = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('a', service, 'a.')]),
      env: { MCP_HEAP_GROWING_PERCENT: '100' },
      waitReady: true,
    });
    try {
      const res = await fetch(gateway.mcpUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(res.status).toBe(200);
      expect(
        ((await res.json()) as { result: { tools: { name: string }[] } }).result.tools.map(
          (t) => t.name,
        ),
      ).toEqual(['a.t']);
    } finally {
      await gateway.stop();
      await service.stop();
    }
  });
});
