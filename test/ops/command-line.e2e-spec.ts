import { spawnSync } from 'node:child_process';
import { GATEWAY_ENTRY, REPO_ROOT } from '../support/gateway-process';

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
