import http from 'node:http';
import type { LookupAddress } from 'node:dns';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { Agent } from 'undici';
import {
  AddressRules,
  parseAddressRange,
  type AddressRange,
  type TokenExchangeAuthorization,
} from '@app/config';
import { SourceCredentialError, SourceCredentials } from '@app/identity';
import {
  guardedConnector,
  guardedLookup,
  UpstreamAddressRefusedError,
  type LookupAll,
} from './connect-guard';
import { exchange } from './http-exchange';
import { UpstreamFailure } from './upstream-types';

function rules(options: { loopback?: boolean; allowed?: string[] } = {}): AddressRules {
  return new AddressRules({
    allowLoopback: options.loopback ?? false,
    allowedRanges: (options.allowed ?? []).map((t) => parseAddressRange(t) as AddressRange),
  });
}

/**
 * A resolver answering from a table that the test changes between connections: the DNS
 * rebinding of a TTL-0 name (one answer at registration, another at the next connect).
 * Counts the lookups, so a test can tell a refused connect happened at the lookup.
 */
class Rebinding {
  answers: Record<string, string[]> = {};
  lookups = 0;

  readonly resolve: LookupAll = (host, _options, callback) => {
    this.lookups++;
    const found = this.answers[host];
    setImmediate(() =>
      found === undefined
        ? callback(
            Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }),
            [],
          )
        : callback(
            null,
            found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
          ),
    );
  };
}

