import { Client as V2Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { GatewayProcess, TEST_SESSION_KEYS, waitFor } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { OwnRedis, SHARED_REDIS_URL, uniqueKeyPrefix } from '../support/redis';
import { ADMIN_TOKEN, admin } from '../admin/admin-support';
import { postRaw } from '../support/rpc';
import { V1AskingUpstream, V2MrtrUpstream } from './mrtr-upstreams';

const V = '2026-07-28';
const ELICIT_AND_SAMPLE = { elicitation: { form: {} }, sampling: {} };

/**
 * A raw 2026-07-28 request (envelope + the headers the spec requires: Mcp-Name is the tool or
 * prompt name, or the resource URI).
 */
function modernRequest(
  url: string,
  method: string,
  params: Record<string, unknown>,
  capabilities: object = ELICIT_AND_SAMPLE,
  id: number | string = 1,
) {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id,
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': V,
        'io.modelcontextprotocol/clientCapabilities': capabilities,
        'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
      },
    },
  });
  return postRaw(url, body, {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': V,
    'mcp-method': method,
    'mcp-name': String(params.name ?? params.uri),
  });
}

/** A raw 2026-07-28 tools/call. */
function modernCall(
  url: string,
  name: string,
  params: Record<string, unknown>,
  capabilities: object = ELICIT_AND_SAMPLE,
  id: number | string = 1,
) {
  return modernRequest(url, 'tools/call', { name, ...params }, capabilities, id);
}

/** The SSE events of a streamed answer, read one by one. */
class EventReader {
  private buffer = '';
  private readonly decoder = new TextDecoder();
  constructor(private readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}

  async next(): Promise<any> {
    for (;;) {
      const end = this.buffer.indexOf('\n\n');
      if (end !== -1) {
        const event = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end + 2);
        const data = /^data: ?(.*)$/m.exec(event);
        if (data) return JSON.parse(data[1]!);
        continue;
      }
      const { done, value } = await this.reader.read();
      if (done) throw new Error(`stream ended; left: ${this.buffer}`);
      this.buffer += this.decoder.decode(value, { stream: true });
    }
  }
}

const text = (result: any): string =>
  (result.content ?? []).map((c: { text?: string }) => c.text ?? '').join('');
/** The text of a prompts/get result's messages or a resources/read result's contents. */
const bodyText = (result: any): string =>
  [
    ...(result.messages ?? []).map((m: { content?: { text?: string } }) => m.content?.text ?? ''),
    ...(result.contents ?? []).map((c: { text?: string }) => c.text ?? ''),
  ].join('');
const ACCEPT = { action: 'accept', content: { confirm: true } };

/**
 * Multi round-trip requests and era bridging through two gateway replicas sharing Redis and
 * MCP_SESSION_KEYS (docs/operations.md §11 "Multi round-trip and era bridging"; wire notes §4): a
 * v2 SDK upstream that answers input_required, a v1 SDK upstream that elicits and samples mid-call;
 * v2 clients (auto, pin) and v1 clients; retries sent to the other replica; tampered and foreign
 * envelopes.
 */
