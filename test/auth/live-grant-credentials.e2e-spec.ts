import { createServer } from 'node:http';
import {
  McpServer as V1McpServer,
  ResourceTemplate,
} from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  McpServer as V2McpServer,
  ResourceTemplate as V2ResourceTemplate,
  createMcpHandler,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { listenLocal, readJson, stopper } from '../support/local-http';
import { gatewayConfig, upstream } from '../support/fixtures';
import { GatewayProcess } from '../support/gateway-process';
import { TestAuthorizationServer } from '../support/oidc-provider';
import { rpc } from '../support/rpc';
import { connectClient } from '../support/sdk-clients';

const RESOURCE = 'https://gateway.test/mcp';
const MODERN = '2026-07-28';

/** One request an upstream received: its JSON-RPC method and its Authorization header. */
interface Seen {
  readonly method?: string;
  readonly authorization?: string;
}

/** A real MCP server on 127.0.0.1 that records the Authorization of every request. */
interface RecordingServer {
  readonly url: string;
  readonly seen: Seen[];
  stop(): Promise<void>;
}

/**
 * What each server serves: resource `<stem>://own`, the listed URIs `extra`, the template
 * `<stem>://{x}`, prompt `brief` and tool `ping`: every list of the gateway asks it something.
 */
interface Serves {
  readonly stem: string;
  readonly extra?: readonly string[];
}

/** 2025: a v1 SDK server and stateless transport per request, JSON answers. */
async function startV1(serves: Serves): Promise<RecordingServer> {
  const seen: Seen[] = [];
  const http = createServer((req, res) => {
    void (async () => {
      const { body } = await readJson(req);
      seen.push({ method: body?.method, authorization: req.headers.authorization });
      const server = new V1McpServer({ name: serves.stem, version: '1.0.0' });
      for (const uri of [`${serves.stem}://own`, ...(serves.extra ?? [])])
        server.registerResource(uri, uri, { mimeType: 'text/plain' }, (u) => ({
          contents: [{ uri: u.href, mimeType: 'text/plain', text: `${serves.stem} ${u.href}` }],
        }));
      server.registerResource(
        'item',
        new ResourceTemplate(`${serves.stem}://{x}`, { list: undefined }),
        { mimeType: 'text/plain' },
        (u) => ({ contents: [{ uri: u.href, mimeType: 'text/plain', text: serves.stem }] }),
      );
      server.registerPrompt('brief', { description: 'brief' }, () => ({
        messages: [{ role: 'user', content: { type: 'text', text: serves.stem } }],
      }));
      server.registerTool('ping', { inputSchema: { note: z.string().optional() } }, () => ({
        content: [{ type: 'text', text: 'pong' }],
      }));
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      res.on('close', () => void server.close());
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    })().catch(() => res.destroy());
  });
  return { url: await listenLocal(http), seen, stop: stopper(http) };
}

/** 2026: a v2 SDK handler (stateless 2026-07-28) on node:http. */
async function startV2(serves: Serves): Promise<RecordingServer> {
  const seen: Seen[] = [];
  const handler = createMcpHandler(
    () => {
      const server = new V2McpServer({ name: serves.stem, version: '2.0.0' });
      for (const uri of [`${serves.stem}://own`, ...(serves.extra ?? [])])
        server.registerResource(uri, uri, { mimeType: 'text/plain' }, (u) => ({
          contents: [{ uri: u.href, mimeType: 'text/plain', text: `${serves.stem} ${u.href}` }],
        }));
      server.registerResource(
        'item',
        new V2ResourceTemplate(`${serves.stem}://{x}`, { list: undefined }),
        { mimeType: 'text/plain' },
        (u) => ({ contents: [{ uri: u.href, mimeType: 'text/plain', text: serves.stem }] }),
      );
      server.registerPrompt('brief', { description: 'brief' }, () => ({
        messages: [{ role: 'user', content: { type: 'text', text: serves.stem } }],
      }));
      server.registerTool(
        'ping',
        { inputSchema: z.object({ note: z.string().optional() }) },
        () => ({ content: [{ type: 'text', text: 'pong' }] }),
      );
      return server;
    },
    { legacy: 'reject' },
  );
  const http = createServer((req, res) => {
    void (async () => {
      const { raw, body } = await readJson(req);
      seen.push({ method: body?.method, authorization: req.headers.authorization });
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers))
        if (typeof v === 'string') headers.set(k, v);
      const answer = await handler.fetch(
        new Request(`http://127.0.0.1${req.url ?? '/'}`, {
          method: req.method,
          headers,
          body: req.method === 'POST' ? new Uint8Array(raw) : undefined,
        }),
      );
      const out: Record<string, string> = {};
      answer.headers.forEach((v, k) => (out[k] = v));
      res.writeHead(answer.status, out);
      res.end(Buffer.from(await answer.arrayBuffer()));
    })().catch(() => res.destroy());
  });
  const url = await listenLocal(http);
  return {
    url,
    seen,
    stop: async () => {
      await handler.close();
      await stopper(http)();
    },
  };
}

/**
 * docs/security.md "Side paths at a glance", docs/operations.md §11 "Live lists": a restricted
 * caller's request reaches only the live upstreams its `mcp.access` grant names. Caller B is
 * granted `ub` alone; the live upstreams `sec` (2025, v1 SDK) and `sec26` (2026, v2 SDK) take the
 * caller's own token (`passthrough`, the mode that makes a leak visible) and record the
 * Authorization of every request: none carries B's token, whatever B lists, gets or calls,
 * in either era, while caller A (granted both) reaches them with its own. The sources B
 * cannot see still claim their URIs through their catalog copy (pulled without a caller's
 * credentials): `ub`'s listing of `sec://claimed` stays out of B's resources/list.
 */
