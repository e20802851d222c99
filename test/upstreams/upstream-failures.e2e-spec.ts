import { request } from 'node:http';
import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { callTool, postRaw, rpc, STANDARD_HEADERS } from '../support/rpc';
import {
  ScriptedUpstream,
  upTool,
  type ReceivedRequest,
  type Reply,
} from '../support/scripted-upstream';
import { TestToolService } from '../support/tool-service';

/**
 * Upstream MCP servers that misbehave, through a real gateway (docs/operations.md §10, and
 * the field cases of ../shared/cases that touch upstreams): down at boot, back later,
 * garbage, 5xx, too slow, too large, paginating, looping, broken schemas, slow calls, names
 * that collide once rewritten, headers that must not leak. The upstreams are raw node:http
 * servers (test/support/scripted-upstream.ts) whose every answer the test scripts and whose
 * every request it can inspect.
 *
 * Field cases, where this gateway's policy differs from the case's proposal (the cases allow
 * that when the expectation is changed, not deleted):
 * - B04: upstream schemas are published as sent (docs/operations.md §10 "Checks"; B03 "preferred"):
 *   an array without `items` is not normalised; all four tools stay listed.
 * - B06: a repeated cursor fails the whole pull (docs/operations.md §10 "Lists"), so the looping
 *   upstream's tools are not served at all rather than once; it is asked twice per pull.
 * - B13: a client that disconnects cancels the upstream request
 *   (docs/operations.md §10 "Relaying"), against the case's "SHOULD NOT". A cancelled call gets
 *   no response, as the case expects (on an event stream; a JSON-only client's POST ends with
 *   its isError result, docs/operations.md §2 "Calls nobody waits for").
 * - B25: an upstream's list_changed refreshes the catalog; clients are told of the change on
 *   their session GET stream (2025) or subscriptions/listen stream (2026), with `listChanged:
 *   true` (docs/operations.md §11 "Notification streams"; test/modern/listen.e2e-spec.ts), and see
 *   the new tools on their next tools/list.
 */

const PARTIAL = 'io.github.mcp-gateway/partialSources';
const LISTS = ['tools/list', 'resources/list', 'resources/templates/list', 'prompts/list'];

/** One row of /actuator/upstreams. */
async function upstreamView(gateway: GatewayProcess, id: string): Promise<any> {
  const view = await upstreamsView(gateway);
  return view.upstreams.find((u: { id: string }) => u.id === id);
}

async function upstreamsView(gateway: GatewayProcess): Promise<any> {
  return (await fetch(`${gateway.managementUrl}/actuator/upstreams`)).json();
}

async function listResult(gateway: GatewayProcess, method = 'tools/list'): Promise<any> {
  const answer = await rpc(gateway.mcpUrl, method);
  expect(answer.json.error).toBeUndefined();
  return answer.json.result;
}

async function toolNames(gateway: GatewayProcess): Promise<string[]> {
  return (await listResult(gateway)).tools.map((t: { name: string }) => t.name).sort();
}

let misses = 0;
/**
 * One refresh round of every source, applied before this resolves: a tools/call naming an
 * unknown tool waits for a round that started after it (contract §8).
 */
async function refreshRound(gateway: GatewayProcess): Promise<void> {
  const answer = await callTool(gateway.mcpUrl, `no_such_tool_${++misses}`);
  expect(answer.error.code).toBe(-32001);
}

/** The text of a CallToolResult's first content block. */
function textOf(answer: any): string {
  return answer.result.content[0].text as string;
}

/** A 2025-11-25 session with the gateway (initialize, notifications/initialized). */
async function openSession(url: string): Promise<Record<string, string>> {
  const init = await rpc(url, 'initialize', {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'upstream-failures', version: '0' },
  });
  const sid = init.headers.get('mcp-session-id');
  expect(sid).toBeTruthy();
  const headers = { 'mcp-session-id': sid!, 'mcp-protocol-version': '2025-11-25' };
  const initialized = await postRaw(
    url,
    JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    { ...STANDARD_HEADERS, ...headers },
  );
  expect(initialized.status).toBe(202);
  return headers;
}

/** What the client received on one POST, message by message, with arrival times. */
interface Streamed {
  readonly status: number;
  readonly contentType: string;
  readonly raw: string;
  readonly messages: { readonly at: number; readonly message: any }[];
}

/** POSTs a JSON-RPC body and reads the answer as it arrives (SSE events, or one JSON body). */
async function streamPost(
  url: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<Streamed> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { ...STANDARD_HEADERS, ...headers },
    body: JSON.stringify(body),
  });
  const contentType = res.headers.get('content-type') ?? '';
  const messages: { at: number; message: any }[] = [];
  const decoder = new TextDecoder();
  const reader = res.body!.getReader();
  let raw = '';
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const text = decoder.decode(value, { stream: true });
    raw += text;
    buffer += text;
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('\n');
      if (data !== '') messages.push({ at: Date.now(), message: JSON.parse(data) });
    }
  }
  if (!contentType.startsWith('text/event-stream') && raw !== '')
    messages.push({ at: Date.now(), message: JSON.parse(raw) });
  return { status: res.status, contentType, raw, messages };
}

