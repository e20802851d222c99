import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { gatewayConfig, upstream } from '../support/fixtures';
import { V2Upstream } from '../support/mcp-upstreams';
import { V2MrtrUpstream } from '../mrtr/mrtr-upstreams';
import { ScriptedUpstream, upTool } from '../support/scripted-upstream';
import { TasksUpstream } from '../support/tasks-upstream-process';
import { stopAfterEach } from '../support/cleanup';
import { waitFor, type GatewayProcess } from '../support/gateway-process';
import { callTool, openLegacySession } from '../support/rpc';
import { modernRequest } from '../support/modern-rpc';
import {
  admin,
  ADMIN_TOKEN,
  startGateway,
  toolNames,
  waitForState,
  waitForTool,
} from './admin-support';

/**
 * docs/operations.md §15 "Deleted means gone": a registration deleted (or changed) and posted
 * again under the same id is a new one. Nothing of the earlier one reaches it, nor the earlier
 * server anything of it: not a connection re-created by a call that started before the DELETE
 * (with the new registration's credential then sent to the old server), not a bridged input
 * round's retry, not a client's answer to the old server's relayed request, not the old
 * registration's guarded Agent closed under the new one's connection. UpstreamConnections admits
 * one registration per id (UpstreamDefinition.registration) and refuses the definitions of any
 * other; relay ids seal the registration and are delivered only to it.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A dual-era upstream (answers server/discover as 2026-07-28, and 2025-11-25 initialize with a
 * session id) whose 2025 session DELETE never answers: the gateway's release of a registration
 * (UpstreamConnections.release) then awaits that DELETE (bounded, 2 s) before it drops the
 * registration's guarded Agent from its map, and closes that Agent afterwards.
 */
class DualEraUpstream {
  readonly seen: { method: string; rpc?: string }[] = [];
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  port = 0;
  get url(): string {
    return `http://127.0.0.1:${this.port}/mcp`;
  }
  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', () => r()));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }
  async stop(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    await new Promise<void>((r) => {
      s.close(() => r());
      for (const so of this.sockets) so.destroy();
    });
  }
  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let msg: any;
    try {
      msg = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    } catch {
      msg = undefined;
    }
    this.seen.push({ method: req.method ?? '', rpc: msg?.method });
    if (req.method === 'DELETE') return; // never answers: the gateway gives up after its bound
    if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end();
    if (msg?.id === undefined) return void res.writeHead(202).end();
    const modern = req.headers['mcp-protocol-version'] === '2026-07-28';
    const send = (result: unknown, headers: Record<string, string> = {}): void => {
      res.writeHead(200, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
    };
    switch (msg.method) {
      case 'server/discover':
        return send({
          resultType: 'complete',
          supportedVersions: ['2026-07-28'],
          capabilities: { tools: {} },
          ttlMs: 0,
          cacheScope: 'private',
          _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'dual', version: '1' } },
        });
      case 'initialize':
        return send(
          {
            protocolVersion: '2025-11-25',
            capabilities: { tools: {} },
            serverInfo: { name: 'dual', version: '1' },
          },
          { 'mcp-session-id': 'legacy-session-1' },
        );
      case 'tools/list':
        return send({
          tools: [{ name: 'echo', description: 'echo', inputSchema: { type: 'object' } }],
          ...(modern ? { resultType: 'complete' } : {}),
        });
      case 'tools/call':
        return send({
          content: [{ type: 'text', text: 'echoed' }],
          ...(modern ? { resultType: 'complete' } : {}),
        });
      default:
        res.writeHead(modern ? 404 : 200, { 'content-type': 'application/json' });
        return void res.end(
          JSON.stringify({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'nope' } }),
        );
    }
  }
}

