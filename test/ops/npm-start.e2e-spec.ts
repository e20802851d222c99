import { spawn, type ChildProcess } from 'node:child_process';
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
    const ports = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    const [sample, sampleMcp, mcp, management] = ports;
    let out = '';
    starter = spawn(process.execPath, [join(REPO_ROOT, 'scripts/start-local.mjs'), '--no-build'], {
      cwd: REPO_ROOT,
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
    starter.stdout?.on('data', (d: Buffer) => (out += d.toString('utf8')));
    starter.stderr?.on('data', (d: Buffer) => (out += d.toString('utf8')));
    await waitFor(
      () => out.includes('[start] console:'),
      40_000,
      () => `no console URL:\n${out}`,
    );
    for (const port of ports) expect(await listening(port)).toBe(true);
    starter.kill('SIGKILL');
    await waitFor(
      async () => (await Promise.all(ports.map(listening))).every((up) => !up),
      15_000,
      () => 'a process started by npm start still listens after the starter was killed',
    );
  }, 60_000);

  // npm runs the script through `sh -c`; Debian's sh (dash) does not exec, so that shell, not
  // npm, is the starter's parent and outlives npm: the starter watches npm as well
  it.each(['SIGKILL', 'SIGHUP'] as const)(
    '%s of the npm process of `npm start` stops the gateway and both samples',
    async (signal) => {
      const ports = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
      const [sample, sampleMcp, mcp, management] = ports;
      let out = '';
      const npm = spawn('npm', ['start', '--', '--no-build'], {
        cwd: REPO_ROOT,
        detached: true,
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
      groups.push(npm.pid!);
      npm.stdout?.on('data', (d: Buffer) => (out += d.toString('utf8')));
      npm.stderr?.on('data', (d: Buffer) => (out += d.toString('utf8')));
      await waitFor(
        () => out.includes('[start] console:'),
        40_000,
        () => `no console URL:\n${out}`,
      );
      for (const port of ports) expect(await listening(port)).toBe(true);
      npm.kill(signal);
      await waitFor(
        async () => (await Promise.all(ports.map(listening))).every((up) => !up),
        15_000,
        () => `a process started by npm start still listens after npm got ${signal}`,
      );
    },
    60_000,
  );
});
