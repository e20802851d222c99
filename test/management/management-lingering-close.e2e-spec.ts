import { request, type IncomingMessage } from 'node:http';
import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { TestToolService } from '../support/tool-service';

/**
 * The management port answers some requests before reading their body: the Host refusal (421,
 * "answered 421 before any route runs, whatever the path, method or credential, and the
 * connection is closed", docs/security.md) and /admin's 413 ("a body over fastify's 1 MiB
 * limit", operations §15). Closing at once with the body unread makes the kernel reset the
 * connection, and a client still sending loses the answer; like /mcp's 413, these refusals
 * end with a lingering close (RFC 9112 §9.6) and the client reads them.
 */

const ADMIN_TOKEN = 'lingering-close-admin-token-0123456789abcdef';

interface Outcome {
  readonly status?: number;
  readonly error?: string;
}

/** POSTs `bytes` of body in 64 KiB pieces; resolves with the status read, or the error met first. */
function postBig(
  port: number,
  path: string,
  headers: Record<string, string>,
  bytes: number,
): Promise<Outcome> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (o: Outcome): void => {
      if (settled) return;
      settled = true;
      resolve(o);
    };
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path,
        headers: {
          'content-type': 'application/json',
          'content-length': String(bytes),
          ...headers,
        },
        agent: false,
      },
      (res: IncomingMessage) => {
        res.resume();
        settle({ status: res.statusCode });
        req.destroy();
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => {
      // an error after the answer was read is no loss; one before it is
      setTimeout(() => settle({ error: err.code ?? err.message }), 200);
    });
    const piece = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    const more = (): void => {
      while (sent < bytes && !req.destroyed) {
        const n = Math.min(piece.length, bytes - sent);
        sent += n;
        if (!req.write(n === piece.length ? piece : piece.subarray(0, n))) {
          req.once('drain', more);
          return;
        }
      }
      if (!req.destroyed) req.end();
    };
    more();
    setTimeout(() => settle({ error: 'no answer in 20 s' }), 20_000);
  });
}

describe('refusals on the management port before the body is read', () => {
  let service: TestToolService;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    service = await TestToolService.start(manifest('shop', [tool({ name: 'shop.ping' })]));
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('shop', service, 'shop.')]),
      env: { MCP_ADMIN_TOKEN: ADMIN_TOKEN },
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await service?.stop();
  });

  const TRIES = 10;
  const BYTES = 32 * 1024 * 1024;

  it(`the same client reads /mcp's 413 (${TRIES} tries)`, async () => {
    const outcomes: Outcome[] = [];
    for (let i = 0; i < TRIES; i++)
      outcomes.push(
        await postBig(
          gateway.mcpPort,
          '/mcp',
          { host: '127.0.0.1', accept: 'application/json, text/event-stream' },
          BYTES,
        ),
      );
    expect(outcomes.filter((o) => o.status !== 413)).toEqual([]);
  });

  it(`a POST with a foreign Host and a 32 MiB body reads the 421 (${TRIES} tries)`, async () => {
    const outcomes: Outcome[] = [];
    for (let i = 0; i < TRIES; i++)
      outcomes.push(
        await postBig(
          gateway.managementPort,
          '/admin/upstreams',
          { host: 'attacker.example:9090' },
          BYTES,
        ),
      );
    expect(outcomes.filter((o) => o.status !== 421)).toEqual([]);
  });

  it(`an /admin POST over the 1 MiB limit (32 MiB) reads the 413 (${TRIES} tries)`, async () => {
    const outcomes: Outcome[] = [];
    for (let i = 0; i < TRIES; i++)
      outcomes.push(
        await postBig(
          gateway.managementPort,
          '/admin/upstreams',
          {
            host: `127.0.0.1:${gateway.managementPort}`,
            authorization: `Bearer ${ADMIN_TOKEN}`,
          },
          BYTES,
        ),
      );
    expect(outcomes.filter((o) => o.status !== 413)).toEqual([]);
  });
});