describe('a restricted caller reaches only the live upstreams of its grant', () => {
  let as: TestAuthorizationServer;
  let sec: RecordingServer;
  let sec26: RecordingServer;
  let ub: RecordingServer;
  let gateway: GatewayProcess;
  let tokenA: string;
  let tokenB: string;

  beforeAll(async () => {
    as = await TestAuthorizationServer.start({
      resources: { [RESOURCE]: { scope: 'mcp' } },
      defaultResource: RESOURCE,
    });
    [sec, sec26, ub] = await Promise.all([
      startV1({ stem: 'sec' }),
      startV2({ stem: 'sec26' }),
      startV1({ stem: 'ub', extra: ['sec://claimed'] }),
    ]);
    const live = { lists: 'live', authorization: { mode: 'passthrough' } };
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([], {
          upstreams: [
            upstream('sec', sec.url, live),
            upstream('sec26', sec26.url, live),
            upstream('ub', ub.url, live),
          ],
        }),
        http: { modernEra: true },
        auth: {
          mode: 'jwt',
          issuer: as.issuer,
          audience: RESOURCE,
          jwksUrl: as.jwksUrl,
          algorithms: ['ES256'],
        },
        access: {
          rules: [
            { match: { subject: 'ann' }, sources: ['sec', 'sec26', 'ub'] },
            { match: { subject: 'bea' }, sources: ['ub'] },
          ],
        },
      },
      waitReady: true,
    });
    tokenA = (await as.mint({ subject: 'ann' })).access_token;
    tokenB = (await as.mint({ subject: 'bea' })).access_token;
  }, 120_000);

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([as?.stop(), sec?.stop(), sec26?.stop(), ub?.stop()]);
  });

  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const legacy = (token: string, method: string, params: Record<string, unknown> = {}) =>
    rpc(gateway.mcpUrl, method, params, bearer(token));
  const modern = (token: string, method: string, params: Record<string, unknown> = {}) =>
    rpc(
      gateway.mcpUrl,
      method,
      {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN,
          'io.modelcontextprotocol/clientCapabilities': {},
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
        },
      },
      { ...bearer(token), 'mcp-protocol-version': MODERN, 'mcp-method': method },
    );
  /** The Authorization values a server received from this caller's token. */
  const carrying = (server: RecordingServer, token: string): Seen[] =>
    server.seen.filter((s) => s.authorization === `Bearer ${token}`);

  it('resources/list (and every other list, get and call) by B sends B`s token to neither sec nor sec26, in both eras', async () => {
    for (const send of [legacy, modern]) {
      const resources = await send(tokenB, 'resources/list');
      expect(resources.status).toBe(200);
      // sec's catalog copy claims sec://claimed through its template: not ub's to list
      expect(resources.json.result.resources.map((r: { uri: string }) => r.uri)).toEqual([
        'ub://own',
      ]);
      const templates = await send(tokenB, 'resources/templates/list');
      expect(
        templates.json.result.resourceTemplates.map((t: { uriTemplate: string }) => t.uriTemplate),
      ).toEqual(['ub://{x}']);
      expect((await send(tokenB, 'prompts/list')).json.result.prompts).toEqual([
        expect.objectContaining({ name: 'ub__brief' }),
      ]);
      expect((await send(tokenB, 'tools/list')).json.result.tools).toEqual([
        expect.objectContaining({ name: 'ub__ping' }),
      ]);
      // a call or get of the hidden sources' names is an unknown name, with nothing sent
      for (const stem of ['sec', 'sec26']) {
        const call = await send(tokenB, 'tools/call', { name: `${stem}__ping`, arguments: {} });
        expect(call.json.error ?? call.json.result?.isError).toBeTruthy();
        const got = await send(tokenB, 'prompts/get', { name: `${stem}__brief` });
        expect(got.json.error).toBeDefined();
      }
    }
    // the SDK clients, one per era, list the same without reaching sec or sec26
    for (const kind of ['v1', 'v2-pin'] as const) {
      const client = await connectClient(kind, gateway.mcpUrl, { headers: bearer(tokenB) });
      try {
        const { resources } = await client.listResources();
        expect({ kind, uris: resources.map((r) => r.uri) }).toEqual({ kind, uris: ['ub://own'] });
      } finally {
        await client.close();
      }
    }
    expect(carrying(sec, tokenB).map((s) => s.method)).toEqual([]);
    expect(carrying(sec26, tokenB).map((s) => s.method)).toEqual([]);
    // B's own source was asked with B's token
    expect(carrying(ub, tokenB).map((s) => s.method)).toEqual(
      expect.arrayContaining(['resources/list', 'prompts/list', 'tools/list']),
    );
  });

  it('caller A, granted every source, reaches sec and sec26 with its own token (the recording sees a leak)', async () => {
    for (const send of [legacy, modern]) {
      const resources = await send(tokenA, 'resources/list');
      expect(resources.status).toBe(200);
      expect(resources.json.result.resources.map((r: { uri: string }) => r.uri).sort()).toEqual(
        ['sec26://own', 'sec://own', 'ub://own'].sort(),
      );
    }
    expect(carrying(sec, tokenA).map((s) => s.method)).toContain('resources/list');
    expect(carrying(sec26, tokenA).map((s) => s.method)).toContain('resources/list');
    expect(carrying(sec, tokenB).map((s) => s.method)).toEqual([]);
    expect(carrying(sec26, tokenB).map((s) => s.method)).toEqual([]);
  });
});
