import type { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  type ElicitRequest,
  type LoggingMessageNotification,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import { Client as V2Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool, upstream } from '../support/fixtures';
import { PIXEL_PNG_BASE64, V1Upstream, V2Upstream } from '../support/mcp-upstreams';
import { postRaw } from '../support/rpc';
import { connectV1, connectV2 } from '../support/sdk-clients';
import { TestToolService } from '../support/tool-service';
import { stablePort } from '../support/ports';

const PARTIAL_SOURCES = 'io.github.mcp-gateway/partialSources';
/** The static Authorization of the repo upstream, from the env only. */
const REPO_SECRET = 'Bearer repo-secret-7f3a9c';

/** Marks the tests' own requests to an upstream (the reference listings), apart from the gateway's. */
const DIRECT = 'x-test-direct';

/** A port on 127.0.0.1 that nothing listens on (bound once, then closed). */

/** The v2 SDK client pinned to 2026-07-28, talking to an upstream directly (the reference). */
async function connectModern(url: string): Promise<V2Client> {
  const client = new V2Client(
    { name: 'e2e-direct', version: '2.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { [DIRECT]: '1' } },
    }),
  );
  return client;
}

async function withV1<T>(
  url: string,
  use: (client: V1Client) => Promise<T>,
  capabilities: Parameters<typeof connectV1>[2] = {},
): Promise<T> {
  const client = await connectV1(url, {}, capabilities);
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

/** The v1 SDK client talking to an upstream directly (the reference), its requests marked. */
async function withDirectV1<T>(url: string, use: (client: V1Client) => Promise<T>): Promise<T> {
  const client = await connectV1(url, { [DIRECT]: '1' });
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

/**
 * Federation (docs/operations.md §10): one gateway in front of a Tool Service bundle, a v1 SDK
 * upstream (2025 era, stateful sessions, SSE answers), a v2 SDK upstream (2026-07-28, stateless)
 * and an upstream that never answers; agents are the official v1 and v2 SDK clients.
 */
describe('federation: a bundle, a v1 SDK upstream and a v2 SDK upstream behind one /mcp', () => {
  let service: TestToolService;
  let repo: V1Upstream;
  let calc: V2Upstream;
  let ghostPort: number;
  let gateway: GatewayProcess;

  const published = [
    'calc__add',
    'calc__shout',
    'ins.quote',
    'repo__confirm',
    'repo__flaky',
    'repo__long-task',
    'repo__needs-login',
    'repo__render',
    'repo__repo_search',
  ];

  beforeAll(async () => {
    service = await TestToolService.start(manifest('ins', [tool({ name: 'ins.quote' })]));
    repo = await V1Upstream.start();
    calc = await V2Upstream.start();
    ghostPort = await stablePort();
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('ins', service, 'ins.')], {
        upstreams: [
          upstream('repo', repo.url, {
            forwardHeaders: ['X-Mcp-Token'],
            authorization: { mode: 'static', valueEnv: 'REPO_AUTHORIZATION' },
          }),
          upstream('calc', calc.url),
          upstream('ghost', `http://127.0.0.1:${ghostPort}/mcp`, {
            timeouts: { connectMillis: 200, listMillis: 500 },
          }),
        ],
      }),
      env: { REPO_AUTHORIZATION: REPO_SECRET },
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await repo?.stop();
    await calc?.stop();
    await service?.stop();
  });

  describe('tools', () => {
    it('v1 Client: one merged list, sorted, with prefixed and rewritten names and every other field as the upstream listed it', async () => {
      const direct = await withDirectV1(repo.url, (c) => c.listTools());
      const modern = await connectModern(calc.url);
      const directCalc = await modern.listTools().finally(() => modern.close());

      const { tools, _meta } = await withV1(gateway.mcpUrl, (c) => c.listTools());
      expect(tools.map((t) => t.name)).toEqual(published);
      expect([...published].sort()).toEqual(published);

      expect(direct.tools).toHaveLength(6);
      expect(directCalc.tools).toHaveLength(2);
      const rename = (prefix: string, name: string): string =>
        prefix + name.replace(/[^A-Za-z0-9_-]/g, '_');
      for (const original of direct.tools) {
        const served = tools.find((t) => t.name === rename('repo__', original.name));
        expect(served).toEqual({ ...original, name: rename('repo__', original.name) });
      }
      for (const original of directCalc.tools) {
        const served = tools.find((t) => t.name === `calc__${original.name}`);
        expect(served).toEqual({ ...original, name: `calc__${original.name}` });
      }
      // the dotted name's schema, byte for byte as the upstream built it
      const search = direct.tools.find((t) => t.name === 'repo.search');
      expect(search?.inputSchema.properties).toHaveProperty('query');
      expect(tools.find((t) => t.name === 'repo__repo_search')?.inputSchema).toEqual(
        search?.inputSchema,
      );
      // the never-answering upstream is named as missing; the others are fresh
      expect(_meta?.[PARTIAL_SOURCES]).toEqual([
        { id: 'ghost', kind: 'upstream', state: 'missing' },
      ]);
    });

    it('v2 Client (legacy mode) sees the same list', async () => {
      const client = await connectV2(gateway.mcpUrl);
      try {
        const { tools } = await client.listTools();
        expect(tools.map((t) => t.name)).toEqual(published);
      } finally {
        await client.close();
      }
    });

    it('routes a call to the v1 upstream under its own dotted name, arguments and result unchanged', async () => {
      const result = await withV1(gateway.mcpUrl, (c) =>
        c.callTool({ name: 'repo__repo_search', arguments: { query: 'needle', limit: 3 } }),
      );
      expect(result).toEqual({
        content: [{ type: 'text', text: '{"echo":{"query":"needle","limit":3},"hits":2}' }],
      });
      const sent = repo.requestsFor('tools/call').at(-1)?.body as {
        params: { name: string; arguments: unknown };
      };
      expect(sent.params.name).toBe('repo.search');
      expect(sent.params.arguments).toEqual({ query: 'needle', limit: 3 });
      expect(repo.seen.searches.at(-1)).toEqual({ query: 'needle', limit: 3 });
      expect(calc.requestsFor('tools/call')).toHaveLength(0);
    });

    it('routes a call to the v2 upstream the 2026 way (Mcp-Method, Mcp-Name, _meta envelope); structuredContent unchanged', async () => {
      const client = await connectV2(gateway.mcpUrl);
      let result;
      try {
        result = await client.callTool({ name: 'calc__add', arguments: { a: 2, b: 40 } });
      } finally {
        await client.close();
      }
      expect(result).toEqual({
        content: [{ type: 'text', text: '42' }],
        structuredContent: { sum: 42 },
      });
      const sent = calc.requestsFor('tools/call').at(-1);
      expect(sent?.headers['mcp-method']).toBe('tools/call');
      expect(sent?.headers['mcp-name']).toBe('add');
      expect(sent?.headers['mcp-protocol-version']).toBe('2026-07-28');
      const params = (sent?.body as { params: Record<string, any> }).params;
      expect(params.name).toBe('add');
      expect(params.arguments).toEqual({ a: 2, b: 40 });
      expect(params._meta['io.modelcontextprotocol/protocolVersion']).toBe('2026-07-28');
      expect(calc.requests.every((r) => r.headers['mcp-session-id'] === undefined)).toBe(true);
    });

    it('keeps every content type, structuredContent, _meta and isError of an upstream result', async () => {
      await withV1(gateway.mcpUrl, async (client) => {
        expect(
          await client.callTool({ name: 'repo__render', arguments: { color: 'blue' } }),
        ).toEqual({
          content: [
            { type: 'image', data: PIXEL_PNG_BASE64, mimeType: 'image/png' },
            { type: 'text', text: 'a blue pixel' },
          ],
          structuredContent: { width: 1, height: 1, color: 'blue' },
          _meta: { 'example.com/renderer': 'v1' },
        });
        expect(await client.callTool({ name: 'repo__flaky', arguments: {} })).toEqual({
          content: [{ type: 'text', text: 'backend on fire' }],
          isError: true,
        });
      });
    });

    it("passes the upstream's JSON-RPC error on with its code, message and data", async () => {
      const error = await withV1(gateway.mcpUrl, (c) =>
        c.callTool({ name: 'repo__needs-login', arguments: {} }).then(
          () => undefined,
          (err: unknown) => err as { code: number; message: string; data?: unknown },
        ),
      );
      expect(error?.code).toBe(-32042);
      expect(error?.message).toContain('Sign-in required first');
      expect(error?.data).toEqual({
        elicitations: [
          {
            mode: 'url',
            elicitationId: 'login-1',
            url: 'https://auth.example.com/login',
            message: 'Sign in to the repository',
          },
        ],
      });
    });

    it('still serves bundle tools beside the upstreams', async () => {
      const result = await withV1(gateway.mcpUrl, (c) =>
        c.callTool({ name: 'ins.quote', arguments: { age: 40 } }),
      );
      expect((result.content as Array<{ text: string }>)[0]?.text).toBe('{"received":{"age":40}}');
      expect(service.toolRequests('ins.quote').at(-1)?.body.toString('utf8')).toBe('{"age":40}');
    });

    it("copies the configured caller header and the static Authorization to that upstream only, never the caller's own Authorization", async () => {
      const headers = { 'X-Mcp-Token': 'caller-token-1', Authorization: 'Bearer caller-own' };
      const client = await connectV1(gateway.mcpUrl, headers);
      try {
        await client.callTool({ name: 'repo__repo_search', arguments: { query: 'h' } });
        await client.callTool({ name: 'calc__shout', arguments: { text: 'h' } });
      } finally {
        await client.close();
      }
      const toRepo = repo.requestsFor('tools/call').at(-1);
      expect(toRepo?.headers['x-mcp-token']).toBe('caller-token-1');
      expect(toRepo?.headers.authorization).toBe(REPO_SECRET);
      const toCalc = calc.requestsFor('tools/call').at(-1);
      expect(toCalc?.body).toMatchObject({ params: { name: 'shout' } });
      expect(toCalc?.headers['x-mcp-token']).toBeUndefined();
      expect(toCalc?.headers.authorization).toBeUndefined();
      const status = await (await fetch(`${gateway.managementUrl}/actuator/upstreams`)).text();
      expect(status).not.toContain('repo-secret');
      expect(gateway.output).not.toContain('repo-secret');
    });

    it('an unknown name refreshes once, then is -32001 Tool not found', async () => {
      const listsBefore = repo.requestsFor('tools/list').length;
      const error = await withV1(gateway.mcpUrl, (c) =>
        c.callTool({ name: 'repo__nope', arguments: {} }).then(
          () => undefined,
          (err: unknown) => err as { code: number },
        ),
      );
      expect(error?.code).toBe(-32001);
      expect(repo.requestsFor('tools/list').length).toBe(listsBefore + 1);
    });
  });

  describe('relayed notifications and requests', () => {
    it("delivers the upstream's progress (for the client's token) and log messages on the call's SSE answer", async () => {
      const progress: Progress[] = [];
      const logs: LoggingMessageNotification['params'][] = [];
      const result = await withV1(gateway.mcpUrl, async (client) => {
        client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
          logs.push(n.params);
        });
        return client.callTool({ name: 'repo__long-task', arguments: { steps: 3 } }, undefined, {
          onprogress: (p) => progress.push(p),
        });
      });
      expect(result).toEqual({ content: [{ type: 'text', text: 'done after 3 steps' }] });
      expect(progress).toEqual([
        { progress: 1, total: 3, message: 'step 1' },
        { progress: 2, total: 3, message: 'step 2' },
        { progress: 3, total: 3, message: 'step 3' },
      ]);
      expect(logs).toEqual(
        [1, 2, 3].map((step) => ({
          level: 'info',
          logger: 'long-task',
          data: `finished step ${step}`,
        })),
      );
      // the upstream got the client's own progress token
      const sent = repo.requestsFor('tools/call').at(-1)?.body as {
        params: { _meta?: { progressToken?: unknown } };
      };
      expect(sent.params._meta?.progressToken).toBeDefined();
    });

    it("relays the upstream's elicitation/create to the v1 Client under a sealed id and returns its answer to the upstream", async () => {
      const asked: { params: ElicitRequest['params']; id: unknown }[] = [];
      const result = await withV1(
        gateway.mcpUrl,
        async (client) => {
          client.setRequestHandler(ElicitRequestSchema, (request, extra) => {
            asked.push({ params: request.params, id: extra.requestId });
            return { action: 'accept', content: { approve: true, note: 'ship it' } };
          });
          return client.callTool({ name: 'repo__confirm', arguments: { question: 'Deploy?' } });
        },
        { elicitation: { form: {} } },
      );
      expect(asked).toHaveLength(1);
      expect(asked[0]?.params).toMatchObject({
        message: 'Deploy?',
        requestedSchema: {
          type: 'object',
          properties: { approve: { type: 'boolean', title: 'Approve?' }, note: { type: 'string' } },
          required: ['approve'],
        },
      });
      const relayId = String(asked[0]?.id);
      expect(relayId).toMatch(/^gw-relay\./);
      for (const session of repo.issuedSessions) expect(relayId).not.toContain(session);
      expect(repo.seen.elicitations.at(-1)).toEqual({
        action: 'accept',
        content: { approve: true, note: 'ship it' },
      });
      expect(result.structuredContent).toEqual({
        action: 'accept',
        content: { approve: true, note: 'ship it' },
      });
    });

    it('a request relayed to a client whose call then ends is answered to the upstream with an error, so a later answer of the client is not taken for the cancelled call', async () => {
      const seenBefore = repo.seen.elicitations.length;
      const requestsBefore = repo.requests.length;
      const toldEnded = (): boolean =>
        repo.requests.slice(requestsBefore).some((r) => {
          const error = (r.body as { error?: { message?: unknown } } | undefined)?.error;
          return (
            r.rpcMethod === undefined &&
            typeof error?.message === 'string' &&
            error.message.includes('ended (cancelled, timed out or answered) before its client')
          );
        });
      let answerLate: (answer: { action: string; content: object }) => void = () => undefined;
      let relayId: string | number | undefined;
      let sessionId: string | undefined;
      const ended = await withV1(
        gateway.mcpUrl,
        async (client) => {
          const asked = new Promise<void>((resolveAsked) => {
            client.setRequestHandler(ElicitRequestSchema, (_request, extra) => {
              relayId = extra.requestId;
              resolveAsked();
              return new Promise((resolve) => (answerLate = resolve));
            });
          });
          sessionId = (client.transport as { sessionId?: string } | undefined)?.sessionId;
          const abort = new AbortController();
          const call = client
            .callTool({ name: 'repo__confirm', arguments: { question: 'Later?' } }, undefined, {
              signal: abort.signal,
            })
            .then(
              () => 'answered',
              () => 'aborted',
            );
          await asked;
          abort.abort();
          const outcome = await call;
          // the upstream is told: notifications/cancelled for its call, an error for its request
          await waitFor(toldEnded, 10_000);
          answerLate({ action: 'accept', content: { approve: true } });
          await new Promise((r) => setTimeout(r, 500));
          return outcome;
        },
        { elicitation: { form: {} } },
      );
      expect(ended).toBe('aborted');
      expect(repo.requestsFor('notifications/cancelled').length).toBeGreaterThan(0);
      expect(repo.seen.elicitations.length).toBe(seenBefore);
      // the same late answer, as any client would post it: refused, as no call waits for it
      const late = await postRaw(
        gateway.mcpUrl,
        JSON.stringify({
          jsonrpc: '2.0',
          id: relayId,
          result: { action: 'accept', content: { approve: true } },
        }),
        {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
          ...(sessionId === undefined ? {} : { 'mcp-session-id': sessionId }),
        },
      );
      expect([late.status, late.json.error.code]).toEqual([400, -32600]);
      expect(late.json.error.message).toContain('no call waits for this answer any more');
      expect(repo.seen.elicitations.length).toBe(seenBefore);
    });

    it("ends the call at once when the upstream does not take the client's answer (its session is gone), not at the upstream's timeout", async () => {
      const result = await withV1(
        gateway.mcpUrl,
        async (client) => {
          client.setRequestHandler(ElicitRequestSchema, () => {
            // the upstream loses the session while its call waits on this answer
            repo.forgetSessions();
            return { action: 'accept', content: { approve: true } };
          });
          return client.callTool(
            { name: 'repo__confirm', arguments: { question: 'Deploy?' } },
            undefined,
            { timeout: 20_000 },
          );
        },
        { elicitation: { form: {} } },
      );
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result.content)).toContain(
        "Upstream repo did not take the client's answer to its request",
      );
      await gateway.waitForOutput(
        /Upstream repo: the client's answer could not be delivered; the call that asked for it was ended/,
      );
    });

    it("variant: a 2026 client's retry whose answer the 2025 upstream does not take ends with the same isError result", async () => {
      const first = await modernCall(gateway.mcpUrl, 'repo__confirm', { question: 'Ship?' });
      const asked = first.result as {
        resultType: string;
        inputRequests: Record<string, unknown>;
        requestState: string;
      };
      expect(asked.resultType).toBe('input_required');
      const [key] = Object.keys(asked.inputRequests);
      repo.forgetSessions();
      const retry = await modernCall(
        gateway.mcpUrl,
        'repo__confirm',
        { question: 'Ship?' },
        {
          inputResponses: { [key!]: { action: 'accept', content: { approve: true } } },
          requestState: asked.requestState,
        },
      );
      expect(retry.result).toMatchObject({ resultType: 'complete', isError: true });
      expect(JSON.stringify(retry.result)).toContain(
        "Upstream repo did not take the client's answer to its request",
      );
    });

    it('refuses, without asking, an elicitation the client did not declare (the gateway declares a superset upstream)', async () => {
      // no elicitation capability declared at initialize (and so no handler: the SDK forbids one)
      const result = await withV1(gateway.mcpUrl, (client) =>
        client.callTool({ name: 'repo__confirm', arguments: { question: 'Deploy?' } }),
      );
      // the gateway's own refusal (not the client's -32601) failed the upstream's elicitInput
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result.content)).toContain(
        'did not declare the elicitation capability',
      );
    });

    it('relays the elicitation to the v2 Client too (a decline comes back as a decline)', async () => {
      const client = await connectV2(gateway.mcpUrl, {}, { elicitation: { form: {} } });
      const messages: string[] = [];
      client.setRequestHandler('elicitation/create', (request) => {
        messages.push((request.params as { message: string }).message);
        return { action: 'decline' };
      });
      try {
        const result = await client.callTool({
          name: 'repo__confirm',
          arguments: { question: 'Drop the table?' },
        });
        expect(messages).toEqual(['Drop the table?']);
        expect(result.structuredContent).toEqual({ action: 'decline', content: null });
        expect(repo.seen.elicitations.at(-1)).toEqual({ action: 'decline' });
      } finally {
        await client.close();
      }
    });
  });

  describe('prompts, resources, completion', () => {
    it('prompts/list shows the prompt under its prefixed name; prompts/get goes to the upstream with its own name', async () => {
      const direct = await withDirectV1(repo.url, (c) => c.listPrompts());
      await withV1(gateway.mcpUrl, async (client) => {
        const { prompts, _meta } = await client.listPrompts();
        expect(prompts).toEqual(direct.prompts.map((p) => ({ ...p, name: `repo__${p.name}` })));
        expect(prompts[0]?.arguments?.map((a) => a.name)).toEqual(['file', 'focus']);
        expect(_meta?.[PARTIAL_SOURCES]).toEqual([
          { id: 'ghost', kind: 'upstream', state: 'missing' },
        ]);
        const got = await client.getPrompt({
          name: 'repo__review',
          arguments: { file: 'src/index.ts', focus: 'errors' },
        });
        expect(got).toEqual({
          description: 'Review of src/index.ts',
          messages: [
            {
              role: 'user',
              content: { type: 'text', text: 'Please review src/index.ts with a focus on errors.' },
            },
          ],
        });
      });
      const sent = repo.requestsFor('prompts/get').at(-1)?.body as {
        params: { name: string; arguments: unknown };
      };
      expect(sent.params).toEqual({
        name: 'review',
        arguments: { file: 'src/index.ts', focus: 'errors' },
      });
    });

    it('resources/list and resources/templates/list merge the upstream lists in config order, URIs unchanged', async () => {
      const direct = await withDirectV1(repo.url, async (c) => ({
        resources: (await c.listResources()).resources,
        templates: (await c.listResourceTemplates()).resourceTemplates,
      }));
      const modern = await connectModern(calc.url);
      const directCalc = await modern.listResources().finally(() => modern.close());
      expect(direct.resources.map((r) => r.uri)).toEqual(['repo://readme']);
      expect(directCalc.resources.map((r) => r.uri)).toEqual(['calc://constants/pi']);
      await withV1(gateway.mcpUrl, async (client) => {
        const { resources, _meta } = await client.listResources();
        expect(resources).toEqual([...direct.resources, ...directCalc.resources]);
        expect(_meta?.[PARTIAL_SOURCES]).toEqual([
          { id: 'ghost', kind: 'upstream', state: 'missing' },
        ]);
        expect((await client.listResourceTemplates()).resourceTemplates).toEqual(direct.templates);
      });
    });

    it('resources/read goes to the upstream that lists the URI, or whose template matches it', async () => {
      await withV1(gateway.mcpUrl, async (client) => {
        expect(await client.readResource({ uri: 'repo://readme' })).toEqual({
          contents: [
            {
              uri: 'repo://readme',
              mimeType: 'text/markdown',
              text: '# repo\nThe v1 test upstream.',
            },
          ],
        });
        // two upstreams serve resources: only the template routes this one to repo
        expect(await client.readResource({ uri: 'repo://files/README.md' })).toEqual({
          contents: [
            {
              uri: 'repo://files/README.md',
              mimeType: 'text/plain',
              text: 'contents of README.md',
            },
          ],
        });
        expect(await client.readResource({ uri: 'calc://constants/pi' })).toEqual({
          contents: [{ uri: 'calc://constants/pi', mimeType: 'text/plain', text: '3.14159' }],
        });
        await expect(client.readResource({ uri: 'nowhere://x' })).rejects.toMatchObject({
          code: -32602,
        });
      });
      const uris = (u: V1Upstream | V2Upstream): string[] =>
        u
          .requestsFor('resources/read')
          .map((r) => (r.body as { params: { uri: string } }).params.uri);
      expect(uris(repo)).toEqual(['repo://readme', 'repo://files/README.md']);
      expect(uris(calc)).toEqual(['calc://constants/pi']);
    });

    it('completion/complete for a prompt argument and for a template variable', async () => {
      await withV1(gateway.mcpUrl, async (client) => {
        const forPrompt = await client.complete({
          ref: { type: 'ref/prompt', name: 'repo__review' },
          argument: { name: 'file', value: 'src/' },
        });
        expect(forPrompt.completion.values).toEqual(['src/index.ts', 'src/main.ts']);
        const forTemplate = await client.complete({
          ref: { type: 'ref/resource', uri: 'repo://files/{path}' },
          argument: { name: 'path', value: 'READ' },
        });
        expect(forTemplate.completion.values).toEqual(['README.md']);
      });
      const sent = repo
        .requestsFor('completion/complete')
        .map((r) => (r.body as { params: { ref: unknown } }).params.ref);
      expect(sent.slice(-2)).toEqual([
        { type: 'ref/prompt', name: 'review' },
        { type: 'ref/resource', uri: 'repo://files/{path}' },
      ]);
    });

    it('initialize advertises what the sources serve: tools, resources, prompts, completions, logging', async () => {
      const capabilities = await withV1(gateway.mcpUrl, (c) =>
        Promise.resolve(c.getServerCapabilities()),
      );
      expect(Object.keys(capabilities ?? {}).sort()).toEqual([
        'completions',
        'logging',
        'prompts',
        'resources',
        'tools',
      ]);
    });
  });

  describe('operators', () => {
    it('GET /actuator/upstreams: status, era, counts, left-out items, times; never an address', async () => {
      const res = await fetch(`${gateway.managementUrl}/actuator/upstreams`);
      expect(res.status).toBe(200);
      const text = await res.text();
      const view = JSON.parse(text) as { upstreams: Array<Record<string, any>> };
      const byId = new Map(view.upstreams.map((u) => [u.id, u]));
      expect([...byId.keys()]).toEqual(['repo', 'calc', 'ghost']);
      expect(byId.get('repo')).toMatchObject({
        status: 'healthy',
        era: '2025',
        namePrefix: 'repo__',
        counts: { tools: 6, resources: 1, resourceTemplates: 1, prompts: 1 },
        leftOut: [],
        lastErrorType: null,
      });
      expect(byId.get('calc')).toMatchObject({
        status: 'healthy',
        era: '2026',
        namePrefix: 'calc__',
        counts: { tools: 2, resources: 1, resourceTemplates: 0, prompts: 0 },
        leftOut: [],
        lastErrorType: null,
      });
      expect(byId.get('ghost')).toMatchObject({
        status: 'unreachable',
        era: null,
        counts: { tools: 0, resources: 0, resourceTemplates: 0, prompts: 0 },
        lastSuccessAt: null,
      });
      expect(typeof byId.get('ghost')?.lastErrorType).toBe('string');
      for (const id of ['repo', 'calc']) {
        const u = byId.get(id);
        expect(Date.parse(u?.lastAttemptAt)).not.toBeNaN();
        expect(Date.parse(u?.lastSuccessAt)).not.toBeNaN();
      }
      expect(text).not.toMatch(/https?:/);
      expect(text).not.toContain('127.0.0.1');
      for (const port of [repo.port, calc.port, ghostPort])
        expect(text).not.toContain(String(port));
    });

    it('counts pulls and calls per upstream on /actuator/prometheus', async () => {
      const scrape = await (await fetch(`${gateway.managementUrl}/actuator/prometheus`)).text();
      const value = (name: string, labels: Record<string, string>): number | undefined => {
        const line = scrape
          .split('\n')
          .find(
            (l) =>
              l.startsWith(`${name}{`) &&
              Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)),
          );
        return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
      };
      expect(
        value('mcp_gateway_upstream_pulls_total', { upstream: 'repo', outcome: 'success' }),
      ).toBeGreaterThanOrEqual(1);
      expect(
        value('mcp_gateway_upstream_pulls_total', { upstream: 'calc', outcome: 'success' }),
      ).toBeGreaterThanOrEqual(1);
      expect(
        value('mcp_gateway_upstream_pulls_total', { upstream: 'ghost', outcome: 'success' }),
      ).toBeUndefined();
      expect(
        value('mcp_gateway_upstream_calls_total', {
          upstream: 'calc',
          method: 'tools/call',
          outcome: 'success',
        }),
      ).toBeGreaterThanOrEqual(1);
      expect(
        value('mcp_gateway_upstream_calls_total', {
          upstream: 'repo',
          method: 'tools/call',
          outcome: 'tool_error',
        }),
      ).toBeGreaterThanOrEqual(1);
      expect(
        value('mcp_gateway_upstream_call_duration_seconds_count', {
          upstream: 'repo',
          method: 'prompts/get',
        }),
      ).toBeGreaterThanOrEqual(1);
      expect(scrape).not.toContain('127.0.0.1');
    });
  });

  describe('sessions', () => {
    it('a v1 upstream that forgot its session answers 404; the gateway initializes again and the call succeeds', async () => {
      const issued = repo.issuedSessions.length;
      const gatewaySession = repo.requestsFor('tools/call').at(-1)?.headers['mcp-session-id'];
      expect(gatewaySession).toBeDefined();
      await repo.expireSessions();

      const result = await withV1(gateway.mcpUrl, (c) =>
        c.callTool({ name: 'repo__repo_search', arguments: { query: 'after expiry' } }),
      );
      expect(result.content).toEqual([
        { type: 'text', text: '{"echo":{"query":"after expiry"},"hits":2}' },
      ]);
      const calls = repo.requestsFor('tools/call');
      const refused = calls.filter((r) => r.headers['mcp-session-id'] === gatewaySession);
      expect(refused.at(-1)?.status).toBe(404);
      expect(repo.issuedSessions.length).toBeGreaterThan(issued);
      const renewed = calls.at(-1);
      expect(renewed?.status).toBe(200);
      expect(renewed?.headers['mcp-session-id']).toBe(repo.issuedSessions.at(-1));
      await waitFor(() => repo.liveSessions >= 1);
    });
  });

  describe('credentials', () => {
    // last: by now the gateway has initialized twice, pulled, called, and answered relayed requests
    it('every request the gateway sent to the upstream carried its static Authorization; none reached the other', () => {
      const fromGateway = repo.requests.filter((r) => r.headers[DIRECT] === undefined);
      expect(fromGateway.map((r) => r.rpcMethod ?? r.httpMethod)).toEqual(
        expect.arrayContaining(['initialize', 'notifications/initialized', 'tools/list', 'GET']),
      );
      const answers = fromGateway.filter(
        (r) => r.httpMethod === 'POST' && r.rpcMethod === undefined && r.body !== undefined,
      );
      expect(answers.length).toBeGreaterThanOrEqual(2); // the two relayed elicitation answers
      for (const r of fromGateway) expect(r.headers.authorization).toBe(REPO_SECRET);
      const toCalc = calc.requests.filter((r) => r.headers[DIRECT] === undefined);
      expect(toCalc.length).toBeGreaterThan(0);
      for (const r of toCalc) {
        expect(r.headers.authorization).toBeUndefined();
        expect(r.headers['x-mcp-token']).toBeUndefined();
      }
    });
  });
});

