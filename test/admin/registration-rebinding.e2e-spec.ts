import {
  accessSync,
  appendFileSync,
  closeSync,
  constants,
  ftruncateSync,
  openSync,
  readFileSync,
  writeSync,
} from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { networkInterfaces } from 'node:os';
import { gatewayConfig, upstream as configured } from '../support/fixtures';
import { waitFor } from '../support/gateway-process';
import { V1Upstream, V2Upstream } from '../support/mcp-upstreams';
import { callTool } from '../support/rpc';
import { stopAfterEach } from '../support/cleanup';
import { ADMIN_TOKEN, admin, startGateway, waitForState } from './admin-support';

/**
 * DNS rebinding against a runtime registration (docs/security.md, "Runtime registrations"):
 * a name that answers an allowed address when it is registered and a loopback address
 * afterwards must not get the gateway to connect to loopback. The check is made at connect,
 * on the address dialled, for every connection of the registration.
 *
 * The rebinding is real name resolution: the gateway's getaddrinfo reads /etc/hosts on every
 * lookup, so a line of this test's own there is a TTL-0 name it controls. The line is
 * appended once (one O_APPEND write), its address overwritten in place (same length, one
 * write) and cut off at the end (ftruncate to the original length): the file never lacks a
 * line it had, for the other processes of the machine. The "public" address is a
 * non-loopback address of this machine (192.0.2.2 in the sandbox), which the guard allows;
 * the upstream listens there and a plain TCP server listens on 127.0.0.1 on the same port,
 * counting connections. Without a writable /etc/hosts or such an address, the test is
 * skipped (and says why).
 */

const HOSTS = '/etc/hosts';
/** Wide enough for any IPv4 address: the rebinding overwrites the field in place. */
const FIELD = 15;

function publicAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces()))
    for (const entry of list ?? [])
      if (
        entry.family === 'IPv4' &&
        !entry.internal &&
        !entry.address.startsWith('169.254.') &&
        !entry.address.startsWith('127.')
      )
        return entry.address;
  return undefined;
}