describe('MRTR and era bridging (docs/operations.md §11 "Multi round-trip and era bridging")', () => {
  let v2: V2MrtrUpstream;
  let v1: V1AskingUpstream;
  let a: GatewayProcess;
  let b: GatewayProcess;
  let alone: GatewayProcess;

  beforeAll(async () => {
    v2 = await V2MrtrUpstream.start();
    v1 = await V1AskingUpstream.start();
    const mcp = {
      ...gatewayConfig([], {
        upstreams: [
          upstream('v2', v2.url, { timeouts: { callMillis: 30_000 } }),
          upstream('v1', v1.url, { timeouts: { callMillis: 30_000 } }),
        ],
        redis: { keyPrefix: uniqueKeyPrefix() },
      }),
      http: { modernEra: true },
      // a virtual server over v2: answers on its path cross replicas as on /mcp
      virtualServers: [{ id: 'team', sources: ['v2'] }],
    };
    const shared = { MCP_SESSION_KEYS: TEST_SESSION_KEYS, MCP_ADMIN_TOKEN: ADMIN_TOKEN };
    // a loaded machine starts a gateway slowly: generous bounds, conditions not sleeps
    const start = async (env: Record<string, string>): Promise<GatewayProcess> => {
      const gateway = GatewayProcess.spawn({ mcp, env });
      await gateway.waitForListening(90_000);
      await gateway.waitForReady(90_000);
      return gateway;
    };
    [a, b, alone] = await Promise.all([
      start({ ...shared, REDIS_URL: SHARED_REDIS_URL }),
      start({ ...shared, REDIS_URL: SHARED_REDIS_URL }),
      // same keys, no Redis: opens the others' envelopes, cannot reach their parked calls
      start(shared),
    ]);
  }, 200_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop(), alone?.stop()]);
    await Promise.all([v2?.stop(), v1?.stop()]);
  });

  describe('§5: a 2026 upstream’s input_required to a 2026 client', () => {
    it('goes to the client unchanged but for requestState, wrapped in the gateway envelope', async () => {
      const first = await modernCall(a.mcpUrl, 'v2__confirm_deploy', {
        arguments: { env: 'staging' },
      });
      expect(first.status).toBe(200);
      const result = first.json.result;
      expect(result.resultType).toBe('input_required');
      expect(result.inputRequests).toEqual({
        confirm: {
          method: 'elicitation/create',
          params: expect.objectContaining({ message: 'Deploy to staging?' }),
        },
      });
      expect(result.requestState).toMatch(/^gwrs1\./);
      expect(result.requestState).not.toContain('opaque-state');
    });

    it('the retry on the other replica is unwrapped: the upstream gets its own requestState back', async () => {
      const first = await modernCall(a.mcpUrl, 'v2__confirm_deploy', {
        arguments: { env: 'prod' },
      });
      const retry = await modernCall(
        b.mcpUrl,
        'v2__confirm_deploy',
        {
          arguments: { env: 'prod' },
          inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
          requestState: first.json.result.requestState,
        },
        ELICIT_AND_SAMPLE,
        2,
      );
      expect(retry.json.result).toMatchObject({ resultType: 'complete' });
      expect(text(retry.json.result)).toBe('deployed to prod (state=opaque-state-prod)');
      const forwarded = v2.calls().at(-1);
      expect(forwarded.params.requestState).toBe('opaque-state-prod');
      expect(forwarded.params.name).toBe('confirm_deploy');
    });

    it.each([
      ['tampered', (s: string) => `${s.slice(0, -3)}${s.at(-3) === 'A' ? 'B' : 'A'}${s.slice(-2)}`],
      ['truncated', (s: string) => s.slice(0, -1)],
      ['not an envelope', () => 'opaque-state-prod'],
      ['not a string', () => 42],
    ])('a %s requestState is -32602 and never reaches the upstream', async (_kind, spoil) => {
      const first = await modernCall(a.mcpUrl, 'v2__confirm_deploy', { arguments: { env: 'qa' } });
      const before = v2.calls().length;
      const retry = await modernCall(b.mcpUrl, 'v2__confirm_deploy', {
        arguments: { env: 'qa' },
        inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
        requestState: spoil(first.json.result.requestState as string),
      });
      expect(retry.json.error.code).toBe(-32602);
      expect(retry.json.error.message).toMatch(/requestState/);
      expect(v2.calls().length).toBe(before);
    });

    it('an envelope is spent by its first retry: a replay on either replica is -32602 and never forwarded', async () => {
      const first = await modernCall(a.mcpUrl, 'v2__confirm_deploy', { arguments: { env: 'one' } });
      const params = {
        arguments: { env: 'one' },
        inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
        requestState: first.json.result.requestState,
      };
      const retry = await modernCall(a.mcpUrl, 'v2__confirm_deploy', params, ELICIT_AND_SAMPLE, 2);
      expect(text(retry.json.result)).toBe('deployed to one (state=opaque-state-one)');
      const before = v2.calls().length;
      for (const replica of [a, b]) {
        const replay = await modernCall(
          replica.mcpUrl,
          'v2__confirm_deploy',
          params,
          ELICIT_AND_SAMPLE,
          3,
        );
        expect(replay.json.error).toMatchObject({ code: -32602 });
        expect(replay.json.error.message).toMatch(/already used/);
      }
      expect(v2.calls().length).toBe(before);
    });

    it('a retry with other arguments is -32602 and never forwarded: the envelope binds a digest of them', async () => {
      const first = await modernCall(a.mcpUrl, 'v2__confirm_deploy', {
        arguments: { env: 'staging' },
      });
      const before = v2.calls().length;
      const swapped = await modernCall(b.mcpUrl, 'v2__confirm_deploy', {
        arguments: { env: 'prod' },
        inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
        requestState: first.json.result.requestState,
      });
      expect(swapped.json.error).toMatchObject({ code: -32602 });
      expect(swapped.json.error.message).toMatch(/other arguments/);
      expect(v2.calls().length).toBe(before);
      // refused before it was spent: the retry with the arguments it was issued for still works
      const retry = await modernCall(b.mcpUrl, 'v2__confirm_deploy', {
        arguments: { env: 'staging' },
        inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
        requestState: first.json.result.requestState,
      });
      expect(text(retry.json.result)).toBe('deployed to staging (state=opaque-state-staging)');
    });

    it('an envelope issued for another tool is -32602 (foreign)', async () => {
      const first = await modernCall(a.mcpUrl, 'v2__confirm_deploy', { arguments: { env: 'qa' } });
      const retry = await modernCall(b.mcpUrl, 'v2__write_poem', {
        arguments: { topic: 'x' },
        requestState: first.json.result.requestState,
      });
      expect(retry.json.error).toMatchObject({ code: -32602 });
      expect(retry.json.error.message).toMatch(/another tool/);
    });

    it('the v2 client in auto mode answers the rounds with its handlers and gets the result', async () => {
      const client = new V2Client(
        { name: 'e2e-auto', version: '1' },
        { versionNegotiation: { mode: 'auto' }, capabilities: ELICIT_AND_SAMPLE },
      );
      const asked: string[] = [];
      client.setRequestHandler('elicitation/create', (request) => {
        asked.push(String(request.params.message));
        return { action: 'accept', content: { confirm: true, publish: true } };
      });
      client.setRequestHandler('sampling/createMessage', () => ({
        role: 'assistant',
        content: { type: 'text', text: 'roses are red' },
        model: 'test-model',
      }));
      await client.connect(new StreamableHTTPClientTransport(new URL(a.mcpUrl)));
      try {
        const deploy = await client.callTool({
          name: 'v2__confirm_deploy',
          arguments: { env: 'eu' },
        });
        expect(text(deploy)).toBe('deployed to eu (state=opaque-state-eu)');
        const poem = await client.callTool({ name: 'v2__write_poem', arguments: { topic: 'mcp' } });
        expect(text(poem)).toBe('roses are red | published=true');
        expect(asked).toEqual(['Deploy to eu?', 'Publish it?']);
      } finally {
        await client.close();
      }
    });
  });

  describe('§7: a 2025 upstream asking a 2026 client mid-call', () => {
    it('parks the call and answers input_required; the retry on the other replica (Redis) gets the result', async () => {
      const first = await modernCall(a.mcpUrl, 'v1__approve', {
        arguments: { question: 'Ship it?' },
      });
      const result = first.json.result;
      expect(result.resultType).toBe('input_required');
      const entries = Object.entries(result.inputRequests as Record<string, any>);
      expect(entries).toHaveLength(1);
      const [key, request] = entries[0]!;
      expect(request.method).toBe('elicitation/create');
      expect(request.params).toMatchObject({ message: 'Ship it?' });
      expect(request).not.toHaveProperty('id');
      const retry = await modernCall(
        b.mcpUrl,
        'v1__approve',
        {
          arguments: { question: 'Ship it?' },
          inputResponses: { [key]: { action: 'accept', content: { approve: true } } },
          requestState: result.requestState,
        },
        ELICIT_AND_SAMPLE,
        2,
      );
      expect(retry.json.result.resultType).toBe('complete');
      expect(text(retry.json.result)).toBe(
        'approve={"action":"accept","content":{"approve":true}}',
      );
    });

    it("the call's progress and log messages go to the stream of the request whose round it is: a retry's under its own token and level", async () => {
      const call = (id: number, meta: Record<string, unknown>, retry: object = {}) =>
        postRaw(
          a.mcpUrl,
          JSON.stringify({
            jsonrpc: '2.0',
            id,
            method: 'tools/call',
            params: {
              name: 'v1__progress_approve',
              arguments: { question: 'Go?' },
              ...retry,
              _meta: {
                'io.modelcontextprotocol/protocolVersion': V,
                'io.modelcontextprotocol/clientCapabilities': ELICIT_AND_SAMPLE,
                'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
                'io.modelcontextprotocol/logLevel': 'info',
                ...meta,
              },
            },
          }),
          {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': V,
            'mcp-method': 'tools/call',
            'mcp-name': 'v1__progress_approve',
          },
        );
      const messages = (answer: { text: string }): any[] =>
        [...answer.text.matchAll(/^data: ?(.*)$/gm)].map((m) => JSON.parse(m[1]!));
      const of = (all: any[], method: string): any[] =>
        all.filter((m) => m.method === method).map((m) => m.params);

      const first = messages(await call(1, { progressToken: 'first' }));
      expect(of(first, 'notifications/progress')).toEqual([
        { progressToken: 'first', progress: 1, total: 2 },
      ]);
      const asked = first.at(-1).result;
      expect(asked.resultType).toBe('input_required');
      const [key] = Object.keys(asked.inputRequests);
      const retry = messages(
        await call(
          2,
          { progressToken: 'second' },
          {
            inputResponses: { [key!]: { action: 'accept', content: { approve: true } } },
            requestState: asked.requestState,
          },
        ),
      );
      expect(of(retry, 'notifications/progress')).toEqual([
        { progressToken: 'second', progress: 2, total: 2 },
      ]);
      expect(of(retry, 'notifications/message')).toEqual([{ level: 'warning', data: 'answered' }]);
      expect(text(retry.at(-1).result)).toBe('progress approve=accept');
    });

    it('asks again, round after round, until the upstream call completes', async () => {
      let answer = await modernCall(b.mcpUrl, 'v1__double_check', {
        arguments: { question: 'Drop?' },
      });
      const seen: string[] = [];
      for (let round = 0; answer.json.result?.resultType === 'input_required'; round++) {
        expect(round).toBeLessThan(3);
        const [key, request] = Object.entries(
          answer.json.result.inputRequests as Record<string, any>,
        )[0]!;
        seen.push(request.params.message);
        answer = await modernCall(round % 2 === 0 ? a.mcpUrl : b.mcpUrl, 'v1__double_check', {
          arguments: { question: 'Drop?' },
          inputResponses: { [key]: { action: 'accept', content: { approve: round === 0 } } },
          requestState: answer.json.result.requestState,
        });
      }
      expect(seen).toEqual(['Drop?', 'Really? Drop?']);
      expect(text(answer.json.result)).toBe('first={"approve":true} second={"approve":false}');
    });

    it('a parked call’s retry with other arguments is -32602; the call waits for its own retry', async () => {
      const first = await modernCall(a.mcpUrl, 'v1__approve', { arguments: { question: 'Safe?' } });
      const [key] = Object.keys(first.json.result.inputRequests);
      const answers = { [key!]: { action: 'accept', content: { approve: true } } };
      const swapped = await modernCall(b.mcpUrl, 'v1__approve', {
        arguments: { question: 'Dangerous?' },
        inputResponses: answers,
        requestState: first.json.result.requestState,
      });
      expect(swapped.json.error.code).toBe(-32602);
      const own = await modernCall(b.mcpUrl, 'v1__approve', {
        arguments: { question: 'Safe?' },
        inputResponses: answers,
        requestState: first.json.result.requestState,
      });
      expect(text(own.json.result)).toBe('approve={"action":"accept","content":{"approve":true}}');
    });

    it('a retry of a finished call is -32602', async () => {
      const first = await modernCall(a.mcpUrl, 'v1__approve', { arguments: { question: 'Once?' } });
      const [key] = Object.keys(first.json.result.inputRequests);
      const params = {
        arguments: { question: 'Once?' },
        inputResponses: { [key!]: { action: 'decline' } },
        requestState: first.json.result.requestState,
      };
      expect((await modernCall(b.mcpUrl, 'v1__approve', params)).json.result.resultType).toBe(
        'complete',
      );
      const again = await modernCall(a.mcpUrl, 'v1__approve', params);
      expect(again.json.error.code).toBe(-32602);
    });

    it('without Redis the retry must reach the replica that parked the call: elsewhere -32602', async () => {
      const first = await modernCall(a.mcpUrl, 'v1__approve', { arguments: { question: 'Here?' } });
      const [key] = Object.keys(first.json.result.inputRequests);
      const retry = await modernCall(alone.mcpUrl, 'v1__approve', {
        arguments: { question: 'Here?' },
        inputResponses: { [key!]: { action: 'accept', content: { approve: true } } },
        requestState: first.json.result.requestState,
      });
      expect(retry.json.error.code).toBe(-32602);
      expect(retry.json.error.message).toMatch(/no longer pending/);
      // the call is still parked on A: answered there, it completes
      const there = await modernCall(a.mcpUrl, 'v1__approve', {
        arguments: { question: 'Here?' },
        inputResponses: { [key!]: { action: 'accept', content: { approve: true } } },
        requestState: first.json.result.requestState,
      });
      expect(text(there.json.result)).toContain('"approve":true');
    });

    // Changed with the official conformance suite 0.2.0-alpha.12 (server-stateless,
    // sep-2575-server-rejects-undeclared-capability): the call used to go on with the upstream
    // refused and end as an isError result; a 2026 client now learns which capability the call
    // needs, as a 2026 server tells it (docs/operations.md §11 "Multi round-trip and era bridging").
    it('a client that did not declare elicitation is not asked: 400 -32021 naming it, the upstream refused', async () => {
      const answer = await modernCall(
        a.mcpUrl,
        'v1__approve',
        { arguments: { question: 'No caps?' } },
        {},
      );
      expect(answer.status).toBe(400);
      expect(answer.json.error.code).toBe(-32021);
      expect(answer.json.error.data.requiredCapabilities).toEqual({ elicitation: { form: {} } });
    });

    it('the v2 client pinned to 2026-07-28 answers elicitation and sampling of a v1 upstream', async () => {
      const client = new V2Client(
        { name: 'e2e-pin', version: '1' },
        { versionNegotiation: { mode: { pin: V } }, capabilities: ELICIT_AND_SAMPLE },
      );
      client.setRequestHandler('elicitation/create', () => ({
        action: 'accept',
        content: { approve: true },
      }));
      client.setRequestHandler('sampling/createMessage', () => ({
        role: 'assistant',
        content: { type: 'text', text: 'short' },
        model: 'test-model',
      }));
      await client.connect(new StreamableHTTPClientTransport(new URL(b.mcpUrl)));
      try {
        const approved = await client.callTool({
          name: 'v1__approve',
          arguments: { question: 'Go?' },
        });
        expect(text(approved)).toBe('approve={"action":"accept","content":{"approve":true}}');
        const summary = await client.callTool({
          name: 'v1__summarize',
          arguments: { text: 'long' },
        });
        expect(text(summary)).toBe('summary=short');
      } finally {
        await client.close();
      }
    });
  });

  describe('§7: a 2026 upstream’s input_required to a 2025 client', () => {
    it('becomes elicitation/create and sampling/createMessage on the v1 client’s call stream, round after round', async () => {
      const client = new V1Client(
        { name: 'e2e-v1', version: '1' },
        { capabilities: ELICIT_AND_SAMPLE },
      );
      const asked: string[] = [];
      client.setRequestHandler(ElicitRequestSchema, (request) => {
        asked.push(request.params.message);
        return { action: 'accept', content: { confirm: true, publish: false } };
      });
      client.setRequestHandler(CreateMessageRequestSchema, () => ({
        role: 'assistant',
        content: { type: 'text', text: 'violets are blue' },
        model: 'test-model',
      }));
      await client.connect(new V1Transport(new URL(a.mcpUrl)));
      try {
        const deploy = await client.callTool({
          name: 'v2__confirm_deploy',
          arguments: { env: 'us' },
        });
        expect(deploy.isError).toBeFalsy();
        expect(deploy).not.toHaveProperty('resultType');
        expect(text(deploy)).toBe('deployed to us (state=opaque-state-us)');
        const poem = await client.callTool({ name: 'v2__write_poem', arguments: { topic: 'x' } });
        expect(text(poem)).toBe('violets are blue | published=false');
        expect(asked).toEqual(['Deploy to us?', 'Publish it?']);
        // the upstream got the answers as the retry: inputResponses + its own requestState
        const retry = v2
          .calls()
          .filter((c) => c.params.name === 'confirm_deploy')
          .at(-1);
        expect(retry.params).toMatchObject({
          inputResponses: {
            confirm: { action: 'accept', content: { confirm: true, publish: false } },
          },
          requestState: 'opaque-state-us',
        });
      } finally {
        await client.close();
      }
    });

    it.each(['/mcp', '/mcp/servers/team'])(
      '%s: the client’s answer POSTed to the other replica reaches the call waiting on the first (Redis), whatever other virtual servers came and went on one replica',
      async (path) => {
        // an unrelated server registered and deleted on a: b never saw it, or saw it later
        expect(
          (await admin(a, 'POST', '/admin/servers', { id: `tmp${path.length}`, sources: ['v1'] }))
            .status,
        ).toBe(201);
        expect((await admin(a, 'DELETE', `/admin/servers/tmp${path.length}`)).status).toBe(200);
        const urlA = a.mcpUrl.replace(/\/mcp$/, path);
        const urlB = b.mcpUrl.replace(/\/mcp$/, path);
        const init = await postRaw(
          urlA,
          JSON.stringify({
            jsonrpc: '2.0',
            id: 0,
            method: 'initialize',
            params: {
              protocolVersion: '2025-11-25',
              capabilities: ELICIT_AND_SAMPLE,
              clientInfo: { name: 'raw', version: '1' },
            },
          }),
        );
        const session = init.headers.get('mcp-session-id')!;
        const headers = {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
          'mcp-session-id': session,
        };
        const call = await fetch(urlA, {
          method: 'POST',
          headers,
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 7,
            method: 'tools/call',
            params: { name: 'v2__confirm_deploy', arguments: { env: 'ap' } },
          }),
        });
        expect(call.headers.get('content-type')).toMatch(/text\/event-stream/);
        const events = new EventReader(call.body!.getReader());
        const request = await events.next();
        expect(request).toMatchObject({
          method: 'elicitation/create',
          params: { message: 'Deploy to ap?' },
        });
        expect(typeof request.id).toBe('string');
        const posted = await fetch(urlB, {
          method: 'POST',
          headers,
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: request.id,
            result: { action: 'accept', content: { confirm: true } },
          }),
        });
        expect(posted.status).toBe(202);
        const final = await events.next();
        expect(final.id).toBe(7);
        expect(text(final.result)).toBe('deployed to ap (state=opaque-state-ap)');
      },
    );

    it('sees the progress of the rounds only while it increases: a later round counting from its start again is not relayed', async () => {
      const client = new V1Client(
        { name: 'e2e-v1-progress', version: '1' },
        { capabilities: ELICIT_AND_SAMPLE },
      );
      client.setRequestHandler(ElicitRequestSchema, () => ({
        action: 'accept',
        content: { confirm: true },
      }));
      await client.connect(new V1Transport(new URL(b.mcpUrl)));
      try {
        const progress: number[] = [];
        const result = await client.callTool(
          { name: 'v2__progress_deploy', arguments: { env: 'eu' } },
          undefined,
          { onprogress: (p) => progress.push(p.progress) },
        );
        expect(text(result)).toBe('progress deployed to eu');
        // round 1 reported 1 of 2; round 2 reported 1 of 2 again, then 2 of 2
        expect(progress).toEqual([1, 2]);
      } finally {
        await client.close();
      }
    });

    it('a 2025 client that did not declare elicitation gets an isError result naming it', async () => {
      const client = new V1Client({ name: 'e2e-v1-nocaps', version: '1' }, { capabilities: {} });
      await client.connect(new V1Transport(new URL(b.mcpUrl)));
      try {
        const result = await client.callTool({
          name: 'v2__confirm_deploy',
          arguments: { env: 'x' },
        });
        expect(result.isError).toBe(true);
        expect(text(result)).toMatch(/did not declare the capability/);
        expect(text(result)).toMatch(/elicitation/);
      } finally {
        await client.close();
      }
    });
  });

  describe('prompts/get and resources/read take the same rounds (wire notes §4 "Applies to")', () => {
    it.each([
      [
        'prompts/get',
        { name: 'v2__release_notes', arguments: { version: '1.2' } },
        'prompt-state-1.2',
        'notes 1.2',
      ],
      ['resources/read', { uri: 'vault://secret' }, 'resource-state', 'secret'],
    ])(
      '%s: a 2026 upstream’s input_required is wrapped, and the retry on the other replica unwrapped',
      async (method, params, upstreamState, answer) => {
        const first = await modernRequest(a.mcpUrl, method, params);
        expect(first.status).toBe(200);
        expect(first.json.result).toMatchObject({
          resultType: 'input_required',
          inputRequests: { confirm: { method: 'elicitation/create' } },
        });
        expect(first.json.result.requestState).toMatch(/^gwrs1\./);
        expect(first.json.result.requestState).not.toContain(upstreamState);
        const retry = await modernRequest(
          b.mcpUrl,
          method,
          {
            ...params,
            inputResponses: { confirm: ACCEPT },
            requestState: first.json.result.requestState,
          },
          ELICIT_AND_SAMPLE,
          2,
        );
        expect(retry.json.result.resultType).toBe('complete');
        expect(bodyText(retry.json.result)).toBe(`${answer} confirm=true (state=${upstreamState})`);
        expect(v2.calls(method).at(-1).params.requestState).toBe(upstreamState);
      },
    );

    it('a tool call’s envelope is refused on a prompts/get and a resources/read (-32602, never forwarded)', async () => {
      const tool = await modernCall(a.mcpUrl, 'v2__confirm_deploy', { arguments: { env: 'qa' } });
      const state = tool.json.result.requestState as string;
      const prompts = v2.calls('prompts/get').length;
      const reads = v2.calls('resources/read').length;
      for (const [method, params] of [
        ['prompts/get', { name: 'v2__release_notes', arguments: { version: '9' } }],
        ['resources/read', { uri: 'vault://secret' }],
      ] as const) {
        const retry = await modernRequest(b.mcpUrl, method, {
          ...params,
          inputResponses: { confirm: ACCEPT },
          requestState: state,
        });
        expect(retry.json.error.code).toBe(-32602);
        expect(retry.json.error.message).toMatch(/requestState/);
      }
      // and a prompt's envelope on another prompt name
      const prompt = await modernRequest(a.mcpUrl, 'prompts/get', {
        name: 'v2__release_notes',
        arguments: { version: '1' },
      });
      const foreign = await modernCall(b.mcpUrl, 'v2__confirm_deploy', {
        arguments: { env: 'qa' },
        requestState: prompt.json.result.requestState,
      });
      expect(foreign.json.error.code).toBe(-32602);
      expect(v2.calls('prompts/get').length).toBe(prompts + 1);
      expect(v2.calls('resources/read').length).toBe(reads);
    });

    it.each([
      [
        'prompts/get',
        { name: 'v1__interview', arguments: { topic: 'mcp' } },
        'Interview about mcp?',
        'interview mcp approve={"approve":true}',
      ],
      [
        'resources/read',
        { uri: 'notes://private' },
        'Open the diary?',
        'diary approve={"approve":true}',
      ],
    ])(
      '%s: a 2025 upstream asking mid-request parks it; the retry on the other replica gets the result',
      async (method, params, question, answer) => {
        const first = await modernRequest(a.mcpUrl, method, params);
        expect(first.json.result.resultType).toBe('input_required');
        const [key, request] = Object.entries(
          first.json.result.inputRequests as Record<string, any>,
        )[0]!;
        expect(request).toMatchObject({
          method: 'elicitation/create',
          params: { message: question },
        });
        const retry = await modernRequest(
          b.mcpUrl,
          method,
          {
            ...params,
            inputResponses: { [key]: { action: 'accept', content: { approve: true } } },
            requestState: first.json.result.requestState,
          },
          ELICIT_AND_SAMPLE,
          2,
        );
        expect(retry.json.result.resultType).toBe('complete');
        expect(bodyText(retry.json.result)).toBe(answer);
      },
    );

    it('the v2 client (auto) answers a prompt’s and a resource’s rounds with its handlers, from both upstream eras', async () => {
      const client = new V2Client(
        { name: 'e2e-auto-prompts', version: '1' },
        { versionNegotiation: { mode: 'auto' }, capabilities: ELICIT_AND_SAMPLE },
      );
      const asked: string[] = [];
      client.setRequestHandler('elicitation/create', (request) => {
        asked.push(String(request.params.message));
        return { action: 'accept', content: { confirm: true, approve: true } };
      });
      await client.connect(new StreamableHTTPClientTransport(new URL(b.mcpUrl)));
      try {
        const notes = await client.getPrompt({
          name: 'v2__release_notes',
          arguments: { version: '3' },
        });
        expect(bodyText(notes)).toBe('notes 3 confirm=true (state=prompt-state-3)');
        const secret = await client.readResource({ uri: 'vault://secret' });
        expect(bodyText(secret)).toBe('secret confirm=true (state=resource-state)');
        const interview = await client.getPrompt({
          name: 'v1__interview',
          arguments: { topic: 'x' },
        });
        expect(bodyText(interview)).toBe('interview x approve={"confirm":true,"approve":true}');
        const diary = await client.readResource({ uri: 'notes://private' });
        expect(bodyText(diary)).toBe('diary approve={"confirm":true,"approve":true}');
        expect(asked).toEqual([
          'Notes for 3?',
          'Reveal the secret?',
          'Interview about x?',
          'Open the diary?',
        ]);
      } finally {
        await client.close();
      }
    });

    it('a 2025 client is asked on its call stream for a 2026 upstream’s prompt and resource', async () => {
      const client = new V1Client(
        { name: 'e2e-v1-prompts', version: '1' },
        { capabilities: ELICIT_AND_SAMPLE },
      );
      const asked: string[] = [];
      client.setRequestHandler(ElicitRequestSchema, (request) => {
        asked.push(request.params.message);
        return { action: 'accept', content: { confirm: false } };
      });
      await client.connect(new V1Transport(new URL(a.mcpUrl)));
      try {
        const notes = await client.getPrompt({
          name: 'v2__release_notes',
          arguments: { version: '4' },
        });
        expect(notes).not.toHaveProperty('resultType');
        expect(bodyText(notes)).toBe('notes 4 confirm=false (state=prompt-state-4)');
        const secret = await client.readResource({ uri: 'vault://secret' });
        expect(bodyText(secret)).toBe('secret confirm=false (state=resource-state)');
        expect(asked).toEqual(['Notes for 4?', 'Reveal the secret?']);
      } finally {
        await client.close();
      }
    });

    it('a 2025 client that did not declare elicitation gets a -32603 naming it for a prompt (no isError form)', async () => {
      const client = new V1Client(
        { name: 'e2e-v1-prompts-nocaps', version: '1' },
        { capabilities: {} },
      );
      await client.connect(new V1Transport(new URL(b.mcpUrl)));
      try {
        await expect(
          client.getPrompt({ name: 'v2__release_notes', arguments: { version: '5' } }),
        ).rejects.toMatchObject({
          code: -32603,
          message: expect.stringMatching(/prompt.*elicitation/),
        });
        await expect(client.readResource({ uri: 'vault://secret' })).rejects.toMatchObject({
          code: -32603,
          message: expect.stringMatching(/resource.*elicitation/),
        });
      } finally {
        await client.close();
      }
    });
  });
});

