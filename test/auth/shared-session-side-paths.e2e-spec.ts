import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { McpServer as V1McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { McpServer as V2McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { GatewayProcess, TEST_SESSION_KEYS, waitFor } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { envelopeMeta, MODERN } from '../support/modern-rpc';
import { TestAuthorizationServer } from '../support/oidc-provider';
import { openLegacySession, postRaw, rpc } from '../support/rpc';
import { SseReader } from '../support/sse-reader';

const RESOURCE = 'https://gateway.test/mcp';

type Notify = (notification: {
  method: 'notifications/progress';
  params: { progressToken: string | number; progress: number; total: number; message: string };
}) => Promise<void>;

/** What a tool is handed beside its arguments, by the v1 SDK or the v2 SDK. */
interface ToolExtra {
  readonly _meta?: { readonly progressToken?: string | number };
  readonly sendNotification?: Notify;
  /** Aborted when the client cancels the request (the v1 SDK). */
  readonly signal?: AbortSignal;
  readonly mcpReq?: {
    readonly _meta?: { readonly progressToken?: string | number };
    readonly notify: Notify;
  };
}

/**
 * What a server may do with progress tokens, which the requester must keep unique across its
 * active requests (MCP 2025-11-25 basic/utilities/progress): the tool `job` files its
 * stream's sender under its request's token in a table its worker reports through (one table
 * per 2025 session; one per server for the stateless 2026 one), waits until `release`, then
 * reports its `label` as progress under its token and ends.
 */
class Jobs {
  private readonly senders = new Map<string | number, Notify>();
  filed = 0;
  /** Requests of `job` their client cancelled. */
  cancelled = 0;
  private open!: () => void;
  private gate = new Promise<void>((resolve) => (this.open = resolve));

  release(): void {
    this.open();
    this.gate = new Promise<void>((resolve) => (this.open = resolve));
    this.filed = 0;
  }

  register(server: { registerTool: V1McpServer['registerTool'] }, schema: unknown): void {
    server.registerTool(
      'job',
      { description: 'Reports its label as progress', inputSchema: schema as never },
      (async ({ label }: { label: string }, extra: ToolExtra) => {
        // the v1 SDK hands the request's _meta and sender to the tool directly, the v2 SDK in mcpReq
        const token = (extra._meta ?? extra.mcpReq?._meta)?.progressToken;
        const send = extra.sendNotification ?? extra.mcpReq?.notify;
        if (token !== undefined && send !== undefined) this.senders.set(token, send);
        extra.signal?.addEventListener('abort', () => this.cancelled++);
        this.filed++;
        await this.gate;
        if (token !== undefined)
          await this.senders.get(token)?.({
            method: 'notifications/progress',
            params: { progressToken: token, progress: 1, total: 1, message: label },
          });
        return { content: [{ type: 'text', text: `done ${label}` }] };
      }) as never,
    );
  }
}

/** A stateful 2025 server (v1 SDK): the gateway holds one session with it for every caller. */
async function startV1(jobs: Jobs): Promise<{ url: string; stop: () => Promise<void> }> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const sockets = new Set<Socket>();
  const server: Server = createServer((req: IncomingMessage, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const raw = Buffer.concat(chunks).toString('utf8');
      const body: unknown = raw === '' ? undefined : JSON.parse(raw);
      const id = req.headers['mcp-session-id'];
      const known = typeof id === 'string' ? transports.get(id) : undefined;
      if (known !== undefined) return known.handleRequest(req, res, body);
      if (req.method !== 'POST' || !isInitializeRequest(body)) {
        res.writeHead(404).end();
        return;
      }
      const mcp = new V1McpServer({ name: 'jobs-v1', version: '1.0.0' });
      jobs.register(mcp, { label: z.string() });
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => void transports.set(sid, transport),
      });
      await mcp.connect(transport);
      await transport.handleRequest(req, res, body);
    })().catch(() => res.destroy());
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    stop: async () => {
      await Promise.all([...transports.values()].map((t) => t.close()));
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
    },
  };
}