/** A 2025 client (the v1 SDK) that answers the gateway's elicitation only when told to. */
async function legacyClientAnswering(gateway: GatewayProcess, content: Record<string, unknown>) {
  let asked!: () => void;
  const askedNow = new Promise<void>((r) => (asked = r));
  let answer!: () => void;
  const answerNow = new Promise<void>((r) => (answer = r));
  let answered = false;
  const client = new V1Client(
    { name: 'e2e-v1', version: '1' },
    { capabilities: { elicitation: { form: {} } } },
  );
  client.setRequestHandler(ElicitRequestSchema, async () => {
    asked();
    await answerNow;
    answered = true;
    return { action: 'accept' as const, content };
  });
  await client.connect(new V1Transport(new URL(gateway.mcpUrl)));
  return { client, askedNow, answer, answered: () => answered };
}

describe('a registration deleted and registered again under its id is a new one', () => {
  const track = stopAfterEach();
  let calc: V2Upstream;
  beforeAll(async () => {
    calc = await V2Upstream.start();
  });
  afterAll(async () => {
    await calc?.stop();
  });

  /** A gateway with one configured upstream (calc) and the registration API on. */
  function gateway(env: Record<string, string> = {}): Promise<GatewayProcess> {
    return startGateway(
      {
        mcp: {
          ...gatewayConfig([], { upstreams: [upstream('calc', calc.url)] }),
          admin: { allowLoopback: true },
        },
        env: { MCP_ADMIN_TOKEN: ADMIN_TOKEN, ...env },
        waitReady: true,
      },
      track,
    );
  }

  /** Registers `body` and waits until it is pulled (ACTIVE); the record. */
  async function register(gw: GatewayProcess, body: Record<string, unknown>) {
    expect((await admin(gw, 'POST', '/admin/upstreams', body)).status).toBe(202);
    return waitForState(gw, String(body.id), 'ACTIVE');
  }

  describe("a connection re-created for the deleted registration by a call's bridged round", () => {
    let first: V2MrtrUpstream;
    let second: V2Upstream;
    beforeAll(async () => {
      [first, second] = await Promise.all([V2MrtrUpstream.start(), V2Upstream.start()]);
    });
    afterAll(async () => {
      await Promise.all([first?.stop(), second?.stop()]);
    });

    /**
     * Registers flip at first, deletes it while a 2025 client's bridged call waits on the
     * client, then lets the call's retry round run (it once re-created and cached a connection
     * to the old URL under the id, which the next registration of the id then used).
     */
    async function deleteDuringBridgedRound(env: Record<string, string> = {}) {
      const gw = await gateway(env);
      await register(gw, { id: 'flip', url: first.url });
      const asking = await legacyClientAnswering(gw, { confirm: true });
      try {
        const call = asking.client
          .callTool({ name: 'flip__confirm_deploy', arguments: { env: 'prod' } })
          .then(
            (r) => r,
            (e: unknown) => ({ thrown: String(e) }),
          );
        await asking.askedNow;
        // the registration is deleted while its call waits for the client
        expect((await admin(gw, 'DELETE', '/admin/upstreams/flip')).status).toBe(200);
        await waitForTool(gw, 'flip__confirm_deploy', false);
        asking.answer();
        await call;
      } finally {
        await asking.client.close();
      }
      return gw;
    }

    it("the new registration's static credential is never sent to the deleted registration's server", async () => {
      const gw = await deleteDuringBridgedRound({
        MCP_UPSTREAM_SECRET_SECOND: 'Bearer secret-of-second',
      });
      await register(gw, {
        id: 'flip',
        url: second.url,
        authorization: { mode: 'static', valueEnv: 'MCP_UPSTREAM_SECRET_SECOND' },
      });
      const before = first.authorizations.length;
      // whatever tool the gateway now lists under flip__, a call of it
      const name = (await toolNames(gw)).find((n) => n.startsWith('flip__'))!;
      await modernRequest(
        gw.mcpUrl,
        'tools/call',
        { name, arguments: { env: 'x', a: 1, b: 2 } },
        {},
      );
      expect(first.authorizations.slice(before)).not.toContain('Bearer secret-of-second');
    }, 60_000);

    it('the id registered again for another server is pulled and called at the new URL', async () => {
      const gw = await deleteDuringBridgedRound();
      const secondBefore = second.requests.length;
      const record = await register(gw, { id: 'flip', url: second.url });
      const called = await modernRequest(
        gw.mcpUrl,
        'tools/call',
        { name: 'flip__add', arguments: { a: 1, b: 2 } },
        {},
      );
      expect(record.url).toBe(second.url);
      expect((await toolNames(gw)).filter((n) => n.startsWith('flip__')).sort()).toEqual([
        'flip__add',
        'flip__shout',
      ]);
      expect(second.requests.length).toBeGreaterThan(secondBefore);
      expect(called.json?.result?.content?.[0]?.text).toBe('3');
    }, 60_000);
  });

  describe("a 2025 client's bridged input round of a 2026 upstream's call", () => {
    let first: V2MrtrUpstream;
    let second: V2MrtrUpstream;
    beforeAll(async () => {
      [first, second] = await Promise.all([V2MrtrUpstream.start(), V2MrtrUpstream.start()]);
    });
    afterAll(async () => {
      await Promise.all([first?.stop(), second?.stop()]);
    });

    it("the retry after the client's answer never reaches the server registered under the same id since: the call ends instead", async () => {
      const gw = await gateway();
      await register(gw, { id: 'flip', url: first.url });
      const asking = await legacyClientAnswering(gw, { confirm: true });
      try {
        const call = asking.client
          .callTool({ name: 'flip__confirm_deploy', arguments: { env: 'prod' } })
          .then(
            (r) => r,
            (e: unknown) => ({ thrown: String(e) }),
          );
        await asking.askedNow; // round 1 reached the first server, which asked for a confirmation
        expect(first.calls().length).toBe(1);

        // the operator points the id at another server meanwhile
        expect((await admin(gw, 'DELETE', '/admin/upstreams/flip')).status).toBe(200);
        await register(gw, { id: 'flip', url: second.url });

        asking.answer();
        const result: any = await call;
        // the second server never gets the first server's requestState nor the user's answer
        // to the first server's question (as a 2026 client's retry is refused, its envelope
        // binding the URL)
        const leaked = second
          .calls()
          .filter(
            (c) => c.params?.requestState !== undefined || c.params?.inputResponses !== undefined,
          );
        expect(leaked).toEqual([]);
        expect(result?.isError === true || result?.thrown !== undefined).toBe(true);
      } finally {
        await asking.client.close();
      }
    }, 60_000);
  });

  describe("a client's answer to a 2025 upstream's relayed request", () => {
    let first: ScriptedUpstream;
    let second: ScriptedUpstream;
    beforeAll(async () => {
      [first, second] = await Promise.all([
        ScriptedUpstream.start({ tools: [upTool('ask')], sessionId: 'session-of-first' }),
        ScriptedUpstream.start({ tools: [upTool('ask')], sessionId: 'session-of-second' }),
      ]);
      // the first server asks the client for a secret, then keeps the call open
      first.onTool('ask', () => ({
        events: [
          {
            jsonrpc: '2.0',
            id: 'ask-1',
            method: 'elicitation/create',
            params: {
              message: 'Your PIN?',
              requestedSchema: { type: 'object', properties: { pin: { type: 'string' } } },
            },
          },
        ],
        eventGapMs: 30_000,
        result: { content: [{ type: 'text', text: 'done' }] },
      }));
    });
    afterAll(async () => {
      await Promise.all([first?.stop(), second?.stop()]);
    });

    it("the answer to the first server's elicitation is never posted to the server registered under the id since", async () => {
      const gw = await gateway();
      await register(gw, { id: 'flip', url: first.url, protocol: '2025-11-25' });
      const asking = await legacyClientAnswering(gw, { pin: '4711-secret' });
      try {
        void asking.client
          .callTool({ name: 'flip__ask', arguments: {} }, undefined, { timeout: 60_000 })
          .catch(() => undefined);
        await asking.askedNow;

        expect((await admin(gw, 'DELETE', '/admin/upstreams/flip')).status).toBe(200);
        await register(gw, { id: 'flip', url: second.url, protocol: '2025-11-25' });
        const before = second.requests.length;

        asking.answer();
        await waitFor(asking.answered, 10_000, () => 'the client never answered');
        // give the gateway the time to deliver (or drop) the answer: it is sent at once when sent
        await sleep(1500);
        const leaked = second.requests
          .slice(before)
          .filter((r) => r.body.toString('utf8').includes('4711-secret'));
        // dropped (the upstream that asked is gone), never POSTed to the second server
        expect(leaked.map((r) => r.body.toString('utf8'))).toEqual([]);
      } finally {
        // the first server would hold its call open for 30 s more: the gateway's drain with it
        await first.stop();
        await asking.client.close();
      }
    }, 60_000);
  });

  describe('a registration deleted and registered again while its 2025 session is being ended', () => {
    let up: DualEraUpstream;
    beforeAll(async () => {
      up = await new DualEraUpstream().start();
    });
    afterAll(async () => {
      await up?.stop();
    });

    it("the new registration keeps working after the old one's release finishes (its connection must not inherit the old, then closed, guarded Agent)", async () => {
      const gw = await gateway();
      const body = { id: 'dual', url: up.url, protocol: 'auto' };
      await register(gw, body);

      // a 2025 client's call opens the upstream's 2025 session beside the 2026 connection
      const session = await openLegacySession(gw.mcpUrl);
      const first = await callTool(gw.mcpUrl, 'dual__echo', {}, session);
      expect(first?.result?.content?.[0]?.text).toBe('echoed');
      expect(up.seen.some((s) => s.rpc === 'initialize')).toBe(true);

      // delete (its release waits on the 2025 session's DELETE, bounded at 2 s) and register
      // it again at once
      expect((await admin(gw, 'DELETE', '/admin/upstreams/dual')).status).toBe(200);
      await register(gw, body);
      // a 2026 call on the new registration, made while the old release is still pending
      const during = await modernRequest(
        gw.mcpUrl,
        'tools/call',
        { name: 'dual__echo', arguments: {} },
        {},
      );
      expect(during.json?.result?.content?.[0]?.text).toBe('echoed');

      // let the old registration's release end, then call again: every call is served (the
      // connection of the registration that exists now was never built on the old, closed
      // Agent). On a machine so loaded that the re-registration's first pull comes after the
      // 2 s DELETE bound the window is missed and this passes: it never fails for a correct
      // gateway.
      await sleep(4000);
      const outcomes: string[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await modernRequest(
          gw.mcpUrl,
          'tools/call',
          { name: 'dual__echo', arguments: {} },
          {},
        );
        outcomes.push(String(r.json?.result?.content?.[0]?.text ?? r.json?.error?.message));
        await sleep(500);
      }
      expect(outcomes).toEqual(['echoed', 'echoed', 'echoed']);
    }, 60_000);
  });

  describe('kept state bound to the registration, the same URL registered again with another credential', () => {
    const TENANTS = {
      MCP_UPSTREAM_SECRET_TENANT_A: 'Bearer tenant-a',
      MCP_UPSTREAM_SECRET_TENANT_B: 'Bearer tenant-b',
    };
    const asTenant = (tenant: 'A' | 'B') => ({
      authorization: { mode: 'static', valueEnv: `MCP_UPSTREAM_SECRET_TENANT_${tenant}` },
    });
    let mrtr: V2MrtrUpstream;
    let jobs: TasksUpstream;
    beforeAll(async () => {
      [mrtr, jobs] = await Promise.all([V2MrtrUpstream.start(), TasksUpstream.start()]);
    });
    afterAll(async () => {
      await Promise.all([mrtr?.stop(), jobs?.stop()]);
    });

    it("a 2026 client's retry with the first registration's requestState is refused, nothing of it sent under the new credential", async () => {
      const gw = await gateway(TENANTS);
      await register(gw, { id: 'flip', url: mrtr.url, ...asTenant('A') });
      const elicit = { elicitation: { form: {} }, sampling: {} };
      const first = await modernRequest(
        gw.mcpUrl,
        'tools/call',
        { name: 'flip__confirm_deploy', arguments: { env: 'prod' } },
        elicit,
      );
      expect(first.json?.result?.resultType).toBe('input_required');
      const requestState = first.json.result.requestState;

      expect((await admin(gw, 'DELETE', '/admin/upstreams/flip')).status).toBe(200);
      await register(gw, { id: 'flip', url: mrtr.url, ...asTenant('B') });
      const before = mrtr.bodies.length;
      const retry = await modernRequest(
        gw.mcpUrl,
        'tools/call',
        {
          name: 'flip__confirm_deploy',
          arguments: { env: 'prod' },
          inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
          requestState,
        },
        elicit,
      );
      // the envelope binds the registration (upstreamSource): the retry is refused, and the
      // first registration's state and the user's answer never go out as tenant B's
      const leaked = mrtr.bodies
        .slice(before)
        .filter((b) => b?.method === 'tools/call' && b.params?.requestState !== undefined);
      expect(leaked).toEqual([]);
      expect(retry.json?.error ?? retry.json?.result?.isError).toBeTruthy();
    }, 60_000);

    it("the first registration's task id is unknown to the one registered since; tasks/get is not forwarded", async () => {
      const gw = await gateway(TENANTS);
      const withTasks = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
      await register(gw, { id: 'jobs', url: jobs.url, ...asTenant('A') });
      const created = await modernRequest(
        gw.mcpUrl,
        'tools/call',
        { name: 'jobs__slow_compute', arguments: { seconds: 30, label: 'a' } },
        withTasks,
      );
      expect(created.json?.result).toMatchObject({ resultType: 'task' });
      const taskId = created.json.result.taskId as string;
      // the task id works while its registration holds the id
      expect(
        (await modernRequest(gw.mcpUrl, 'tasks/get', { taskId }, withTasks)).json?.error,
      ).toBeUndefined();

      expect((await admin(gw, 'DELETE', '/admin/upstreams/jobs')).status).toBe(200);
      await register(gw, { id: 'jobs', url: jobs.url, ...asTenant('B') });
      const before = (await jobs.received()).length;
      const got = await modernRequest(gw.mcpUrl, 'tasks/get', { taskId }, withTasks);
      const sent = (await jobs.received())
        .slice(before)
        .filter((r) => r.method.startsWith('tasks/'));
      expect(sent).toEqual([]);
      expect(got.json?.error?.code).toBe(-32602);
    }, 60_000);
  });

  describe('approvals of a pinned registration', () => {
    let first: V2Upstream;
    let second: V2Upstream;
    beforeAll(async () => {
      [first, second] = await Promise.all([V2Upstream.start(), V2Upstream.start()]);
    });
    afterAll(async () => {
      await Promise.all([first?.stop(), second?.stop()]);
    });

    /** The tools of `id` held for review now (GET /admin/reviews), once there are some. */
    async function heldOf(gw: GatewayProcess, id: string): Promise<any[]> {
      let held: any[] = [];
      await waitFor(
        async () => {
          const reviews = (await admin(gw, 'GET', '/admin/reviews')).body;
          held = reviews?.sources?.find((s: any) => s.id === id)?.held ?? [];
          return held.length > 0;
        },
        20_000,
        () => `nothing of ${id} held for review`,
      );
      return held;
    }

    it("the tools of a server registered again under the id are held for review, although the earlier one's identical tools were approved", async () => {
      const gw = await gateway();
      await register(gw, { id: 'shop', url: first.url, pinned: true });
      const add = (await heldOf(gw, 'shop')).find((h: any) => h.name === 'shop__add');
      expect(add).toBeDefined();
      expect(
        (
          await admin(gw, 'POST', '/admin/reviews/shop/approve', {
            tools: [{ name: add.name, digest: add.digest }],
          })
        ).status,
      ).toBe(200);
      await waitForTool(gw, 'shop__add');

      expect((await admin(gw, 'DELETE', '/admin/upstreams/shop')).status).toBe(200);
      await waitForTool(gw, 'shop__add', false);
      await register(gw, { id: 'shop', url: second.url, pinned: true });
      // held again, as every tool of a newly pinned source (docs/operations.md §6), and not served
      const heldAgain = await heldOf(gw, 'shop');
      expect(heldAgain.map((h: any) => h.name)).toContain('shop__add');
      expect((await toolNames(gw)).filter((n) => n.startsWith('shop__'))).toEqual([]);
    }, 60_000);
  });
});