/** A real HTTP server on 127.0.0.1 that counts the TCP connections it accepted. */
async function countingServer(): Promise<{
  server: http.Server;
  port: number;
  connections: () => number;
  requests: () => number;
}> {
  let connections = 0;
  let requests = 0;
  const server = http.createServer((_req, res) => {
    requests++;
    res.writeHead(200, { 'content-type': 'application/json', connection: 'close' });
    res.end('{"ok":true}');
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    requests: () => requests,
  };
}

function lookupOnce(
  lookup: ReturnType<typeof guardedLookup>,
  host: string,
  all: boolean,
): Promise<{
  err: NodeJS.ErrnoException | null;
  address: string | LookupAddress[];
  family?: number;
}> {
  return new Promise((resolve) =>
    lookup(host, { all }, (err, address, family) => resolve({ err, address, family })),
  );
}

describe('guardedLookup (docs/security.md, "Runtime registrations")', () => {
  it('answers what the resolver answered when every address passes, in the form node:net asked for', async () => {
    const dns = new Rebinding();
    dns.answers['tools.example'] = ['10.0.0.5', 'fd12::5'];
    const refused: UpstreamAddressRefusedError[] = [];
    const lookup = guardedLookup(rules(), (e) => refused.push(e), dns.resolve);
    expect(await lookupOnce(lookup, 'tools.example', true)).toEqual({
      err: null,
      address: [
        { address: '10.0.0.5', family: 4 },
        { address: 'fd12::5', family: 6 },
      ],
      family: undefined,
    });
    expect(await lookupOnce(lookup, 'tools.example', false)).toEqual({
      err: null,
      address: '10.0.0.5',
      family: 4,
    });
    expect(refused).toEqual([]);
  });

  it('refuses a name once it answers a refused address, with the registration rules (one bad address refuses)', async () => {
    const dns = new Rebinding();
    const refused: UpstreamAddressRefusedError[] = [];
    const lookup = guardedLookup(rules(), (e) => refused.push(e), dns.resolve);
    const cases: [string[], string][] = [
      [['127.0.0.1'], 'a loopback address'],
      [['10.0.0.5', '169.254.169.254'], 'a cloud metadata address'],
      [['::ffff:127.0.0.1'], 'a loopback address'],
      [['64:ff9b::a9fe:a9fe'], 'a cloud metadata address'],
      [['fe80::1'], 'a link-local address'],
      [['0.0.0.0'], 'an unspecified address'],
    ];
    for (const [answer, className] of cases) {
      dns.answers['rebind.example'] = answer;
      for (const all of [true, false]) {
        const { err } = await lookupOnce(lookup, 'rebind.example', all);
        expect(err).toBeInstanceOf(UpstreamAddressRefusedError);
        expect((err as UpstreamAddressRefusedError).code).toBe('ERR_UPSTREAM_ADDRESS_REFUSED');
        expect((err as UpstreamAddressRefusedError).refusal.className).toBe(className);
        expect(err?.message).toContain('host "rebind.example" resolved to');
      }
    }
    expect(refused).toHaveLength(cases.length * 2);
  });

  it('allowLoopback and allowedAddressRanges lift it as they lift the registration guard', async () => {
    const dns = new Rebinding();
    dns.answers['local.example'] = ['127.0.0.1', '::1'];
    dns.answers['meta.example'] = ['169.254.169.254'];
    const none = (): void => undefined;
    expect(
      (
        await lookupOnce(
          guardedLookup(rules({ loopback: true }), none, dns.resolve),
          'local.example',
          true,
        )
      ).err,
    ).toBeNull();
    expect(
      (
        await lookupOnce(
          guardedLookup(rules({ loopback: true }), none, dns.resolve),
          'meta.example',
          true,
        )
      ).err,
    ).toBeInstanceOf(UpstreamAddressRefusedError);
    expect(
      (
        await lookupOnce(
          guardedLookup(rules({ allowed: ['169.254.169.254/32'] }), none, dns.resolve),
          'meta.example',
          false,
        )
      ).err,
    ).toBeNull();
  });

  it('a resolver error passes through unchanged (the usual ENOTFOUND), and an empty answer is ENOTFOUND', async () => {
    const dns = new Rebinding();
    dns.answers['empty.example'] = [];
    const lookup = guardedLookup(rules(), () => undefined, dns.resolve);
    expect((await lookupOnce(lookup, 'nowhere.example', true)).err?.code).toBe('ENOTFOUND');
    expect((await lookupOnce(lookup, 'empty.example', true)).err?.code).toBe('ENOTFOUND');
  });

  it('in net.connect, a name rebound to loopback is never dialled: the server sees no connection', async () => {
    const target = await countingServer();
    try {
      const dns = new Rebinding();
      dns.answers['rebind.example'] = ['127.0.0.1'];
      const lookup = guardedLookup(rules(), () => undefined, dns.resolve);
      const err = await new Promise<Error>((resolve, reject) => {
        const socket: Socket = connect({ host: 'rebind.example', port: target.port, lookup });
        socket.on('connect', () => reject(new Error('connected')));
        socket.on('error', resolve);
      });
      expect(err).toBeInstanceOf(UpstreamAddressRefusedError);
      expect(dns.lookups).toBe(1);
      expect(target.connections()).toBe(0);
      // the same lookup with loopback allowed reaches it: the hook is what refused
      const open = guardedLookup(rules({ loopback: true }), () => undefined, dns.resolve);
      await new Promise<void>((resolve, reject) => {
        const socket = connect({ host: 'rebind.example', port: target.port, lookup: open });
        socket.on('connect', () => {
          socket.destroy();
          resolve();
        });
        socket.on('error', reject);
      });
      await new Promise((r) => setImmediate(r));
      expect(target.connections()).toBe(1);
    } finally {
      target.server.close();
    }
  });
});

describe('guardedConnector in an undici Agent (what a registered upstream connects through)', () => {
  const request = (url: string) => ({
    url: new URL(url),
    method: 'POST' as const,
    headers: { 'content-type': 'application/json' },
    body: '{}',
    timeoutMillis: 5_000,
    timeoutScope: 'whole' as const,
    deadlineMillis: 5_000,
    connectMillis: 5_000,
    maxBytes: 1_000_000,
    capScope: 'total' as const,
  });

  it('a name that rebinds between two connections: the first reaches the allowed address, the second is refused at connect, as address-refused', async () => {
    const target = await countingServer();
    const dns = new Rebinding();
    const refused: UpstreamAddressRefusedError[] = [];
    // 127.0.0.1 stands for the public address it answered at registration (allowed here)
    const agent = new Agent({
      connect: guardedConnector(
        rules({ allowed: ['127.0.0.1/32'] }),
        (e) => refused.push(e),
        dns.resolve,
      ),
    });
    try {
      dns.answers['rebind.example'] = ['127.0.0.1'];
      const first = await exchange(agent, request(`http://rebind.example:${target.port}/mcp`));
      expect(first.kind).toBe('body');
      expect(target.requests()).toBe(1);
      // TTL 0: the next connection (the server closed the last one) resolves afresh
      dns.answers['rebind.example'] = ['127.0.0.1', '169.254.169.254'];
      const second = await exchange(
        agent,
        request(`http://rebind.example:${target.port}/mcp`),
      ).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(second).toBeInstanceOf(UpstreamFailure);
      expect((second as UpstreamFailure).kind).toBe('address-refused');
      // the client-safe words name the class, never the host or the address
      expect((second as UpstreamFailure).message).toContain('a cloud metadata address');
      expect((second as UpstreamFailure).message).not.toMatch(/rebind|169\.254|127\./);
      expect(refused.map((e) => e.refusal.address)).toEqual(['169.254.169.254']);
      expect(target.connections()).toBe(1);
      expect(target.requests()).toBe(1);
    } finally {
      await agent.close();
      target.server.close();
    }
  });

  it('an IP-address URL (which node:net dials without a lookup) is checked before the socket opens', async () => {
    const target = await countingServer();
    const dns = new Rebinding();
    const agent = new Agent({ connect: guardedConnector(rules(), () => undefined, dns.resolve) });
    try {
      for (const url of [
        `http://127.0.0.1:${target.port}/mcp`,
        `http://[::ffff:127.0.0.1]:${target.port}/mcp`,
      ]) {
        const err = await exchange(agent, request(url)).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect((err as UpstreamFailure).kind).toBe('address-refused');
      }
      expect(dns.lookups).toBe(0);
      expect(target.connections()).toBe(0);
    } finally {
      await agent.close();
      target.server.close();
    }
  });

  it("a token endpoint reached through the guarded Agent is refused the same way, as the token request's own error", async () => {
    const target = await countingServer();
    const dns = new Rebinding();
    dns.answers['idp.example'] = ['127.0.0.1'];
    const agent = new Agent({ connect: guardedConnector(rules(), () => undefined, dns.resolve) });
    const auth: TokenExchangeAuthorization = {
      mode: 'tokenExchange',
      tokenEndpoint: `http://idp.example:${target.port}/token`,
      clientId: 'gateway',
      clientSecret: 'secret',
      audience: 'https://tools.example',
    };
    try {
      const err = await new SourceCredentials().forGateway(auth, agent).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(SourceCredentialError);
      expect((err as SourceCredentialError).addressRefused).toBe(true);
      expect((err as SourceCredentialError).message).toContain('UpstreamAddressRefusedError');
      expect(target.connections()).toBe(0);
    } finally {
      await agent.close();
      target.server.close();
    }
  });
});