/** A stateless 2026 server (v2 SDK): one `Jobs` table for every request it serves. */
async function startV2(jobs: Jobs): Promise<{ url: string; stop: () => Promise<void> }> {
  const handler = createMcpHandler(
    () => {
      const mcp = new V2McpServer({ name: 'jobs-v2', version: '2.0.0' });
      jobs.register(mcp as never, z.object({ label: z.string() }));
      return mcp;
    },
    { legacy: 'reject' },
  );
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const raw = Buffer.concat(chunks);
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers))
        if (typeof value === 'string') headers.set(name, value);
      const response = await handler.fetch(
        new Request(`http://127.0.0.1${req.url ?? '/'}`, {
          method: req.method,
          headers,
          body: req.method === 'POST' ? new Uint8Array(raw) : undefined,
        }),
      );
      const out: Record<string, string> = {};
      response.headers.forEach((value, name) => (out[name] = value));
      res.writeHead(response.status, out);
      if (response.body !== null)
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>)
          res.write(chunk);
      res.end();
    })().catch(() => res.destroy());
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    stop: async () => {
      await handler.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
    },
  };
}

type Era = '2025' | '2026';

/**
 * Progress tokens and request ids are the caller's own choice, so two callers pick the same one (`1`): the
 * gateway sends every caller's requests to an upstream as one client (one 2025 session per
 * upstream per replica, shared), where each token must be unique among its active requests
 * (docs/security.md "What an upstream can make the gateway do"). Each caller gets its own
 * progress only, under its own token, in either era on either side; and a
 * `notifications/cancelled` naming a request id cancels only the sender's own request on the
 * same session (docs/operations.md §10 "Relaying").
 */
