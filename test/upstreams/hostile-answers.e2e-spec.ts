import { GatewayProcess, waitFor } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { postRaw, rpc } from '../support/rpc';
import { ScriptedUpstream, upTool, type ReceivedRequest } from '../support/scripted-upstream';
import { connectV1 } from '../support/sdk-clients';

const V = '2026-07-28';
/** The gateway's limit on one upstream message: MAX_MESSAGE_DEPTH of libs/upstream. */
const LIMIT = 129;
const DEPTH = 100_000;

/** `{"a":{"a":…1…}}` nested `depth` levels. */
const nested = (depth: number): string => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

const envelope = {
  'io.modelcontextprotocol/protocolVersion': V,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
};

/** A 2026-07-28 request by raw HTTP, with its id. */
function modern(
  url: string,
  method: string,
  params: Record<string, unknown>,
  id: number | string,
  name?: string,
): ReturnType<typeof postRaw> {
  return postRaw(
    url,
    JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: envelope } }),
    {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': V,
      'mcp-method': method,
      ...(name === undefined ? {} : { 'mcp-name': name }),
    },
  );
}

/** The response of `req` with `resultText` as its result, exactly as written. */
function rawResponse(req: ReceivedRequest, resultText: string, sse: boolean) {
  const text = `{"jsonrpc":"2.0","id":${JSON.stringify(req.id)},"result":${resultText}}`;
  return sse
    ? { headers: { 'content-type': 'text/event-stream' }, raw: `event: message\ndata: ${text}\n\n` }
    : { headers: { 'content-type': 'application/json' }, raw: text };
}

/** Answers every deep-* request of a scripted upstream with a value nested DEPTH levels. */
function scriptDeep(up: ScriptedUpstream, modernEra: boolean): void {
  const complete = modernEra ? ',"resultType":"complete"' : '';
  up.onTool('deep-json', (req) =>
    rawResponse(req, `{"content":[],"structuredContent":${nested(DEPTH)}${complete}}`, false),
  );
  up.onTool('deep-sse', (req) =>
    rawResponse(req, `{"content":[],"structuredContent":${nested(DEPTH)}${complete}}`, true),
  );
  // the response is fine; a notification before it on the call's own stream is not
  up.onTool('deep-relayed', (req) => ({
    headers: { 'content-type': 'text/event-stream' },
    raw:
      `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":${nested(DEPTH)}}}\n\n` +
      `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: req.id, result: { content: [] } })}\n\n`,
  }));
  // …nor a request to the client
  up.onTool('deep-ask', (req) => ({
    headers: { 'content-type': 'text/event-stream' },
    raw:
      `event: message\ndata: {"jsonrpc":"2.0","id":"ask-1","method":"elicitation/create","params":{"message":"?","requestedSchema":${nested(DEPTH)}}}\n\n` +
      `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: req.id, result: { content: [] } })}\n\n`,
  }));
  up.onTool('at-limit', (req) =>
    // message (1) + result (2) + structuredContent and below: exactly the limit
    rawResponse(req, `{"content":[],"structuredContent":${nested(LIMIT - 2)}${complete}}`, false),
  );
  up.on('prompts/get', (req) =>
    rawResponse(req, `{"messages":[],"description":${nested(DEPTH)}${complete}}`, false),
  );
  up.on('completion/complete', (req) =>
    rawResponse(req, `{"completion":{"values":[],"x":${nested(DEPTH)}}${complete}}`, false),
  );
  up.on('resources/read', (req) =>
    rawResponse(req, `{"contents":[${nested(DEPTH)}]${complete}}`, true),
  );
}

const TOOLS = ['deep-json', 'deep-sse', 'deep-relayed', 'deep-ask', 'at-limit'].map((n) =>
  upTool(n),
);
/** The gateway's own credential towards the upstreams that ask inside its session-level answers. */
const OWN_AUTH = 'Bearer gateway-own-hostile';
const DEEP_LIST = `{"tools":[{"name":"fine","inputSchema":{"type":"object","properties":{"x":${nested(DEPTH)}}}}]}`;