/** Asserts that a text a client sees names no address of an upstream. */
function expectNoAddress(text: string, upstream: ScriptedUpstream): void {
  expect(text).not.toContain('127.0.0.1');
  expect(text).not.toContain('localhost');
  expect(text).not.toContain(String(upstream.port));
  expect(text).not.toContain(upstream.url);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A 2025 upstream's requests after its initialize (the era probe before it has no session). */
function sinceInitialize(up: ScriptedUpstream): ReceivedRequest[] {
  const at = up.requests.findIndex((r) => r.method === 'initialize');
  expect(at).toBeGreaterThanOrEqual(0);
  return up.requests.slice(at + 1);
}

describe('upstream MCP servers that fail (docs/operations.md §10)', () => {
  const track = stopAfterEach();

  it('an upstream down at boot does not block the catalog: ready, bundle tools served, upstream unreachable and named missing; the next refresh after it comes back makes it healthy', async () => {
    const service = track(await TestToolService.start(manifest('ins', [tool({ name: 'ins.a' })])));
    const up = await ScriptedUpstream.down({
      tools: [upTool('echo')],
      prompts: [{ name: 'greet', description: 'a prompt' }],
    });
    const off = track(await ScriptedUpstream.start({ tools: [upTool('never')] }));
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('ins', service, 'ins.')], {
          upstreams: [
            { id: 'flaky', url: up.url, timeouts: { connectMillis: 300, listMillis: 1000 } },
            { id: 'off', url: off.url, enabled: false },
          ],
        }),
        waitReady: true,
      }),
    );
    expect((await gateway.readiness()).status).toBe(200);
    expect(await toolNames(gateway)).toEqual(['ins.a']);
    expect((await listResult(gateway))._meta[PARTIAL]).toEqual([
      { id: 'flaky', kind: 'upstream', state: 'missing' },
    ]);
    expect(await upstreamView(gateway, 'flaky')).toMatchObject({
      status: 'unreachable',
      era: null,
      counts: { tools: 0, resources: 0, resourceTemplates: 0, prompts: 0 },
      lastSuccessAt: null,
      lastErrorType: 'UpstreamUnreachableError',
      source: null,
    });
    expect((await upstreamView(gateway, 'flaky')).consecutiveFailures).toBeGreaterThanOrEqual(1);
    // A disabled upstream is never contacted and is not a partial source.
    expect(await upstreamView(gateway, 'off')).toMatchObject({
      status: 'disabled',
      lastAttemptAt: null,
    });
    expect(off.requests).toHaveLength(0);
    expectNoAddress(JSON.stringify(await upstreamsView(gateway)), up);
    // The bundle's tools work meanwhile.
    expect((await callTool(gateway.mcpUrl, 'ins.a', { x: 1 })).result.isError).toBeUndefined();

    await up.listen();
    track(up);
    await refreshRound(gateway);
    const view = await upstreamView(gateway, 'flaky');
    expect(view).toMatchObject({
      status: 'healthy',
      era: '2025',
      counts: { tools: 1, prompts: 1 },
      consecutiveFailures: 0,
      lastErrorType: null,
      source: 'remote',
    });
    expect(view.lastSuccessAt).not.toBeNull();
    expect(await toolNames(gateway)).toEqual(['flaky__echo', 'ins.a']);
    for (const method of ['tools/list', 'prompts/list'])
      expect((await listResult(gateway, method))._meta?.[PARTIAL]).toBeUndefined();
    expect((await listResult(gateway, 'prompts/list')).prompts.map((p: any) => p.name)).toEqual([
      'flaky__greet',
    ]);
    const call = await callTool(gateway.mcpUrl, 'flaky__echo', { q: 1 });
    expect(JSON.parse(textOf(call))).toEqual({ tool: 'echo', arguments: { q: 1 } });
    expect(off.requests).toHaveLength(0);
  });

  it('an upstream that never answers and no bundle at all: ready with an empty catalog that says the upstream is missing', async () => {
    const up = await ScriptedUpstream.down({ tools: [upTool('echo')] });
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([], {
          upstreams: [{ id: 'only', url: up.url, timeouts: { connectMillis: 300 } }],
        }),
        waitReady: true,
      }),
    );
    const list = await listResult(gateway);
    expect(list.tools).toEqual([]);
    expect(list._meta[PARTIAL]).toEqual([{ id: 'only', kind: 'upstream', state: 'missing' }]);
    expect((await upstreamView(gateway, 'only')).status).toBe('unreachable');
  });

  describe('a failed pull keeps the last good lists: degraded, still listed and callable, named last-good', () => {
    let service: TestToolService;
    let up: ScriptedUpstream;
    let gateway: GatewayProcess;
    const goodTools = [upTool('a'), upTool('b')];

    beforeAll(async () => {
      service = await TestToolService.start(manifest('ins', [tool({ name: 'ins.a' })]));
      up = await ScriptedUpstream.start({
        tools: goodTools,
        resources: [{ uri: 'mem://r1', name: 'r1' }],
        resourceTemplates: [{ uriTemplate: 'mem://t/{x}', name: 't' }],
        prompts: [{ name: 'p1' }],
      });
      gateway = await GatewayProcess.start({
        mcp: gatewayConfig([bundle('ins', service, 'ins.')], {
          registry: { maxPagesPerList: 4 },
          discovery: { maxToolsTotal: 8 },
          execution: { maxResponseBytes: 64 * 1024 },
          upstreams: [{ id: 'up', url: up.url, timeouts: { listMillis: 1000, callMillis: 2000 } }],
        }),
        waitReady: true,
      });
    });
    afterAll(async () => {
      await gateway?.stop();
      await up?.stop();
      await service?.stop();
    });

    const listReply = (result: unknown): Reply => ({ result });
    /** What the upstream was asked for, by cursor, in the failed round. */
    type CursorCheck = (cursors: unknown[]) => void;
    type Case = [string, string, () => void | Promise<void>, CursorCheck?];
    const cases: Case[] = [
      [
        'garbage: a body that is not JSON',
        'UpstreamBadAnswerError',
        () => void up.on('tools/list', () => ({ raw: '<<garbage>> {"jsonrpc":' })),
      ],
      [
        'a JSON-RPC response to another id',
        'UpstreamBadAnswerError',
        () =>
          void up.on('tools/list', () => ({
            raw: JSON.stringify({ jsonrpc: '2.0', id: 987654, result: { tools: [] } }),
            headers: { 'content-type': 'application/json' },
          })),
      ],
      [
        'a result without a tools array',
        'UpstreamBadAnswerError',
        () => void up.on('tools/list', () => listReply({ items: [] })),
      ],
      [
        'an SSE answer that ends without the response',
        'UpstreamBadAnswerError',
        () =>
          void up.on('tools/list', () => ({
            raw: 'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}\n\n',
            headers: { 'content-type': 'text/event-stream' },
          })),
      ],
      [
        'HTTP 500 with a JSON body that is not JSON-RPC',
        'UpstreamHttpError',
        () => void up.on('tools/list', () => ({ status: 500, raw: '{"message":"boom"}' })),
      ],
      [
        'HTTP 502 with an HTML page',
        'UpstreamHttpError',
        () =>
          void up.on('tools/list', () => ({
            status: 502,
            headers: { 'content-type': 'text/html' },
            raw: '<html><body><h1>502 Bad Gateway</h1></body></html>',
          })),
      ],
      [
        'a JSON-RPC error to tools/list',
        'UpstreamListError',
        () => void up.on('tools/list', () => ({ error: { code: -32603, message: 'db is down' } })),
      ],
      [
        'an answer slower than listMillis',
        'UpstreamTimeoutError',
        () => void up.on('tools/list', () => ({ delayMs: 1500, result: { tools: goodTools } })),
      ],
      [
        'pages each faster than listMillis that together take longer (the deadline covers every page)',
        'UpstreamTimeoutError',
        () => {
          up.pageSize = 1;
          // 300 + 800 ms: each page well within listMillis (1000), both past it; the first one
          // far enough within it that a loaded machine still asks for the second
          up.on('tools/list', async (request) => {
            await sleep(request.params?.cursor === undefined ? 300 : 800);
            return undefined;
          });
        },
        // the second page was asked for: no single answer passed the deadline
        (cursors) => expect(cursors).toEqual([undefined, '1']),
      ],
      [
        'an answer larger than execution.maxResponseBytes',
        'UpstreamTooLargeError',
        () =>
          void up.on('tools/list', () =>
            listReply({ tools: [upTool('a', { description: 'x'.repeat(100 * 1024) })] }),
          ),
      ],
      [
        'a cursor that repeats',
        'UpstreamPaginationError',
        () =>
          void up.on('tools/list', (req) =>
            listReply({
              tools: req.params?.cursor === undefined ? [goodTools[0]] : [goodTools[1]],
              nextCursor: 'again',
            }),
          ),
        // asked twice, then stopped: the cursor came back
        (cursors) => expect(cursors).toEqual([undefined, 'again']),
      ],
      [
        'more pages than registry.maxPagesPerList',
        'UpstreamPaginationError',
        () =>
          void up.on('tools/list', (req) => {
            const page = Number(req.params?.cursor ?? 0);
            return listReply({ tools: [upTool(`t${page}`)], nextCursor: String(page + 1) });
          }),
        (cursors) => expect(cursors).toEqual([undefined, '1', '2', '3']),
      ],
      [
        'more tools than discovery.maxToolsTotal allows in the catalog',
        'CatalogTooLargeError',
        () => {
          // 8 fit maxToolsTotal 8 on their own; with the bundle's tool they do not
          up.tools = Array.from({ length: 8 }, (_, i) => upTool(`many${i}`));
        },
      ],
      [
        'more tools than one upstream may list (maxToolsPerUpstream, at most maxToolsTotal)',
        'UpstreamTooManyToolsError',
        () => {
          up.tools = Array.from({ length: 9 }, (_, i) => upTool(`many${i}`));
        },
      ],
      ['the upstream goes down', 'UpstreamUnreachableError', () => up.stop()],
    ];

    // one rest parameter: a test function with more parameters than a row has values would be
    // taken for one that wants a `done` callback
    it.each(cases)('%s → %s', async (...row: Case) => {
      const [, errorType, breakIt, checkCursors] = row;
      expect(await upstreamView(gateway, 'up')).toMatchObject({ status: 'healthy' });
      const before = await toolNames(gateway);
      expect(before).toEqual(['ins.a', 'up__a', 'up__b']);
      const listsBefore = up.rpcs('tools/list').length;
      await breakIt();
      try {
        await refreshRound(gateway);
        const view = await upstreamView(gateway, 'up');
        expect(view).toMatchObject({
          status: 'degraded',
          lastErrorType: errorType,
          consecutiveFailures: 1,
          counts: { tools: 2, resources: 1, resourceTemplates: 1, prompts: 1 },
          source: 'remote',
        });
        const asked = up.rpcs('tools/list').slice(listsBefore);
        if (errorType !== 'UpstreamUnreachableError') expect(asked.length).toBeGreaterThan(0);
        checkCursors?.(asked.map((r) => r.params?.cursor));
        expect(await toolNames(gateway)).toEqual(before);
        for (const method of LISTS)
          expect((await listResult(gateway, method))._meta[PARTIAL]).toEqual([
            { id: 'up', kind: 'upstream', state: 'last-good' },
          ]);
        expect((await rpc(gateway.mcpUrl, 'resources/list')).json.result.resources).toEqual([
          { uri: 'mem://r1', name: 'r1' },
        ]);
        expect((await gateway.readiness()).status).toBe(200);
        const call = await callTool(gateway.mcpUrl, 'up__a', { n: 1 });
        if (errorType === 'UpstreamUnreachableError') {
          // Listed from the last good copy; the call itself fails, naming the upstream by id only.
          expect(call.result.isError).toBe(true);
          expect(textOf(call)).toContain('up');
          expectNoAddress(textOf(call), up);
        } else {
          expect(call.result.isError).toBeUndefined();
          expect(JSON.parse(textOf(call))).toEqual({ tool: 'a', arguments: { n: 1 } });
        }
        expectNoAddress(JSON.stringify(await upstreamsView(gateway)), up);
      } finally {
        up.off('tools/list');
        up.pageSize = undefined;
        up.tools = [...goodTools];
        if (errorType === 'UpstreamUnreachableError') await up.listen();
        // recovered before the next case, even when this one failed
        await refreshRound(gateway);
      }
      expect(await upstreamView(gateway, 'up')).toMatchObject({
        status: 'healthy',
        lastErrorType: null,
        consecutiveFailures: 0,
      });
      expect((await listResult(gateway))._meta?.[PARTIAL]).toBeUndefined();
    });

    it('a failed pull after a failed pull counts both and still serves the first copy', async () => {
      up.on('tools/list', () => ({ status: 503, raw: '' }));
      try {
        await refreshRound(gateway);
        await refreshRound(gateway);
        expect(await upstreamView(gateway, 'up')).toMatchObject({
          status: 'degraded',
          consecutiveFailures: 2,
          lastErrorType: 'UpstreamHttpError',
        });
        expect(await toolNames(gateway)).toEqual(['ins.a', 'up__a', 'up__b']);
      } finally {
        up.off('tools/list');
        await refreshRound(gateway);
      }
      expect((await upstreamView(gateway, 'up')).status).toBe('healthy');
    });
  });

  it('B06: follows nextCursor across the pages of every list, stops an upstream whose cursor repeats, and gives the client every tool in one page', async () => {
    const pad = (n: number, width: number): string => String(n).padStart(width, '0');
    const upA = track(
      await ScriptedUpstream.start({
        tools: Array.from({ length: 14 }, (_, i) => upTool(`a${pad(i + 1, 2)}`)),
        resources: Array.from({ length: 10 }, (_, i) => ({ uri: `mem://a/${i}`, name: `r${i}` })),
        resourceTemplates: Array.from({ length: 9 }, (_, i) => ({
          uriTemplate: `mem://a/t${i}/{x}`,
          name: `t${i}`,
        })),
        prompts: Array.from({ length: 10 }, (_, i) => ({ name: `p${i}` })),
        // no cursor -> the first 8, cursor "8" -> the rest, any other cursor -> -32602
        pageSize: 8,
      }),
    );
    const upB = track(
      await ScriptedUpstream.start({ tools: ['b1', 'b2', 'b3'].map((n) => upTool(n)) }),
    );
    upB.on('tools/list', () => ({ result: { tools: upB.tools } })); // never paginates
    const upC = track(await ScriptedUpstream.start({ tools: [upTool('c1'), upTool('c2')] }));
    upC.on('tools/list', () => ({ result: { tools: upC.tools, nextCursor: 'c' } })); // buggy: loops
    const upD = track(
      await ScriptedUpstream.start({
        tools: Array.from({ length: 1500 }, (_, i) =>
          upTool(`d${pad(i + 1, 4)}`, { description: `[marker:D.d${i + 1}] ${'x'.repeat(2000)}` }),
        ),
        pageSize: 100,
      }),
    );
    const service = track(
      await TestToolService.start(manifest('m', [tool({ name: 'm.m1' }), tool({ name: 'm.m2' })])),
    );
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('m', service, 'm.')], {
          discovery: { maxToolsTotal: 2000, maxToolsPerUpstream: 1500 },
          upstreams: [
            { id: 'A', url: upA.url },
            { id: 'B', url: upB.url },
            { id: 'C', url: upC.url },
            { id: 'D', url: upD.url },
          ],
        }),
        waitReady: true,
      }),
    );
    const list = await listResult(gateway);
    expect(list.nextCursor).toBeUndefined();
    const names: string[] = list.tools.map((t: { name: string }) => t.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toHaveLength(14 + 3 + 1500 + 2);
    expect(names.filter((n) => n.startsWith('A__'))).toHaveLength(14);
    expect(names.filter((n) => n.startsWith('D__'))).toHaveLength(1500);
    expect(names).toContain('D__d1500');
    // the looping upstream's pull failed: nothing of it is served, not c1 and c2 twice
    expect(names.filter((n) => n.startsWith('C__'))).toEqual([]);
    expect(await upstreamView(gateway, 'C')).toMatchObject({
      status: 'unreachable',
      lastErrorType: 'UpstreamPaginationError',
    });
    expect(list._meta[PARTIAL]).toEqual([{ id: 'C', kind: 'upstream', state: 'missing' }]);

    const cursors = (up: ScriptedUpstream, method: string): unknown[] =>
      up.rpcs(method).map((r) => r.params?.cursor);
    for (const method of LISTS) expect(cursors(upA, method)).toEqual([undefined, '8']);
    expect(cursors(upB, 'tools/list')).toEqual([undefined]);
    expect(cursors(upC, 'tools/list')).toEqual([undefined, 'c']);
    expect(cursors(upD, 'tools/list')).toEqual([
      undefined,
      ...Array.from({ length: 14 }, (_, i) => String((i + 1) * 100)),
    ]);
    // the same rules for the other lists
    expect((await listResult(gateway, 'resources/list')).resources).toHaveLength(10);
    expect((await listResult(gateway, 'resources/templates/list')).resourceTemplates).toHaveLength(
      9,
    );
    expect((await listResult(gateway, 'prompts/list')).prompts).toHaveLength(10);

    // a cursor the gateway never issued is invalid params, and goes to no upstream
    const bogus = await rpc(gateway.mcpUrl, 'tools/list', { cursor: 'not-a-real-cursor' });
    expect(bogus.json.error.code).toBe(-32602);
    for (const up of [upA, upB, upC, upD])
      expect(up.rpcs().some((r) => r.params?.cursor === 'not-a-real-cursor')).toBe(false);
  });

  it('B03, B04: tools whose inputSchema breaks the MCP rules are left out and reported; their siblings publish with every schema exactly as sent', async () => {
    const createItem = {
      name: 'create_item',
      description: '[marker:inv.item] draft-07 style',
      inputSchema: {
        type: 'object',
        properties: { item: { $ref: '#/definitions/Item' } },
        required: ['item'],
        definitions: {
          Item: {
            type: 'object',
            properties: { sku: { type: 'string' }, qty: { type: 'integer', minimum: 1 } },
            required: ['sku', 'qty'],
          },
        },
      },
    };
    const node = {
      type: 'object',
      properties: {
        label: { type: 'string' },
        children: { type: 'array', items: { $ref: '#/$defs/Node' } },
      },
      required: ['label'],
    };
    const createTree = {
      name: 'create_tree',
      description: '[marker:inv.tree] recursive 2020-12',
      inputSchema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: { root: { $ref: '#/$defs/Node' } },
        required: ['root'],
        $defs: { Node: node },
      },
      outputSchema: {
        type: 'object',
        properties: { node: { $ref: '#/$defs/Node' } },
        $defs: { Node: { type: 'object', properties: { label: { type: 'string' } } } },
        'x-ui-hint': 'tree',
      },
    };
    // B04's four schemas, served by an upstream
    const b04 = [
      upTool('set_value', {
        inputSchema: {
          type: 'object',
          properties: {
            key: { type: 'string' },
            value: { type: ['string', 'number', 'boolean', 'object', 'array'] },
          },
          required: ['key', 'value'],
        },
      }),
      upTool('set_port', {
        inputSchema: {
          type: 'object',
          properties: {
            port: {
              type: 'array',
              prefixItems: [{ type: 'string' }, { type: 'integer' }],
              minItems: 2,
              maxItems: 2,
            },
          },
        },
      }),
      upTool('tag', {
        inputSchema: { type: 'object', properties: { tags: { type: 'array' } } },
      }),
      upTool('noop'),
    ];
    const broken: Array<[Record<string, unknown>, string | RegExp]> = [
      [
        { name: 'no_schema', description: 'no inputSchema' },
        'inputSchema must be a JSON Schema object',
      ],
      [
        upTool('string_schema', { inputSchema: 'object' }),
        'inputSchema must be a JSON Schema object',
      ],
      [
        upTool('array_root', { inputSchema: { type: 'array', items: {} } }),
        'inputSchema must have type "object" at its root',
      ],
      [
        upTool('no_type', { inputSchema: { properties: { x: { type: 'string' } } } }),
        'inputSchema must have type "object" at its root',
      ],
      [
        upTool('bad_type', {
          inputSchema: { type: 'object', properties: { x: { type: 'strin' } } },
        }),
        /^inputSchema does not compile/,
      ],
      [
        upTool('dangling_ref', {
          inputSchema: { type: 'object', properties: { x: { $ref: '#/$defs/Missing' } } },
        }),
        /^inputSchema does not compile/,
      ],
    ];
    const up = track(
      await ScriptedUpstream.start({
        tools: [
          createItem,
          broken[0]![0],
          ...b04.slice(0, 2),
          broken[1]![0],
          broken[2]![0],
          createTree,
          broken[3]![0],
          ...b04.slice(2),
          broken[4]![0],
          broken[5]![0],
        ],
      }),
    );
    const bookRoom = tool({
      name: 'rooms.book_room',
      description: '[marker:rooms.book]',
      inputSchema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: { slot: { $ref: '#/$defs/Slot' } },
        required: ['slot'],
        $defs: {
          Slot: {
            type: 'object',
            properties: {
              start: { type: 'string', format: 'date-time' },
              minutes: { type: 'integer' },
            },
            required: ['start'],
          },
        },
        'x-internal-owner': 'team-rooms',
      },
    });
    const service = track(await TestToolService.start(manifest('rooms', [bookRoom], '7')));
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('rooms', service, 'rooms.')], {
          upstreams: [{ id: 'inv', url: up.url }],
        }),
        waitReady: true,
      }),
    );
    const list = await listResult(gateway);
    const published = new Map<string, any>(list.tools.map((t: any) => [t.name, t]));
    expect([...published.keys()].sort()).toEqual([
      'inv__create_item',
      'inv__create_tree',
      'inv__noop',
      'inv__set_port',
      'inv__set_value',
      'inv__tag',
      'rooms.book_room',
    ]);
    // every upstream tool exactly as sent, only its name prefixed: no schema rewriting (B03
    // "preferred"; B04's proposed `items: {}` normalisation is not applied to upstream tools)
    for (const source of [createItem, createTree, ...b04])
      expect(published.get(`inv__${source.name as string}`)).toEqual({
        ...source,
        name: `inv__${source.name as string}`,
      });
    expect(published.get('inv__tag').inputSchema.properties.tags).toEqual({ type: 'array' });
    expect(published.get('rooms.book_room').inputSchema).toEqual(bookRoom.inputSchema);
    expect(list._meta?.[PARTIAL]).toBeUndefined();

    const view = await upstreamView(gateway, 'inv');
    expect(view).toMatchObject({ status: 'healthy', counts: { tools: 6 }, lastErrorType: null });
    expect(view.leftOut).toHaveLength(broken.length);
    for (const [item, reason] of broken) {
      const row = view.leftOut.find((r: { name: string }) => r.name === item.name);
      expect(row).toMatchObject({ list: 'tools', name: item.name });
      if (typeof reason === 'string') expect(row.reason).toBe(reason);
      else expect(row.reason).toMatch(reason);
    }
    await gateway.waitForOutput('Upstream inv: tools entry \\"bad_type\\" left out');

    // the siblings are callable, by their original name and with the arguments as sent
    const call = await callTool(gateway.mcpUrl, 'inv__create_item', {
      item: { sku: 'A', qty: 2 },
    });
    expect(JSON.parse(textOf(call))).toEqual({
      tool: 'create_item',
      arguments: { item: { sku: 'A', qty: 2 } },
    });
    // a left-out tool is not routed: unknown to the gateway, never sent upstream
    expect((await callTool(gateway.mcpUrl, 'inv__bad_type', {})).error.code).toBe(-32001);
    expect(up.calls('bad_type')).toHaveLength(0);
  });

  it('names that collide once rewritten (x.y and x_y) both publish, one with a stable hash suffix, and each call reaches its own tool', async () => {
    const originals = [
      'x.y',
      'x_y',
      'x y',
      'github/git_commit',
      'rapport_données',
      'post_api_sn_sc_servicecatalog_items_by_sys_id_versioning_checkout',
    ];
    const up = track(await ScriptedUpstream.start({ tools: originals.map((n) => upTool(n)) }));
    const config = gatewayConfig([], { upstreams: [{ id: 'p', url: up.url }] });
    const gateway = track(await GatewayProcess.start({ mcp: config, waitReady: true }));
    const tools: { name: string; description: string }[] = (await listResult(gateway)).tools;
    const byOriginal = new Map(
      originals.map((o) => [o, tools.find((t) => t.description.includes(`[marker:${o}]`))!.name]),
    );
    expect(tools).toHaveLength(originals.length);
    expect(new Set(byOriginal.values()).size).toBe(originals.length);
    for (const name of byOriginal.values()) expect(name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    // the name that needed no rewrite keeps the plain form; the rewritten ones get a suffix
    expect(byOriginal.get('x_y')).toBe('p__x_y');
    expect(byOriginal.get('x.y')).toMatch(/^p__x_y_[0-9a-f]{8}$/);
    expect(byOriginal.get('x y')).toMatch(/^p__x_y_[0-9a-f]{8}$/);
    expect(byOriginal.get('github/git_commit')).toBe('p__github_git_commit');
    expect(byOriginal.get(originals[5]!)).toHaveLength(64);
    for (const [original, name] of byOriginal) {
      const call = await callTool(gateway.mcpUrl, name, { who: original });
      expect(JSON.parse(textOf(call))).toEqual({ tool: original, arguments: { who: original } });
    }
    expect(up.calls().map((r) => r.params?.name)).toEqual(originals);
    // deterministic: a second replica publishes the same names
    const replica = track(await GatewayProcess.start({ mcp: config, waitReady: true }));
    expect(await toolNames(replica)).toEqual(await toolNames(gateway));
  });

  it('an expired upstream session is re-initialized and the request repeated once; a session lost again at once is UpstreamSessionError, the last good lists kept', async () => {
    const up = track(
      await ScriptedUpstream.start({ tools: [upTool('a')], sessionId: 'upstream-session-1' }),
    );
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([], { upstreams: [{ id: 'sess', url: up.url }] }),
        waitReady: true,
      }),
    );
    expect(up.rpcs('initialize')).toHaveLength(1);
    expect(up.rpcs('tools/list')[0]!.headers['mcp-session-id']).toBe('upstream-session-1');

    up.sessionId = 'upstream-session-2'; // the upstream restarted and forgot session 1
    await refreshRound(gateway);
    expect(up.rpcs('initialize')).toHaveLength(2);
    const lists = up.rpcs('tools/list');
    expect(lists.slice(-2).map((r) => r.headers['mcp-session-id'])).toEqual([
      'upstream-session-1',
      'upstream-session-2',
    ]);
    expect((await upstreamView(gateway, 'sess')).status).toBe('healthy');
    const call = await callTool(gateway.mcpUrl, 'sess__a', {});
    expect(call.result.isError).toBeUndefined();
    expect(up.calls()[0]!.headers['mcp-session-id']).toBe('upstream-session-2');

    up.on('tools/list', () => ({
      status: 404,
      error: { code: -32001, message: 'Session not found' },
    }));
    const listsBefore = up.rpcs('tools/list').length;
    await refreshRound(gateway);
    expect(up.rpcs('initialize')).toHaveLength(3); // one re-initialize, not a loop
    expect(up.rpcs('tools/list').length - listsBefore).toBe(2);
    expect(await upstreamView(gateway, 'sess')).toMatchObject({
      status: 'degraded',
      lastErrorType: 'UpstreamSessionError',
    });
    expect(await toolNames(gateway)).toEqual(['sess__a']);
  });

  it('a call past callMillis, or answered with a 5xx, garbage or too many bytes, is an isError result that names the upstream by id and never its address', async () => {
    const up = track(
      await ScriptedUpstream.start({
        tools: ['slow', 'html500', 'garbage', 'huge', 'ok'].map((n) => upTool(n)),
      }),
    );
    up.onTool('slow', () => ({ delayMs: 5000, result: { content: [] } }));
    up.onTool('html500', () => ({
      status: 500,
      headers: { 'content-type': 'text/html' },
      raw: '<html><body>Internal Server Error at 10.1.2.3</body></html>',
    }));
    up.onTool('garbage', () => ({ raw: 'not json at all' }));
    up.onTool('huge', () => ({
      result: { content: [{ type: 'text', text: 'x'.repeat(100 * 1024) }] },
    }));
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([], {
          execution: { maxResponseBytes: 64 * 1024 },
          upstreams: [{ id: 'callee', url: up.url, timeouts: { callMillis: 500 } }],
        }),
        waitReady: true,
      }),
    );
    const started = Date.now();
    const slow = await callTool(gateway.mcpUrl, 'callee__slow', {});
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(450);
    expect(elapsed).toBeLessThan(1500);
    expect(slow.error).toBeUndefined();
    expect(slow.result.isError).toBe(true);
    expect(textOf(slow)).toContain('callee');
    expectNoAddress(JSON.stringify(slow), up);
    // the 2025 upstream is told to stop working on it, by the id the gateway sent it
    const sentId = up.calls('slow')[0]!.id;
    await waitFor(() =>
      up.rpcs('notifications/cancelled').some((r) => r.params?.requestId === sentId),
    );
    expect(up.calls('slow')).toHaveLength(1); // not retried

    for (const name of ['html500', 'garbage', 'huge']) {
      const answer = await callTool(gateway.mcpUrl, `callee__${name}`, {});
      expect(answer.error).toBeUndefined();
      expect(answer.result.isError).toBe(true);
      expect(textOf(answer)).toContain('callee');
      expectNoAddress(JSON.stringify(answer), up);
    }
    expect(JSON.stringify(await callTool(gateway.mcpUrl, 'callee__html500', {}))).toContain('500');
    // failed calls do not change the status of the lists
    expect((await upstreamView(gateway, 'callee')).status).toBe('healthy');
    expect((await callTool(gateway.mcpUrl, 'callee__ok', {})).result.isError).toBeUndefined();
  });

  describe('what reaches an upstream: session, authorization, forwarded headers, Accept, protocol version (B09, B11)', () => {
    let plain: ScriptedUpstream;
    let keyed: ScriptedUpstream;
    let relay: ScriptedUpstream;
    let modern: ScriptedUpstream;
    let gateway: GatewayProcess;
    const all = (): ScriptedUpstream[] => [plain, keyed, relay, modern];

    beforeAll(async () => {
      // a 2025-06-18 server with its own session and a GET stream, strict about versions and Accept
      plain = await ScriptedUpstream.start({
        tools: [upTool('o1')],
        sessionId: 'plain-upstream-session',
        protocolVersion: '2025-06-18',
        strictVersion: true,
        requireAccept: true,
        getStream: true,
      });
      keyed = await ScriptedUpstream.start({
        tools: [upTool('n1'), upTool('a1')],
        strictVersion: true,
        requireAccept: true,
      });
      // a1 answers in SSE: a progress notification (when asked for) before the result
      keyed.onTool('a1', (req) => {
        const token = req.params?._meta?.progressToken;
        return {
          events:
            token === undefined
              ? []
              : [
                  {
                    jsonrpc: '2.0',
                    method: 'notifications/progress',
                    params: { progressToken: token, progress: 1, total: 1 },
                  },
                ],
          result: { content: [{ type: 'text', text: 'a1 done' }] },
        };
      });
      relay = await ScriptedUpstream.start({ tools: [upTool('r1')] });
      modern = await ScriptedUpstream.start({ era: '2026', tools: [upTool('s1')] });
      gateway = await GatewayProcess.start({
        mcp: gatewayConfig([], {
          upstreams: [
            { id: 'plain', url: plain.url },
            {
              id: 'keyed',
              url: keyed.url,
              authorization: { mode: 'static', valueEnv: 'KEYED_UPSTREAM_AUTH' },
              forwardHeaders: ['X-Mcp-Token'],
            },
            { id: 'relay', url: relay.url, authorization: { mode: 'passthrough' } },
            { id: 'modern', url: modern.url },
          ],
        }),
        env: { KEYED_UPSTREAM_AUTH: 'Bearer keyed-static-secret' },
        waitReady: true,
      });
    });
    afterAll(async () => {
      await gateway?.stop();
      for (const up of [plain, keyed, relay, modern]) await up?.stop();
    });

    it("the client's Mcp-Session-Id and Authorization reach no upstream unless configured; a static authorization and forwardHeaders send only what they name", async () => {
      const session = await openSession(gateway.mcpUrl);
      const client = {
        ...session,
        authorization: 'Bearer client-secret',
        'x-mcp-token': 'tok-123',
        'x-other': 'not-forwarded',
      };
      for (const name of ['plain__o1', 'keyed__n1', 'relay__r1', 'modern__s1']) {
        const answer = await callTool(gateway.mcpUrl, name, {}, client);
        expect(answer.result.isError).toBeUndefined();
      }
      for (const up of all()) {
        expect(up.calls()).toHaveLength(1);
        for (const req of up.requests) {
          expect(Object.values(req.headers).join('\n')).not.toContain(session['mcp-session-id']);
          expect(req.headers['x-other']).toBeUndefined();
          if (up !== keyed) expect(req.headers['x-mcp-token']).toBeUndefined();
          if (up !== keyed && !(up === relay && req.method === 'tools/call'))
            expect(req.headers.authorization).toBeUndefined();
        }
      }
      // the upstream's own session, and only it
      for (const req of sinceInitialize(plain))
        expect(req.headers['mcp-session-id']).toBe('plain-upstream-session');
      // static: on every request, list pulls included; X-Mcp-Token: on calls, copied from the client
      for (const req of keyed.requests)
        expect(req.headers.authorization).toBe('Bearer keyed-static-secret');
      expect(keyed.calls()[0]!.headers['x-mcp-token']).toBe('tok-123');
      for (const req of keyed.rpcs('tools/list'))
        expect(req.headers['x-mcp-token']).toBeUndefined();
      // passthrough: the caller's own header on its call; list pulls have no caller
      expect(relay.calls()[0]!.headers.authorization).toBe('Bearer client-secret');
      // the secrets appear nowhere an operator or a client looks
      const status = JSON.stringify(await upstreamsView(gateway));
      for (const secret of ['keyed-static-secret', 'client-secret', 'tok-123']) {
        expect(status).not.toContain(secret);
        expect(gateway.output).not.toContain(secret);
      }
      for (const up of all()) expectNoAddress(status, up);
    });

    it.each([
      ['application/json', 'application/json'],
      ['text/event-stream', 'text/event-stream'],
      ['*/*', 'application/json'],
      // both accepted: either framing is right (B09 asks for a 200)
      ['application/json;q=0.9, text/event-stream;q=0.1', 'either'],
    ])(
      'B09: a client accepting %s gets %s, and the upstream still gets an Accept of both types',
      async (accept, expected) => {
        const before = keyed.calls('a1').length;
        const answer = await streamPost(
          gateway.mcpUrl,
          {
            jsonrpc: '2.0',
            id: 5,
            method: 'tools/call',
            params: { name: 'keyed__a1', arguments: {}, _meta: { progressToken: 'p' } },
          },
          { accept },
        );
        expect(answer.status).toBe(200);
        const type = answer.contentType.split(';')[0]!;
        if (expected === 'either')
          expect(['application/json', 'text/event-stream']).toContain(type);
        else expect(type).toBe(expected);
        const last = answer.messages.at(-1)!.message;
        expect(last).toMatchObject({ id: 5, result: { content: [{ text: 'a1 done' }] } });
        if (type === 'application/json') {
          // one JSON-RPC response; the upstream's SSE notifications are dropped
          expect(answer.messages).toHaveLength(1);
        } else {
          expect(answer.messages.map((m) => m.message.method ?? 'response')).toEqual([
            'notifications/progress',
            'response',
          ]);
        }
        const sent = keyed.calls('a1');
        expect(sent).toHaveLength(before + 1);
        expect(sent.at(-1)!.headers.accept).toBe('application/json, text/event-stream');
      },
    );

    it('B09: a client accepting neither JSON nor SSE gets 406 and no upstream is asked', async () => {
      const before = keyed.calls().length;
      const answer = await rpc(
        gateway.mcpUrl,
        'tools/call',
        { name: 'keyed__a1' },
        {
          accept: 'text/html',
        },
      );
      expect(answer.status).toBe(406);
      expect(keyed.calls()).toHaveLength(before);
    });

    it('B09: every POST to an upstream accepts JSON and SSE with a JSON body; a GET stream accepts SSE', async () => {
      for (const up of all()) {
        const posts = up.requests.filter((r) => r.httpMethod === 'POST');
        expect(posts.length).toBeGreaterThan(0);
        for (const req of posts) {
          expect(req.headers.accept).toContain('application/json');
          expect(req.headers.accept).toContain('text/event-stream');
          expect(req.headers['content-type']).toBe('application/json');
        }
      }
      await waitFor(() => plain.openStreams > 0);
      const gets = plain.requests.filter((r) => r.httpMethod === 'GET');
      expect(gets.length).toBeGreaterThan(0);
      for (const req of gets) {
        expect(req.headers.accept).toBe('text/event-stream');
        expect(req.headers['mcp-session-id']).toBe('plain-upstream-session');
      }
    });

    it('B11: each upstream hears the version negotiated with it, whatever the client speaks; a 2026 upstream gets mirrored headers with the original tool name', async () => {
      const init = await rpc(gateway.mcpUrl, 'initialize', {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'old-client', version: '0' },
      });
      expect(init.json.result.protocolVersion).toBe('2025-06-18');
      const old = {
        'mcp-session-id': init.headers.get('mcp-session-id')!,
        'mcp-protocol-version': '2025-06-18',
      };
      for (const name of ['plain__o1', 'keyed__n1', 'modern__s1'])
        expect((await callTool(gateway.mcpUrl, name, {}, old)).result.isError).toBeUndefined();

      const after = (up: ScriptedUpstream): ReceivedRequest[] =>
        sinceInitialize(up).filter((r) => r.httpMethod === 'POST');
      // strict upstreams answered 400 to any other version: these calls passed
      for (const req of after(plain))
        expect(req.headers['mcp-protocol-version']).toBe('2025-06-18');
      for (const req of after(keyed))
        expect(req.headers['mcp-protocol-version']).toBe('2025-11-25');
      // A 2025 client's first request to an `auto` upstream that answers in 2026 asks it once
      // whether it speaks 2025 too (docs/operations.md §10 "Eras", dual-era upstreams); this
      // one refuses, is remembered as 2026-only and hears 2026 from then on.
      const initializes = modern.rpcs('initialize');
      expect(initializes.length).toBeLessThanOrEqual(1);
      for (const req of modern.rpcs()) {
        if (initializes.includes(req)) continue;
        expect(req.headers['mcp-protocol-version']).toBe('2026-07-28');
        expect(req.params?._meta?.['io.modelcontextprotocol/protocolVersion']).toBe('2026-07-28');
        expect(req.headers['mcp-method']).toBe(req.method);
      }
      for (const req of modern.calls()) {
        expect(req.params?.name).toBe('s1');
        expect(req.headers['mcp-name']).toBe('s1');
      }
      expect(await upstreamView(gateway, 'modern')).toMatchObject({
        era: '2026',
        status: 'healthy',
      });
      expect(await upstreamView(gateway, 'plain')).toMatchObject({ era: '2025' });
    });
  });

  it('B08: JSON, SSE, messy SSE (CRLF, a comment, a log and a ping before the response, a split data line) and SSE without event lines all list their tools; an unframed body is a failed pull, never zero tools', async () => {
    const toolJson = (name: string, marker: string): string =>
      JSON.stringify({
        name,
        description: `[marker:${marker}]`,
        inputSchema: { type: 'object' },
      });
    const response = (id: unknown, name: string, marker: string): string =>
      `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"tools":[${toolJson(name, marker)}]}}`;
    const framings: Record<string, (id: unknown) => Reply> = {
      json: (id) => ({
        headers: { 'content-type': 'application/json' },
        raw: response(id, 'j1', 'json.j1'),
      }),
      sse: (id) => ({
        headers: { 'content-type': 'text/event-stream' },
        raw: `event: message\ndata: ${response(id, 's1', 'sse.s1')}\n\n`,
      }),
      messy: (id) => ({
        headers: { 'content-type': 'text/event-stream; charset=utf-8' },
        raw:
          ': keepalive\r\n\r\n' +
          'id: 7\r\nevent: message\r\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"warming up"}}\r\n\r\n' +
          'event: message\r\ndata: {"jsonrpc":"2.0","id":"srv-ping-1","method":"ping"}\r\n\r\n' +
          `event: message\r\ndata: {"jsonrpc":"2.0","id":${JSON.stringify(id)},\r\n` +
          `data: "result":{"tools":[${toolJson('m1', 'messy.m1')}]}}\r\n\r\n`,
      }),
      noevent: (id) => ({
        headers: { 'content-type': 'text/event-stream' },
        raw: `data: ${response(id, 'n1', 'noevent.n1')}\n\n`,
      }),
      unframed: (id) => ({
        headers: { 'content-type': 'text/event-stream' },
        raw: response(id, 'u1', 'unframed.u1'),
      }),
    };
    const ups = new Map<string, ScriptedUpstream>();
    for (const [id, framing] of Object.entries(framings)) {
      const up = track(await ScriptedUpstream.start({ tools: [upTool(`${id}_tool`)] }));
      up.on('tools/list', (req) => framing(req.id));
      ups.set(id, up);
    }
    // the SSE upstream also answers its call in SSE, a log message and a ping first
    ups.get('sse')!.onTool('s1', () => ({
      events: [
        {
          jsonrpc: '2.0',
          method: 'notifications/message',
          params: { level: 'info', data: 'working' },
        },
        { jsonrpc: '2.0', id: 'srv-ping-2', method: 'ping' },
      ],
      result: { content: [{ type: 'text', text: 's1 done' }] },
    }));
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([], {
          upstreams: [...ups].map(([id, up]) => ({ id, url: up.url })),
        }),
        waitReady: true,
      }),
    );
    const list = await listResult(gateway);
    const markers = list.tools.map((t: { description: string }) => t.description).sort();
    expect(markers).toEqual([
      '[marker:json.j1]',
      '[marker:messy.m1]',
      '[marker:noevent.n1]',
      '[marker:sse.s1]',
    ]);
    expect(await upstreamView(gateway, 'unframed')).toMatchObject({
      status: 'unreachable',
      lastErrorType: 'UpstreamBadAnswerError',
      counts: { tools: 0 },
    });
    expect(list._meta[PARTIAL]).toEqual([{ id: 'unframed', kind: 'upstream', state: 'missing' }]);
    for (const id of ['json', 'sse', 'messy', 'noevent'])
      expect(await upstreamView(gateway, id)).toMatchObject({
        status: 'healthy',
        counts: { tools: 1 },
      });
    // the server's ping is answered, not mistaken for the response nor left waiting
    const pong = (up: ScriptedUpstream, id: string): boolean =>
      up.requests.some(
        (r) =>
          r.message?.id === id &&
          r.method === undefined &&
          JSON.stringify(r.message.result) === '{}',
      );
    await waitFor(() => pong(ups.get('messy')!, 'srv-ping-1'));

    // gateway -> client SSE: explicit event lines, one data line per message, response last
    const call = await streamPost(
      gateway.mcpUrl,
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'sse__s1', arguments: {} } },
      { accept: 'text/event-stream' },
    );
    expect(call.contentType).toMatch(/^text\/event-stream/);
    expect(call.raw.endsWith('\n\n')).toBe(true);
    const events = call.raw.slice(0, -2).split('\n\n');
    expect(events).toHaveLength(2);
    for (const event of events) {
      const lines = event.split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toBe('event: message');
      expect(lines[1]).toMatch(/^data: \{.*\}$/);
    }
    // the ping on the call's stream is answered by the gateway, not relayed nor refused
    await waitFor(() => pong(ups.get('sse')!, 'srv-ping-2'));
    expect(call.messages.map((m) => m.message)).toEqual([
      {
        jsonrpc: '2.0',
        method: 'notifications/message',
        params: { level: 'info', data: 'working' },
      },
      { jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: 's1 done' }] } },
    ]);
  });

  describe('calls relayed to an upstream (B13, B14, B19, B22, B23)', () => {
    let kit: ScriptedUpstream;
    let other: ScriptedUpstream;
    let gateway: GatewayProcess;

    beforeAll(async () => {
      kit = await ScriptedUpstream.start({
        tools: ['take', 'weather', 'vanished', 'flaky', 'long', 'slow'].map((n) => upTool(n)),
      });
      other = await ScriptedUpstream.start({ tools: [upTool('fast')] });
      gateway = await GatewayProcess.start({
        mcp: gatewayConfig([], {
          upstreams: [
            { id: 'kit', url: kit.url, timeouts: { callMillis: 20_000 } },
            { id: 'other', url: other.url },
          ],
        }),
        waitReady: true,
      });
    });
    afterAll(async () => {
      await gateway?.stop();
      await kit?.stop();
      await other?.stop();
    });

    it('B19: image, audio, resource link and embedded blob content, isError, structuredContent and _meta pass through unchanged', async () => {
      const result = {
        content: [
          { type: 'text', text: 'Screenshot:' },
          {
            type: 'image',
            data: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
            mimeType: 'image/png',
            annotations: { audience: ['user'], priority: 0.5 },
          },
          {
            type: 'audio',
            data: 'UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=',
            mimeType: 'audio/wav',
          },
          {
            type: 'resource_link',
            uri: 'file://(scratch)',
            name: 'shot.png',
            mimeType: 'image/png',
          },
          {
            type: 'resource',
            resource: {
              uri: 'mem://blob/1',
              mimeType: 'application/octet-stream',
              blob: 'AAEC/w==',
            },
          },
        ],
        structuredContent: { width: 1, height: 1 },
        isError: false,
        _meta: { trace: 'abc' },
      };
      kit.onTool('take', () => ({ result }));
      const answer = await callTool(gateway.mcpUrl, 'kit__take', {});
      expect(answer.result).toEqual(result);
    });

    it('B22: a streamed answer whose chunks split multibyte characters keeps every code point; U+2028 and U+0085 do not split the SSE line; arguments reach the upstream as UTF-8', async () => {
      kit.onTool('weather', (req) => ({
        headers: { 'content-type': 'text/event-stream' }, // no charset
        chunkGapMs: 50,
        raw: [
          `data: {"jsonrpc":"2.0","id":${JSON.stringify(req.id)},"result":{"content":[{"type":"text","text":"`,
          Buffer.from('e5', 'hex'),
          Buffer.from('8c97e4baac', 'hex'),
          '今天多云 ',
          Buffer.from('f09f', 'hex'),
          Buffer.from('8c8d', 'hex'),
          ' café \u2028 x \u0085 y',
          '"}]}}\n\n',
        ],
      }));
      const expected = '北京今天多云 🌍 café \u2028 x \u0085 y';
      for (const accept of ['application/json, text/event-stream', 'text/event-stream']) {
        const answer = await streamPost(
          gateway.mcpUrl,
          {
            jsonrpc: '2.0',
            id: 21,
            method: 'tools/call',
            params: { name: 'kit__weather', arguments: { q: '北京' } },
          },
          { accept },
        );
        expect(answer.raw).not.toContain('\ufffd');
        const text: string = answer.messages.at(-1)!.message.result.content[0].text;
        expect([...text]).toEqual([...expected]);
      }
      const sent = kit.calls('weather').at(-1)!;
      expect(sent.body.includes(Buffer.from('e58c97e4baac', 'hex'))).toBe(true);
      expect(sent.params?.arguments).toEqual({ q: '北京' });
    });

    it("B23: an upstream's JSON-RPC errors keep their code, message and data; its unknown tool makes the gateway refresh that upstream's lists", async () => {
      kit.onTool('vanished', () => ({
        error: { code: -32602, message: 'Unknown tool: vanished' },
      }));
      kit.onTool('flaky', () => ({
        error: { code: -32050, message: 'rate limited', data: { retryAfter: 3 } },
      }));
      const listsBefore = kit.rpcs('tools/list').length;
      const vanished = await callTool(gateway.mcpUrl, 'kit__vanished', {});
      expect(vanished.result).toBeUndefined();
      expect(vanished.error.code).toBe(-32602);
      expect(vanished.error.message).toContain('Unknown tool: vanished');
      await waitFor(() => kit.rpcs('tools/list').length > listsBefore, 5000);

      const flaky = await callTool(gateway.mcpUrl, 'kit__flaky', {});
      expect(flaky.result).toBeUndefined();
      expect(flaky.error).toEqual({
        code: -32050,
        message: 'rate limited',
        data: { retryAfter: 3 },
      });

      // protocol errors of the gateway itself reach no upstream
      const callsBefore = kit.calls().length + other.calls().length;
      expect((await rpc(gateway.mcpUrl, 'definitely/not/a/method', {})).json.error.code).toBe(
        -32601,
      );
      expect((await rpc(gateway.mcpUrl, 'tools/call', { arguments: {} })).json.error.code).toBe(
        -32602,
      );
      expect(kit.calls().length + other.calls().length).toBe(callsBefore);
    });

    it('B14: upstream progress reaches the client as it happens, with the exact token the client sent and only on its own call; none without a token', async () => {
      kit.onTool('long', (req) => {
        const token: unknown = req.params?._meta?.progressToken;
        const who = String(req.params?.arguments?.who);
        return {
          eventGapMs: 400,
          events:
            token === undefined
              ? []
              : [1, 2, 3].map((n) => ({
                  jsonrpc: '2.0',
                  method: 'notifications/progress',
                  params: {
                    progressToken: token,
                    progress: n,
                    total: 3,
                    message: `step ${n} for ${who}`,
                  },
                })),
          result: { content: [{ type: 'text', text: `done for ${who}` }] },
        };
      });
      const call = (id: number, who: string, meta?: Record<string, unknown>): Promise<Streamed> =>
        streamPost(
          gateway.mcpUrl,
          {
            jsonrpc: '2.0',
            id,
            method: 'tools/call',
            params: { name: 'kit__long', arguments: { who }, ...(meta ? { _meta: meta } : {}) },
          },
          {},
        );
      const progressOf = (s: Streamed): any[] =>
        s.messages
          .filter((m) => m.message.method === 'notifications/progress')
          .map((m) => m.message);

      const stringToken = await call(7, 'c1', { progressToken: 'tok-α-1', trace: 't-1' });
      expect(stringToken.contentType).toMatch(/^text\/event-stream/);
      const progress = progressOf(stringToken);
      expect(progress.map((p) => p.params.progressToken)).toEqual([
        'tok-α-1',
        'tok-α-1',
        'tok-α-1',
      ]);
      expect(progress.map((p) => p.params.progress)).toEqual([1, 2, 3]);
      expect(stringToken.messages.at(-1)!.message).toMatchObject({
        id: 7,
        result: { content: [{ text: 'done for c1' }] },
      });
      // streamed as it happens: the first progress arrived long before the result
      expect(stringToken.messages.at(-1)!.at - stringToken.messages[0]!.at).toBeGreaterThan(700);
      // the upstream got a token of the gateway's (the request's id: one client's token may be
      // another's, src: libs/upstream/src/progress-token.ts) and the client's other _meta keys
      const sent = kit.calls('long').at(-1)!;
      expect(sent.params?._meta).toMatchObject({ progressToken: sent.id, trace: 't-1' });

      const [integer, first, second] = await Promise.all([
        call(7, 'int', { progressToken: 7 }),
        call(8, 'A', { progressToken: 'p1' }),
        call(9, 'B', { progressToken: 'p1' }),
      ]);
      expect(progressOf(integer).map((p) => p.params.progressToken)).toEqual([7, 7, 7]);
      for (const [streamed, who] of [
        [first, 'A'],
        [second, 'B'],
      ] as const) {
        const messages = progressOf(streamed).map((p) => p.params.message);
        expect(messages).toEqual([1, 2, 3].map((n) => `step ${n} for ${who}`));
      }
      // A's and B's one token went as two
      const sentTokens = kit
        .calls('long')
        .slice(-2)
        .map((c) => c.params?._meta?.progressToken);
      expect(new Set(sentTokens).size).toBe(2);

      const none = await call(10, 'none');
      expect(progressOf(none)).toEqual([]);
      expect(none.messages.at(-1)!.message.result.content[0].text).toBe('done for none');
      expect(kit.calls('long').at(-1)!.params?._meta?.progressToken).toBeUndefined();
    });

    it('B13: notifications/cancelled reaches only the upstream running the call, at once, naming the id the gateway sent it; the other call completes', async () => {
      kit.onTool('slow', () => ({ hang: true }));
      other.onTool('fast', () => ({
        delayMs: 200,
        result: { content: [{ type: 'text', text: 'fast done' }] },
      }));
      const session = await openSession(gateway.mcpUrl);
      const slowBefore = kit.calls('slow').length;
      const slow = streamPost(
        gateway.mcpUrl,
        {
          jsonrpc: '2.0',
          id: 101,
          method: 'tools/call',
          params: { name: 'kit__slow', arguments: {} },
        },
        session,
      );
      await waitFor(() => kit.calls('slow').length === slowBefore + 1);
      const forwardedId = kit.calls('slow').at(-1)!.id;
      const fast = streamPost(
        gateway.mcpUrl,
        {
          jsonrpc: '2.0',
          id: 102,
          method: 'tools/call',
          params: { name: 'other__fast', arguments: {} },
        },
        session,
      );
      const started = Date.now();
      const cancel = await postRaw(
        gateway.mcpUrl,
        JSON.stringify({
          jsonrpc: '2.0',
          method: 'notifications/cancelled',
          params: { requestId: 101, reason: 'user aborted' },
        }),
        { ...STANDARD_HEADERS, ...session },
      );
      expect(cancel.status).toBe(202);
      expect(cancel.text).toBe('');
      expect(Date.now() - started).toBeLessThan(1000);
      await waitFor(() =>
        kit.rpcs('notifications/cancelled').some((r) => r.params?.requestId === forwardedId),
      );
      const fastAnswer = await fast;
      expect(fastAnswer.messages.at(-1)!.message).toMatchObject({
        id: 102,
        result: { content: [{ text: 'fast done' }] },
      });
      expect(other.rpcs('notifications/cancelled')).toEqual([]);
      // the cancelled call's stream ends at once, and no response for id 101 is delivered
      // (MCP 2025-11-25 "Cancellation"; the case's expectation)
      const slowAnswer = await slow;
      expect(slowAnswer.messages.filter((m) => m.message.id === 101)).toEqual([]);

      // a cancel naming no request in flight is accepted and ignored
      const stray = await postRaw(
        gateway.mcpUrl,
        JSON.stringify({
          jsonrpc: '2.0',
          method: 'notifications/cancelled',
          params: { requestId: 999 },
        }),
        { ...STANDARD_HEADERS, ...session },
      );
      expect(stray.status).toBe(202);
      expect(
        kit.rpcs('notifications/cancelled').filter((r) => r.params?.requestId === 999),
      ).toEqual([]);
    });

    it('B13, disconnect: a client that drops its call cancels the upstream request too (docs/operations.md §10 "Relaying" chooses this over the case\'s "SHOULD NOT")', async () => {
      kit.onTool('slow', () => ({ hang: true }));
      const before = kit.calls('slow').length;
      // node:http, not fetch: an aborted fetch leaves undici holding a spare connection open
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: 301,
        method: 'tools/call',
        params: { name: 'kit__slow', arguments: {} },
      });
      const req = request({
        host: '127.0.0.1',
        port: gateway.mcpPort,
        path: '/mcp',
        method: 'POST',
        agent: false,
        headers: { ...STANDARD_HEADERS, 'content-length': String(Buffer.byteLength(body)) },
      });
      req.on('error', () => undefined);
      req.end(body);
      await waitFor(() => kit.calls('slow').length === before + 1);
      const forwardedId = kit.calls('slow').at(-1)!.id;
      req.destroy();
      await waitFor(() =>
        kit.rpcs('notifications/cancelled').some((r) => r.params?.requestId === forwardedId),
      );
    });
  });

  describe('list changes (B25)', () => {
    const listChanged = { jsonrpc: '2.0', method: 'notifications/tools/list_changed' };

    it('B25: notifications/tools/list_changed on an upstream GET stream refreshes that upstream: its new tool is listed within 5 s, with no storm of pulls', async () => {
      const dyn = track(
        await ScriptedUpstream.start({ tools: [upTool('add_actor')], getStream: true }),
      );
      const noget = track(await ScriptedUpstream.start({ tools: [upTool('static1')] }));
      const gateway = track(
        await GatewayProcess.start({
          mcp: gatewayConfig([], {
            upstreams: [
              { id: 'dyn', url: dyn.url },
              { id: 'noget', url: noget.url },
            ],
          }),
          waitReady: true,
        }),
      );
      await waitFor(() => dyn.openStreams === 1);
      const pullsBefore = dyn.rpcs('tools/list').length;
      dyn.tools.push(upTool('rag_browser'));
      expect(dyn.push(listChanged)).toBe(1);
      await waitFor(async () => (await toolNames(gateway)).includes('dyn__rag_browser'), 5000);
      expect(await toolNames(gateway)).toEqual([
        'dyn__add_actor',
        'dyn__rag_browser',
        'noget__static1',
      ]);
      await sleep(1000);
      // one notification, one refresh round (not a storm)
      expect(dyn.rpcs('tools/list').length - pullsBefore).toBe(1);
    });

    it('B25: notifications/tools/list_changed on the SSE answer of a call refreshes that upstream too', async () => {
      const dyn = track(await ScriptedUpstream.start({ tools: [upTool('add_actor')] }));
      dyn.onTool('add_actor', () => {
        dyn.tools = [upTool('add_actor'), upTool('rag_browser')];
        return { events: [listChanged], result: { content: [{ type: 'text', text: 'ok' }] } };
      });
      const gateway = track(
        await GatewayProcess.start({
          mcp: gatewayConfig([], { upstreams: [{ id: 'dyn', url: dyn.url }] }),
          waitReady: true,
        }),
      );
      const call = await streamPost(
        gateway.mcpUrl,
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'dyn__add_actor' } },
        {},
      );
      expect(textOf(call.messages.at(-1)!.message)).toBe('ok');
      await waitFor(async () => (await toolNames(gateway)).includes('dyn__rag_browser'), 5000);
    });

    it('B25: an upstream that answers GET with 405 is not asked again, and one whose GET fails with 5xx is retried with backoff, never in a tight loop; neither causes list pulls', async () => {
      const noget = track(await ScriptedUpstream.start({ tools: [upTool('static1')] }));
      const flaky = track(await ScriptedUpstream.start({ tools: [upTool('s2')], getStream: true }));
      flaky.getStatus = 503;
      const gateway = track(
        await GatewayProcess.start({
          mcp: gatewayConfig([], {
            upstreams: [
              { id: 'noget', url: noget.url },
              { id: 'flaky', url: flaky.url },
            ],
          }),
          waitReady: true,
        }),
      );
      const listsBefore = noget.rpcs('tools/list').length + flaky.rpcs('tools/list').length;
      await sleep(3000);
      expect(noget.requests.filter((r) => r.httpMethod === 'GET')).toHaveLength(1);
      // 250 ms doubling: about 4 attempts in 3 s, not hundreds
      const gets = flaky.requests.filter((r) => r.httpMethod === 'GET').length;
      expect(gets).toBeGreaterThanOrEqual(2);
      expect(gets).toBeLessThanOrEqual(6);
      expect(noget.rpcs('tools/list').length + flaky.rpcs('tools/list').length).toBe(listsBefore);
      expect(await toolNames(gateway)).toEqual(['flaky__s2', 'noget__static1']);
    });
  });
});