describe("ids a caller chooses, on an upstream every caller shares: one caller never gets another's progress nor cancels its call", () => {
  let as: TestAuthorizationServer;
  const jobs1 = new Jobs();
  const jobs2 = new Jobs();
  let v1: { url: string; stop: () => Promise<void> };
  let v2: { url: string; stop: () => Promise<void> };
  let gateway: GatewayProcess;
  const tokens: Record<'alice' | 'bob', string> = { alice: '', bob: '' };

  beforeAll(async () => {
    as = await TestAuthorizationServer.start({
      resources: { [RESOURCE]: { scope: 'mcp' } },
      defaultResource: RESOURCE,
    });
    [v1, v2] = await Promise.all([startV1(jobs1), startV2(jobs2)]);
    gateway = GatewayProcess.spawn({
      mcp: {
        ...gatewayConfig([], {
          upstreams: [upstream('j1', v1.url), upstream('j2', v2.url)],
          shutdown: { gracePeriodSeconds: 3 },
        }),
        http: { modernEra: true },
        auth: {
          mode: 'jwt',
          issuer: as.issuer,
          audience: RESOURCE,
          jwksUrl: as.jwksUrl,
          algorithms: ['ES256'],
        },
      },
      env: { MCP_SESSION_KEYS: TEST_SESSION_KEYS },
    });
    await gateway.waitForListening(90_000);
    await gateway.waitForReady(90_000);
    tokens.alice = (await as.mint({ subject: 'alice' })).access_token;
    tokens.bob = (await as.mint({ subject: 'bob' })).access_token;
    await waitFor(async () => {
      const list = await rpc(
        gateway.mcpUrl,
        'tools/list',
        {},
        { authorization: `Bearer ${tokens.alice}` },
      );
      const names = (list.json?.result?.tools ?? []).map((t: { name: string }) => t.name);
      return names.includes('j1__job') && names.includes('j2__job');
    }, 30_000);
  }, 200_000);

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([as?.stop(), v1?.stop(), v2?.stop()]);
  });

  /**
   * A tools/call of `job` with progressToken 1, as a client of `era` (a 2025 one on a session of
   * its own); resolves once the answer's head came, which is when it relays something or ends.
   */
  async function call(era: Era, who: 'alice' | 'bob', tool: string): Promise<SseReader> {
    const authorization = `Bearer ${tokens[who]}`;
    const base = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
    if (era === '2025') {
      const headers = await openLegacySession(gateway.mcpUrl, { ...base, authorization });
      return SseReader.open(
        gateway.mcpUrl,
        'POST',
        headers,
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: tool, arguments: { label: who }, _meta: { progressToken: 1 } },
        }),
      );
    }
    return SseReader.open(
      gateway.mcpUrl,
      'POST',
      {
        ...base,
        authorization,
        'mcp-protocol-version': MODERN,
        'mcp-method': 'tools/call',
        'mcp-name': tool,
      },
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: tool,
          arguments: { label: who },
          _meta: { progressToken: 1, ...envelopeMeta({}) },
        },
      }),
    );
  }

  /**
   * Every message of the call's answer once its result came: an SSE answer (it relayed
   * something) or a JSON one (nothing to relay before the result).
   */
  async function answered(reader: SseReader): Promise<any[]> {
    const done = (m: any) => m.id === 1 && m.result !== undefined;
    await waitFor(
      () => reader.messages.some(done) || (reader.ended && reader.body !== ''),
      20_000,
      () => `no result; got ${JSON.stringify(reader.messages)} ${reader.body}`,
    );
    reader.close();
    return reader.body === '' ? reader.messages : [JSON.parse(reader.body)];
  }

  const progressOf = (messages: any[]) =>
    messages.filter((m) => m.method === 'notifications/progress').map((m) => m.params);

  it.each<[Era, Era, 'j1' | 'j2']>([
    ['2025', '2025', 'j1'],
    ['2025', '2026', 'j1'],
    ['2026', '2026', 'j1'],
    ['2025', '2025', 'j2'],
    ['2026', '2025', 'j2'],
  ])(
    'alice (%s client) and bob (%s client) both call %s__job with progressToken 1',
    async (eraA, eraB, source) => {
      const jobs = source === 'j1' ? jobs1 : jobs2;
      const tool = `${source}__job`;
      const alice = call(eraA, 'alice', tool);
      await waitFor(() => jobs.filed === 1, 10_000);
      const bob = call(eraB, 'bob', tool);
      await waitFor(() => jobs.filed === 2, 10_000);
      jobs.release();
      const [seenByAlice, seenByBob] = await Promise.all([
        alice.then(answered),
        bob.then(answered),
      ]);
      expect({ alice: progressOf(seenByAlice), bob: progressOf(seenByBob) }).toEqual({
        alice: [{ progressToken: 1, progress: 1, total: 1, message: 'alice' }],
        bob: [{ progressToken: 1, progress: 1, total: 1, message: 'bob' }],
      });
    },
    60_000,
  );

  it("notifications/cancelled naming alice's request id from bob's session, bob without one, a 2026 bob or alice's other session leaves her call running; her own ends it", async () => {
    const base = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
    const alice = { ...base, authorization: `Bearer ${tokens.alice}` };
    const bob = { ...base, authorization: `Bearer ${tokens.bob}` };
    const [sessionA, otherA, sessionB] = await Promise.all([
      openLegacySession(gateway.mcpUrl, alice),
      openLegacySession(gateway.mcpUrl, alice),
      openLegacySession(gateway.mcpUrl, bob),
    ]);
    const job = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'j1__job', arguments: { label: 'alice' } },
    });
    const cancel = (headers: Record<string, string>, meta?: object) =>
      postRaw(
        gateway.mcpUrl,
        JSON.stringify({
          jsonrpc: '2.0',
          method: 'notifications/cancelled',
          params: { requestId: 1, reason: 'not yours', ...(meta && { _meta: meta }) },
        }),
        headers,
      );
    const running = SseReader.open(gateway.mcpUrl, 'POST', sessionA, job);
    await waitFor(() => jobs1.filed === 1, 10_000);
    const modernBob = { ...bob, 'mcp-protocol-version': MODERN };
    for (const [headers, meta] of [
      [sessionB],
      [bob],
      [otherA],
      [modernBob, envelopeMeta({})],
    ] as const)
      expect((await cancel(headers, meta)).status).toBe(202);
    jobs1.release();
    const seen = await running.then(answered);
    expect(seen.at(-1)).toMatchObject({ id: 1, result: { content: [{ text: 'done alice' }] } });
    expect(jobs1.cancelled).toBe(0);

    // her own, on her session, reaches the upstream and ends the call there
    const cancelled = SseReader.open(gateway.mcpUrl, 'POST', sessionA, job);
    await waitFor(() => jobs1.filed === 1, 10_000);
    expect((await cancel(sessionA)).status).toBe(202);
    await waitFor(() => jobs1.cancelled === 1, 10_000);
    jobs1.release();
    (await cancelled).close();
  }, 60_000);
});