/** A single upstream with `namePrefix: ""` is put behind the gateway with its names unchanged. */
describe('federation: one upstream with namePrefix ""', () => {
  let calc: V2Upstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    calc = await V2Upstream.start();
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], { upstreams: [upstream('calc', calc.url, { namePrefix: '' })] }),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await calc?.stop();
  });

  it('publishes the names unchanged, calls them, and advertises only what the upstream serves', async () => {
    await withV1(gateway.mcpUrl, async (client) => {
      const { tools, _meta } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(['add', 'shout']);
      // a complete list carries no partial-sources key (its bytes stay as before upstreams)
      expect(_meta?.[PARTIAL_SOURCES]).toBeUndefined();
      expect(await client.callTool({ name: 'shout', arguments: { text: 'hi' } })).toEqual({
        content: [{ type: 'text', text: 'HI' }],
      });
      expect(Object.keys(client.getServerCapabilities() ?? {}).sort()).toEqual([
        'resources',
        'tools',
      ]);
    });
    expect(
      (calc.requestsFor('tools/call').at(-1)?.body as { params: { name: string } }).params.name,
    ).toBe('shout');
  });
});

/**
 * Config refusals of mcp.upstreams[] stop the boot with a message naming the field
 * (docs/operations.md §10 "Configuration").
 */