/**
 * docs/security.md, "What an upstream can make the gateway do": an upstream answer nested
 * deeper than the limit is refused before it is parsed (tools/call: an isError result; other
 * methods: -32603 with the request's id; a list pull: UpstreamTooDeepError), from 2025 and
 * 2026 upstreams, as JSON or SSE; and a server→client request that belongs to no caller (on
 * the shared GET stream, inside a pull's tools/list answer, or inside the SSE answer to the
 * gateway's own initialize or server/discover probe) is answered -32601 at once.
 */
describe.each(['fastify', 'node'])('hostile upstream answers (MCP_HTTP_SERVER=%s)', (listener) => {
  let legacy: ScriptedUpstream;
  let stateless: ScriptedUpstream;
  let deepList: ScriptedUpstream;
  let deepList26: ScriptedUpstream;
  let asker: ScriptedUpstream;
  /** A 2025 upstream that asks inside its initialize answer; a 2026 one inside server/discover's. */
  let initAsker: ScriptedUpstream;
  let discoverAsker: ScriptedUpstream;
  /** Upstreams (2025, 2026) that answer prompts/get, resources/read and completions with a task. */
  let taskLegacy: ScriptedUpstream;
  let taskModern: ScriptedUpstream;
  let gateway: GatewayProcess;
  /** Ids of the requests `asker` sent inside its tools/list answers. */
  const pullAsks: string[] = [];
  let asks = 0;

  beforeAll(async () => {
    [legacy, stateless, deepList, deepList26, asker, initAsker, discoverAsker] = await Promise.all([
      ScriptedUpstream.start({
        tools: TOOLS,
        prompts: [{ name: 'p' }],
        resources: [{ uri: 'deep://r', name: 'r' }],
        capabilities: { tools: {}, resources: {}, prompts: {}, completions: {} },
      }),
      ScriptedUpstream.start({ era: '2026', tools: TOOLS, prompts: [{ name: 'p' }] }),
      ScriptedUpstream.start({ tools: [upTool('fine')] }),
      ScriptedUpstream.start({ era: '2026', tools: [upTool('fine')] }),
      ScriptedUpstream.start({ tools: [upTool('ask')], sessionId: 'asker-1', getStream: true }),
      ScriptedUpstream.start({ tools: [upTool('fine')], sessionId: `init-asker-${listener}` }),
      ScriptedUpstream.start({ era: '2026', tools: [upTool('fine')] }),
    ]);
    const answeringWithTasks = (era: '2025' | '2026'): Promise<ScriptedUpstream> =>
      ScriptedUpstream.start({
        era,
        tools: [upTool('fine')],
        prompts: [{ name: 'p' }],
        resources: [{ uri: `task${era}://r`, name: 'r' }],
        capabilities: { tools: {}, resources: {}, prompts: {}, completions: {} },
      });
    [taskLegacy, taskModern] = await Promise.all([
      answeringWithTasks('2025'),
      answeringWithTasks('2026'),
    ]);
    for (const up of [taskLegacy, taskModern])
      for (const method of ['prompts/get', 'resources/read', 'completion/complete'])
        up.on(method, () => ({
          result: {
            resultType: 'task',
            taskId: 'RAW-UPSTREAM-TASK',
            status: 'working',
            ttlMs: 60_000,
            pollIntervalMs: 1000,
            createdAt: new Date().toISOString(),
            lastUpdatedAt: new Date().toISOString(),
          },
        }));
    scriptDeep(legacy, false);
    scriptDeep(stateless, true);
    deepList.on('tools/list', (req) => rawResponse(req, DEEP_LIST, false));
    deepList26.on('tools/list', (req) => rawResponse(req, DEEP_LIST, true));
    asker.on('tools/list', () => {
      const id = `pull-ask-${listener}-${++asks}`;
      pullAsks.push(id);
      return {
        events: [
          { jsonrpc: '2.0', id, method: 'sampling/createMessage', params: { messages: [] } },
        ],
        result: { tools: [upTool('ask')] },
      };
    });
    // the SDK cannot send a request inside an initialize (or server/discover) answer: scripted
    initAsker.on('initialize', () => ({
      events: [
        {
          jsonrpc: '2.0',
          id: `init-ask-${listener}`,
          method: 'sampling/createMessage',
          params: { messages: [] },
        },
      ],
      result: {
        protocolVersion: '2025-11-25',
        capabilities: { tools: {} },
        serverInfo: { name: 'init-asker', version: '1' },
      },
      headers: { 'mcp-session-id': `init-asker-${listener}` },
    }));
    discoverAsker.on('server/discover', () => ({
      events: [
        {
          jsonrpc: '2.0',
          id: `discover-ask-${listener}`,
          method: 'elicitation/create',
          params: { message: 'hi', requestedSchema: { type: 'object', properties: {} } },
        },
      ],
      result: {
        resultType: 'complete',
        supportedVersions: [V],
        capabilities: { tools: {} },
        ttlMs: 0,
        cacheScope: 'private',
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'discover-asker', version: '1' } },
      },
    }));
    const own = { authorization: { mode: 'static', valueEnv: 'HOSTILE_OWN_AUTH' } };
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], {
        upstreams: [
          upstream('leg', legacy.url),
          upstream('mod', stateless.url),
          upstream('dl', deepList.url),
          upstream('dl26', deepList26.url),
          upstream('ask', asker.url),
          upstream('ia', initAsker.url, own),
          upstream('da', discoverAsker.url, own),
          upstream('tkl', taskLegacy.url),
          upstream('tkm', taskModern.url),
        ],
      }),
      env: { MCP_HTTP_SERVER: listener, HOSTILE_OWN_AUTH: OWN_AUTH },
    });
    await waitFor(async () => {
      const view = (await (await fetch(`${gateway.managementUrl}/actuator/upstreams`)).json()) as {
        upstreams: Array<{ id: string; lastAttemptAt: string | null }>;
      };
      return view.upstreams.every((u) => u.lastAttemptAt !== null);
    }, 20_000);
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all(
      [
        legacy,
        stateless,
        deepList,
        deepList26,
        asker,
        initAsker,
        discoverAsker,
        taskLegacy,
        taskModern,
      ].map((u) => u?.stop()),
    );
  });

  describe('answers nested deeper than the limit', () => {
    it.each([
      ['leg__deep-json', '2025 upstream, JSON answer'],
      ['leg__deep-sse', '2025 upstream, SSE answer'],
      ['mod__deep-json', '2026 upstream, JSON answer'],
      ['mod__deep-sse', '2026 upstream, SSE answer'],
      ['leg__deep-relayed', '2025 upstream, a relayed notification on the answer'],
      ['leg__deep-ask', '2025 upstream, a server request on the answer'],
    ])(
      "a 2026 client's tools/call of %s (%s) is an isError result with the request's id, not HTTP 500",
      async (name) => {
        const answer = await modern(
          gateway.mcpUrl,
          'tools/call',
          { name, arguments: {} },
          'c-26',
          name,
        );
        expect(answer.status).toBe(200);
        expect(answer.json.id).toBe('c-26');
        expect(answer.json.result.isError).toBe(true);
        expect(JSON.stringify(answer.json.result.content)).toContain(
          `nests deeper than ${LIMIT} levels`,
        );
        expect(answer.text).not.toContain('{"a":{"a":{"a"');
      },
    );

    it('a 2025 client (v1 SDK) gets the same isError result; an answer at the limit still passes', async () => {
      const client = await connectV1(gateway.mcpUrl);
      try {
        for (const name of ['leg__deep-json', 'leg__deep-sse', 'mod__deep-sse']) {
          const result = await client.callTool({ name, arguments: {} });
          expect(result.isError).toBe(true);
          expect(JSON.stringify(result.content)).toContain(`nests deeper than ${LIMIT} levels`);
        }
        const fine = await client.callTool({ name: 'leg__at-limit', arguments: {} });
        expect(fine.isError).toBeFalsy();
        expect(JSON.stringify(fine.structuredContent).length).toBeGreaterThan(LIMIT * 4);
      } finally {
        await client.close();
      }
    });

    it("prompts/get, resources/read and completion/complete answered nested too deep are -32603 with the request's id, in both eras", async () => {
      const prompt26 = await modern(
        gateway.mcpUrl,
        'prompts/get',
        { name: 'mod__p' },
        'p-26',
        'mod__p',
      );
      expect(prompt26.json).toMatchObject({ id: 'p-26', error: { code: -32603 } });
      expect(prompt26.json.error.message).toContain(`nests deeper than ${LIMIT} levels`);
      const prompt25 = await rpc(gateway.mcpUrl, 'prompts/get', { name: 'leg__p' }, {}, 'p-25');
      expect(prompt25.json).toMatchObject({ id: 'p-25', error: { code: -32603 } });
      const read = await rpc(gateway.mcpUrl, 'resources/read', { uri: 'deep://r' }, {}, 'r-25');
      expect(read.json).toMatchObject({ id: 'r-25', error: { code: -32603 } });
      expect(read.json.error.message).toContain(`nests deeper than ${LIMIT} levels`);
      const completion = await rpc(
        gateway.mcpUrl,
        'completion/complete',
        { ref: { type: 'ref/prompt', name: 'leg__p' }, argument: { name: 'x', value: '' } },
        {},
        'cc-25',
      );
      expect(completion.json).toMatchObject({ id: 'cc-25', error: { code: -32603 } });
      const read26 = await modern(
        gateway.mcpUrl,
        'resources/read',
        { uri: 'deep://r' },
        7,
        'deep://r',
      );
      expect(read26.json).toMatchObject({ id: 7, error: { code: -32603 } });
    });

    // a 2025 result has no resultType (wire notes §2): the 2025 upstream's is a member of its own,
    // cut, and its answer a complete result (era/legacy-result-type.e2e-spec.ts)
    it("a 2026 upstream's task answered to prompts/get, resources/read or completion/complete is -32603 naming it, for clients of both eras, whatever the client declared: the upstream's own task id never reaches the client; a 2025 upstream's resultType is no task", async () => {
      const expected = (id: string, method: string) => ({
        id,
        error: {
          code: -32603,
          message: `Upstream ${id.startsWith('l') ? 'tkl' : 'tkm'} answered ${method} with a task: the gateway relays an upstream's tasks for tools/call only`,
        },
      });
      const tasksDeclared = {
        ...envelope,
        'io.modelcontextprotocol/clientCapabilities': {
          extensions: { 'io.modelcontextprotocol/tasks': {} },
        },
      };
      for (const [prefix, era] of [
        ['l', '2025'],
        ['m', '2026'],
      ] as const) {
        const up = prefix === 'l' ? 'tkl' : 'tkm';
        const requests: [string, Record<string, unknown>, string | undefined][] = [
          ['prompts/get', { name: `${up}__p` }, `${up}__p`],
          ['resources/read', { uri: `task${era}://r` }, `task${era}://r`],
          [
            'completion/complete',
            { ref: { type: 'ref/prompt', name: `${up}__p` }, argument: { name: 'x', value: '' } },
            undefined,
          ],
        ];
        for (const [method, params, name] of requests) {
          const id = `${prefix}-${method}`;
          if (era === '2025') {
            const legacyResult = await rpc(gateway.mcpUrl, method, params, {}, id);
            expect(legacyResult.json.result).toMatchObject({ taskId: 'RAW-UPSTREAM-TASK' });
            expect(legacyResult.json.result.resultType).toBeUndefined();
            const modernResult = await modern(gateway.mcpUrl, method, params, id, name);
            expect(modernResult.json.result.resultType).toBe('complete');
            continue;
          }
          const legacyAnswer = await rpc(gateway.mcpUrl, method, params, {}, id);
          expect(legacyAnswer.json).toEqual({ jsonrpc: '2.0', ...expected(id, method) });
          const modernAnswer = await modern(gateway.mcpUrl, method, params, id, name);
          expect(modernAnswer.json).toEqual({ jsonrpc: '2.0', ...expected(id, method) });
          const declared = await postRaw(
            gateway.mcpUrl,
            JSON.stringify({
              jsonrpc: '2.0',
              id,
              method,
              params: { ...params, _meta: tasksDeclared },
            }),
            {
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
              'mcp-protocol-version': V,
              'mcp-method': method,
              ...(name === undefined ? {} : { 'mcp-name': name }),
            },
          );
          expect(declared.json).toEqual({ jsonrpc: '2.0', ...expected(id, method) });
          expect(declared.text).not.toContain('RAW-UPSTREAM-TASK');
        }
      }
    });

    it('a completion of more than 100 values is cut to the first 100 with hasMore and the total, in both eras', async () => {
      const values = Array.from({ length: 250 }, (_, i) => `v${i}`);
      legacy.on('completion/complete', () => ({ result: { completion: { values } } }));
      try {
        const params = {
          ref: { type: 'ref/prompt', name: 'leg__p' },
          argument: { name: 'x', value: '' },
        };
        const legacyAnswer = await rpc(gateway.mcpUrl, 'completion/complete', params, {}, 'c1');
        const modernAnswer = await modern(gateway.mcpUrl, 'completion/complete', params, 'c2');
        for (const answer of [legacyAnswer, modernAnswer])
          expect(answer.json.result.completion).toEqual({
            values: values.slice(0, 100),
            total: 250,
            hasMore: true,
          });
      } finally {
        scriptDeep(legacy, false);
      }
    });

    it('a list pull whose tools/list nests too deep (2025 JSON, 2026 SSE) fails as UpstreamTooDeepError, not UnexpectedPullError', async () => {
      const view = (await (await fetch(`${gateway.managementUrl}/actuator/upstreams`)).json()) as {
        upstreams: Array<Record<string, any>>;
      };
      for (const id of ['dl', 'dl26']) {
        const status = view.upstreams.find((u) => u.id === id);
        expect(status?.lastErrorType).toBe('UpstreamTooDeepError');
        // the status view can be read before the child's log line has crossed its stdout pipe
        const logged = new RegExp(`Upstream ${id}: list pull failed \\(UpstreamTooDeepError`);
        await waitFor(() => logged.test(gateway.output), 10_000);
        expect(gateway.output).toMatch(logged);
        expect(gateway.output).not.toMatch(new RegExp(`Upstream ${id}:[^\\n]*UnexpectedPullError`));
      }
      // the deep answers reached no client and no log line
      expect(gateway.output).not.toContain('{"a":{"a":{"a"');
    });
  });

  describe('server→client requests that belong to no caller', () => {
    it('a sampling/createMessage inside a pull\u2019s tools/list answer is answered -32601 at once', async () => {
      await waitFor(() => pullAsks.length >= 1, 10_000);
      const id = pullAsks[0]!;
      await waitFor(
        () => asker.requests.some((r) => r.message?.id === id && r.method === undefined),
        10_000,
      );
      const answer = asker.requests.find((r) => r.message?.id === id && r.method === undefined)!;
      expect(answer.message).toMatchObject({ jsonrpc: '2.0', id, error: { code: -32601 } });
      expect(answer.headers['mcp-session-id']).toBe('asker-1');
    });

    it('sampling/createMessage and elicitation/create on the shared GET stream are answered -32601 at once', async () => {
      await waitFor(() => asker.openStreams >= 1, 10_000);
      const sampling = `get-sampling-${listener}`;
      const elicitation = `get-elicit-${listener}`;
      asker.push({
        jsonrpc: '2.0',
        id: sampling,
        method: 'sampling/createMessage',
        params: { messages: [] },
      });
      asker.push({
        jsonrpc: '2.0',
        id: elicitation,
        method: 'elicitation/create',
        params: { message: 'hi' },
      });
      const answerOf = (id: string) =>
        asker.requests.find((r) => r.message?.id === id && r.method === undefined);
      await waitFor(
        () => answerOf(sampling) !== undefined && answerOf(elicitation) !== undefined,
        10_000,
      );
      for (const id of [sampling, elicitation]) {
        expect(answerOf(id)!.message).toMatchObject({
          jsonrpc: '2.0',
          id,
          error: { code: -32601 },
        });
        expect(answerOf(id)!.headers['mcp-session-id']).toBe('asker-1');
      }
    });

    it.each([
      ['initialize', 'ia', 'init-ask', '2025'],
      ['server/discover', 'da', 'discover-ask', '2026'],
    ])(
      "a request inside the %s SSE answer is answered -32601 at once with the gateway's own credential; the session still serves tools",
      async (_method, id, prefix, era) => {
        const up = era === '2025' ? initAsker : discoverAsker;
        const asked = `${prefix}-${listener}`;
        const answerTo = () =>
          up.requests.find((r) => r.message?.id === asked && r.method === undefined);
        await waitFor(() => answerTo() !== undefined, 10_000);
        const answer = answerTo()!;
        expect(answer.message?.id).toBe(asked);
        expect(answer.message?.error?.code).toBe(-32601);
        expect(answer.message).toMatchObject({
          jsonrpc: '2.0',
          id: asked,
          error: { code: -32601 },
        });
        expect(answer.headers.authorization).toBe(OWN_AUTH);
        // the 2025 answer goes on the session the initialize answer opened; 2026 has none
        expect(answer.headers['mcp-session-id']).toBe(
          era === '2025' ? `init-asker-${listener}` : undefined,
        );
        // answered once: the request was not also left pending or relayed anywhere
        expect(up.requests.filter((r) => r.message?.id === asked)).toHaveLength(1);

        const listed = await rpc(gateway.mcpUrl, 'tools/list', {}, {}, `tl-${id}`);
        expect((listed.json.result.tools as Array<{ name: string }>).map((t) => t.name)).toContain(
          `${id}__fine`,
        );
        const called =
          era === '2025'
            ? (await rpc(gateway.mcpUrl, 'tools/call', { name: `${id}__fine` }, {}, `c-${id}`)).json
            : (
                await modern(
                  gateway.mcpUrl,
                  'tools/call',
                  { name: `${id}__fine`, arguments: {} },
                  `c-${id}`,
                  `${id}__fine`,
                )
              ).json;
        expect(called.id).toBe(`c-${id}`);
        expect(called.result.isError).toBeFalsy();
        expect(called.result.content[0].text).toContain('"tool":"fine"');
        expect(up.calls('fine')).toHaveLength(1);
      },
    );

    it("a flood of requests for the client's input on a 2026 client's call ends the call at the cap, and none is kept or answered past it", async () => {
      const flood = `flood-${listener}`;
      asker.onTool('ask', () => ({
        events: Array.from({ length: 200 }, (_, i) => ({
          jsonrpc: '2.0',
          id: `${flood}-${i}`,
          method: 'elicitation/create',
          params: { message: `question ${i}`, requestedSchema: { type: 'object', properties: {} } },
        })),
        result: { content: [{ type: 'text', text: 'never reached' }] },
      }));
      const posted = (): number =>
        asker.requests.filter(
          (r) => r.method === undefined && String(r.message?.id).startsWith(flood),
        ).length;
      const call = await postRaw(
        gateway.mcpUrl,
        JSON.stringify({
          jsonrpc: '2.0',
          id: 'f1',
          method: 'tools/call',
          params: {
            name: 'ask__ask',
            arguments: {},
            _meta: {
              ...envelope,
              'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
            },
          },
        }),
        {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': V,
          'mcp-method': 'tools/call',
          'mcp-name': 'ask__ask',
        },
      );
      expect(call.status).toBe(200);
      // the call ended: the cap's reason, not 200 open questions
      expect(call.json.result.resultType).toBe('complete');
      expect(call.json.result.isError).toBe(true);
      expect(call.json.result.content[0].text).toContain(
        "sent more requests for the client's input than one call may hold",
      );
      // the upstream was told to stop, and got no answers to the questions past the cap
      await waitFor(() => asker.rpcs('notifications/cancelled').length > 0, 10_000);
      await new Promise((r) => setTimeout(r, 300));
      expect(posted()).toBeLessThanOrEqual(32);
      asker.off('tools/call');
    });
  });
});