function hostsWritable(): boolean {
  try {
    accessSync(HOSTS, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** A line of /etc/hosts this test owns: its name, and its address changed in place. */
class HostsLine {
  private readonly originalLength: number;
  private readonly offset: number;

  constructor(
    readonly name: string,
    address: string,
  ) {
    const original = readFileSync(HOSTS);
    this.originalLength = original.length;
    const lead = original.length > 0 && original[original.length - 1] !== 0x0a ? '\n' : '';
    appendFileSync(HOSTS, `${lead}${address.padEnd(FIELD)} ${name}\n`);
    this.offset = this.originalLength + lead.length;
  }

  point(address: string): void {
    const fd = openSync(HOSTS, 'r+');
    try {
      writeSync(fd, Buffer.from(address.padEnd(FIELD)), 0, FIELD, this.offset);
    } finally {
      closeSync(fd);
    }
  }

  remove(): void {
    const fd = openSync(HOSTS, 'r+');
    try {
      ftruncateSync(fd, this.originalLength);
    } finally {
      closeSync(fd);
    }
  }
}

/** A TCP server on 127.0.0.1 that only counts the connections it is offered. */
async function loopbackListener(port = 0): Promise<{ server: Server; connections: () => number }> {
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return { server, connections: () => connections };
}

const address = publicAddress();
const runnable = address !== undefined && hostsWritable();
if (!runnable)
  console.warn(
    `registration-rebinding skipped: ${address === undefined ? 'no non-loopback IPv4 address' : `${HOSTS} is not writable`}`,
  );

(runnable ? describe : describe.skip)('registered upstream, DNS rebinding', () => {
  const track = stopAfterEach();
  let hosts: HostsLine | undefined;
  let loopback: { server: Server; connections: () => number } | undefined;
  const name = `dnsguard-rebind-${process.pid}.test`;

  // never leave the line behind, whatever failed
  const restore = (): void => {
    hosts?.remove();
    hosts = undefined;
  };
  process.once('exit', restore);

  afterEach(async () => {
    restore();
    await new Promise<void>((resolve) =>
      loopback ? loopback.server.close(() => resolve()) : resolve(),
    );
  });

  it('is accepted while its name answers an allowed address, then refused at connect once the name answers 127.0.0.1: UpstreamAddressRefusedError, nothing reaches loopback', async () => {
    const original = readFileSync(HOSTS);
    // the same port on both addresses, as a rebinding attacker's name keeps its port
    loopback = await loopbackListener();
    const port = (loopback.server.address() as AddressInfo).port;
    const upstream = track(await V1Upstream.start({ host: address, port }));
    hosts = new HostsLine(name, address as string);
    // a configured upstream on loopback: operators may point theirs anywhere (no connect guard)
    const calc = track(await V2Upstream.start());

    const gateway = await startGateway(
      {
        mcp: gatewayConfig([], { upstreams: [configured('calc', calc.url)] }),
        // staging: loopback is refused (mcp.admin.allowLoopback defaults to false there)
        env: { MCP_ADMIN_TOKEN: ADMIN_TOKEN, APP_PROFILE: 'staging' },
        waitReady: true,
      },
      track,
    );
    const url = `http://${name}:${port}/mcp`;
    // the guard refuses the loopback address the name will answer later, given directly
    const direct = await admin(gateway, 'POST', '/admin/upstreams', {
      id: 'rebound',
      url: `http://127.0.0.1:${port}/mcp`,
    });
    expect(direct.status).toBe(400);
    const posted = await admin(gateway, 'POST', '/admin/upstreams', { id: 'rebound', url });
    expect(posted.status).toBe(202);
    await waitForState(gateway, 'rebound', 'ACTIVE');
    const before = await callTool(gateway.mcpUrl, 'rebound__repo_search', { query: 'x' });
    expect(before.result.isError).toBeUndefined();
    expect(upstream.seen.searches).toEqual([{ query: 'x' }]);

    // TTL 0: the name now answers loopback; the upstream's own connections end (it goes away)
    hosts.point('127.0.0.1');
    await upstream.stop();

    // a call: a new connection, refused at the address it would dial
    const call = await callTool(gateway.mcpUrl, 'rebound__repo_search', { query: 'y' });
    const text = JSON.stringify(call);
    expect(text).toContain(
      "the upstream's host resolved to a loopback address when connecting, which a registered upstream may not reach",
    );
    expect(text).not.toContain('127.0.0.1');
    expect(text).not.toContain(name);

    // the next pull (an unknown tool asks for a round): the registration says why
    await callTool(gateway.mcpUrl, 'no-such-tool');
    let view: any;
    await waitFor(
      async () => {
        view = (await admin(gateway, 'GET', '/admin/upstreams/rebound')).body;
        return (
          typeof view?.reason === 'string' && view.reason.startsWith('UpstreamAddressRefusedError')
        );
      },
      20_000,
      () => `no refusal in the registration: ${JSON.stringify(view)}\n${gateway.output}`,
    );
    // a failed later pull keeps the last good lists (operations §15)
    expect(view.state).toBe('ACTIVE');
    expect(view.reason).toContain('a loopback address');
    const status: any = await (await fetch(`${gateway.managementUrl}/actuator/upstreams`)).json();
    expect(status.upstreams.find((u: { id: string }) => u.id === 'rebound')).toMatchObject({
      status: 'degraded',
      lastErrorType: 'UpstreamAddressRefusedError',
    });
    // the log line names the upstream, the host and the address it refused (waited for: the
    // child's stdout may reach this process after the view that reported the failure)
    const refusedLine = new RegExp(
      `^Registered upstream rebound: connection refused \\(UpstreamAddressRefusedError\\): ` +
        `host "${name.replace(/\./g, '\\.')}" resolved to 127\\.0\\.0\\.1 at connect, a loopback address`,
    );
    // whole lines only: the last one may still be arriving
    const messages = (): string[] =>
      gateway.stdout
        .split('\n')
        .slice(0, -1)
        .filter((l) => l.startsWith('{'))
        .map((l) => String(JSON.parse(l).msg));
    await waitFor(
      () => messages().some((m) => refusedLine.test(m)),
      10_000,
      () => `no refusal logged:\n${gateway.output}`,
    );
    // the loopback server was never offered a connection, and the gateway is up
    expect(loopback.connections()).toBe(0);
    expect((await gateway.readiness()).status).toBe(200);
    const add = await callTool(gateway.mcpUrl, 'calc__add', { a: 2, b: 3 });
    expect(add.result.isError).toBeUndefined();
    expect(gateway.exitCode).toBeNull();

    restore();
    expect(readFileSync(HOSTS).equals(original)).toBe(true);
  });
});