describe('federation: the gateway refuses a bad upstream config at boot', () => {
  const url = 'http://127.0.0.1:9/mcp';

  it.each([
    [
      'two upstreams with the same namePrefix',
      [upstream('a', url, { namePrefix: 'x_' }), upstream('b', url, { namePrefix: 'x_' })],
      'mcp.upstreams[1].namePrefix',
      'duplicates mcp.upstreams[0].namePrefix',
    ],
    [
      'two upstreams whose default prefixes are equal (ids a.b and a_b both give a_b__)',
      [upstream('a.b', url), upstream('a_b', url)],
      'mcp.upstreams[1].namePrefix',
      'duplicates mcp.upstreams[0].namePrefix',
    ],
    [
      'namePrefix "" beside another source',
      [upstream('a', url, { namePrefix: '' }), upstream('b', url)],
      'mcp.upstreams[0].namePrefix',
      'only enabled source',
    ],
  ])('%s', async (_label, upstreams, field, reason) => {
    const gateway = GatewayProcess.spawn({ mcp: gatewayConfig([], { upstreams }) });
    const code = await gateway.waitForExit();
    expect(code).not.toBe(0);
    expect(gateway.stdout).not.toContain('listening');
    expect(gateway.stderr).toContain(field);
    expect(gateway.stderr).toContain(reason);
  });
});

/** A raw 2026-07-28 tools/call (elicitation declared), its JSON-RPC answer. */
async function modernCall(
  url: string,
  name: string,
  args: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Promise<{ result?: unknown; error?: unknown }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': name,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name,
        arguments: args,
        ...extra,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
        },
      },
    }),
  });
  return (await res.json()) as { result?: unknown; error?: unknown };
}
