import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { REPO_ROOT, waitFor } from '../support/gateway-process';
import { freePort } from '../support/redis';

/** Whether something accepts connections on 127.0.0.1:port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * `npm start` (scripts/start-local.mjs): the sample Tool Service, the sample MCP server and the
 * gateway; when the starter dies, even killed outright, none of them is left on its port.
 */
/**
 * Starts `command args` as `npm start` runs, on four free ports, and waits until it prints the
 * console's URL with all four listening; `detached`: in a process group of its own.
 */
async function startLocal(
  command: string,
  args: readonly string[],
  detached: boolean,
): Promise<{ process: ChildProcess; ports: number[] }> {
  const ports = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const [sample, sampleMcp, mcp, management] = ports;
  let out = '';
  const started = spawn(command, args, {
    cwd: REPO_ROOT,
    detached,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      SAMPLE_PORT: String(sample),
      SAMPLE_MCP_PORT: String(sampleMcp),
      PORT: String(mcp),
      MANAGEMENT_PORT: String(management),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.stdout?.on('data', (d: Buffer) => (out += d.toString('utf8')));
  started.stderr?.on('data', (d: Buffer) => (out += d.toString('utf8')));
  await waitFor(
    () => out.includes('[start] console:'),
    40_000,
    () => `no console URL:\n${out}`,
  );
  for (const port of ports) expect(await listening(port)).toBe(true);
  return { process: started, ports };
}

/** Waits until nothing listens on any of the ports any more. */
async function allStopped(ports: readonly number[], what: string): Promise<void> {
  await waitFor(
    async () => (await Promise.all(ports.map(listening))).every((up) => !up),
    15_000,
    () => `a process started by npm start still listens after ${what}`,
  );
}

describe('npm start leaves nothing running when it is killed', () => {
  let starter: ChildProcess | undefined;
  /** Process groups started by a case (npm's own), cleaned up whatever the case did. */
  const groups: number[] = [];

  afterAll(() => {
    starter?.kill('SIGKILL');
    for (const group of groups) {
      try {
        process.kill(-group, 'SIGKILL');
      } catch {
        // the group is gone already
      }
    }
  });

  it('SIGKILL of the starter stops the gateway and both samples', async () => {
    const started = await startLocal(
      process.execPath,
      [join(REPO_ROOT, 'scripts/start-local.mjs'), '--no-build'],
      false,
    );
    starter = started.process;
    starter.kill('SIGKILL');
    await allStopped(started.ports, 'the starter was killed');
  }, 60_000);

  // npm runs the script through `sh -c`, which execs the starter (`exec node …` in
  // package.json): a SIGINT, SIGTERM or SIGHUP npm forwards reaches the starter (dash held a
  // SIGINT when it waited for its child instead), and a SIGKILL of npm leaves the starter with
  // another parent, which it watches for
  it.each(['SIGKILL', 'SIGHUP', 'SIGINT', 'SIGTERM'] as const)(
    '%s of the npm process of `npm start` stops the gateway and both samples',
    async (signal) => {
      const npm = await startLocal('npm', ['start', '--', '--no-build'], true);
      groups.push(npm.process.pid!);
      npm.process.kill(signal);
      await allStopped(npm.ports, `npm got ${signal}`);
    },
    60_000,
  );

  it('SIGKILL of the starter while the gateway is still booting leaves nothing behind either', async () => {
    const ports = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    const [sample, sampleMcp, mcp, management] = ports;
    const started = spawn(
      process.execPath,
      [join(REPO_ROOT, 'scripts/start-local.mjs'), '--no-build'],
      {
        cwd: REPO_ROOT,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '/tmp',
          SAMPLE_PORT: String(sample),
          SAMPLE_MCP_PORT: String(sampleMcp),
          PORT: String(mcp),
          MANAGEMENT_PORT: String(management),
        },
        stdio: 'ignore',
      },
    );
    starter = started;
    /** The starter's child running the gateway, once it is spawned. */
    const gatewayChild = (): boolean => {
      for (const task of readdirSync(`/proc/${started.pid}/task`)) {
        const children = readFileSync(`/proc/${started.pid}/task/${task}/children`, 'utf8');
        for (const pid of children.split(' ').filter(Boolean)) {
          try {
            if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('dist/apps/gateway/main.js'))
              return true;
          } catch {
            // gone meanwhile
          }
        }
      }
      return false;
    };
    await waitFor(gatewayChild, 40_000, () => 'the starter never started the gateway');
    // the gateway is booting (its ports are not open yet): the starter dies now
    started.kill('SIGKILL');
    // the gateway's ports must open (if the boot goes on) only to close again, or never
    await new Promise((r) => setTimeout(r, 3000));
    await allStopped(ports, 'the starter was killed during the boot');
  }, 60_000);

  it('--help prints the usage and starts nothing; an unknown option is refused', () => {
    const script = join(REPO_ROOT, 'scripts/start-local.mjs');
    const help = spawnSync(process.execPath, [script, '--help'], { encoding: 'utf8' });
    expect([help.status, help.stdout]).toEqual([0, expect.stringMatching(/MANAGEMENT_PORT/)]);
    const typo = spawnSync(process.execPath, [script, '--no-buld'], { encoding: 'utf8' });
    expect([typo.status, typo.stderr]).toEqual([
      2,
      expect.stringMatching(/unknown option --no-buld/),
    ]);
  });
});