/**
 * docs/operations.md §11 "One-time use": a retry that cannot reach the replica holding its call
 * (Redis does not answer: a failover, a hang) is told so with -32603, and its envelope is not
 * spent: the same retry reaches the call once Redis answers again, on any replica. It used to be
 * told the call was finished (-32602), the envelope spent on that replica only, while the call
 * stayed parked on the other.
 */
describe('a 2026 retry whose holder cannot be reached (Redis hangs)', () => {
  let own: OwnRedis;
  let asker: V1AskingUpstream;
  let holder: GatewayProcess;
  let other: GatewayProcess;

  beforeAll(async () => {
    [own, asker] = await Promise.all([OwnRedis.start(), V1AskingUpstream.start()]);
    const mcp = {
      ...gatewayConfig([], {
        upstreams: [upstream('v1', asker.url, { timeouts: { callMillis: 30_000 } })],
        redis: { keyPrefix: uniqueKeyPrefix(), commandTimeoutMillis: 300 },
      }),
      http: { modernEra: true },
    };
    const start = async (): Promise<GatewayProcess> => {
      const gateway = GatewayProcess.spawn({
        mcp,
        env: { MCP_SESSION_KEYS: TEST_SESSION_KEYS, REDIS_URL: own.url },
      });
      await gateway.waitForListening(90_000);
      await gateway.waitForReady(90_000);
      return gateway;
    };
    [holder, other] = await Promise.all([start(), start()]);
  }, 200_000);

  afterAll(async () => {
    own?.resume();
    await Promise.all([holder?.stop(), other?.stop()]);
    await asker?.stop();
    await own?.stop();
  });

  it('is a -32603 that spends nothing; the same retry completes once Redis answers', async () => {
    const first = await modernCall(holder.mcpUrl, 'v1__approve', {
      arguments: { question: 'Held?' },
    });
    const asked = first.json.result;
    expect(asked.resultType).toBe('input_required');
    const [key] = Object.keys(asked.inputRequests as Record<string, unknown>);
    const retry = () =>
      modernCall(
        other.mcpUrl,
        'v1__approve',
        {
          arguments: { question: 'Held?' },
          inputResponses: { [key!]: { action: 'accept', content: { approve: true } } },
          requestState: asked.requestState,
        },
        ELICIT_AND_SAMPLE,
        2,
      );
    own.pause();
    let during;
    try {
      during = await retry();
    } finally {
      own.resume();
    }
    expect(during.json.error).toMatchObject({ code: -32603 });
    expect(during.json.error.message).toContain('cannot be reached now');
    // the same envelope, once Redis answers: it reaches the parked call (a retry that still
    // could not reach it spends nothing either)
    let after = await retry();
    for (let i = 0; i < 20 && after.json.error?.message?.includes('cannot be reached now'); i++) {
      await new Promise((r) => setTimeout(r, 500));
      after = await retry();
    }
    expect(after.json).toMatchObject({ result: { resultType: 'complete' } });
    expect(text(after.json.result)).toBe('approve={"action":"accept","content":{"approve":true}}');
  });

  it("a retry whose holder took its input just before Redis went away is told so within the grace, not after the call's whole time", async () => {
    const first = await modernCall(holder.mcpUrl, 'v1__slow_approve', {
      arguments: { question: 'Lost?' },
    });
    const asked = first.json.result;
    expect(asked.resultType).toBe('input_required');
    const [key] = Object.keys(asked.inputRequests as Record<string, unknown>);
    const started = Date.now();
    const retry = modernCall(
      other.mcpUrl,
      'v1__slow_approve',
      {
        arguments: { question: 'Lost?' },
        inputResponses: { [key!]: { action: 'accept', content: { approve: true } } },
        requestState: asked.requestState,
      },
      ELICIT_AND_SAMPLE,
      3,
    );
    // the holder has the input and works 4 s; its reply would be published into a Redis that is gone
    const answered = (): boolean =>
      asker.bodies.some(
        (b) =>
          b?.method === undefined && JSON.stringify(b?.result ?? null).includes('"approve":true'),
      );
    await waitFor(answered, 10_000);
    await own.stop();
    try {
      const during = await retry;
      expect(during.json.error).toMatchObject({ code: -32603 });
      expect(during.json.error.message).toContain('cannot be reached now');
      // the holder's 8 s grace after the subscriber lost Redis, not callMillis (30 s) and more
      expect(Date.now() - started).toBeLessThan(25_000);
    } finally {
      await own.restart();
    }
  }, 60_000);
});
