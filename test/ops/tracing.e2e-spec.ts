import { randomBytes } from 'node:crypto';
import { stopAfterEach } from '../support/cleanup';
import { bundle, gatewayConfig, manifest, tool, upstream } from '../support/fixtures';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { IntrospectionServer } from '../support/introspection-server';
import { V1Upstream, V2Upstream } from '../support/mcp-upstreams';
import { modernRequest } from '../support/modern-rpc';
import { OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver';
import { postRaw, rpc } from '../support/rpc';
import { freePort } from '../support/redis';
import { TestToolService } from '../support/tool-service';

const RESOURCE = 'https://gateway.test/mcp';
const SERVER = 2;
const CLIENT = 3;

/** calc's forwardHeaders: the trace context headers among them, and one other as a control. */
const CALC_FORWARDS = { forwardHeaders: ['traceparent', 'tracestate', 'x-tenant'] };

const hex = (bytes: number): string => randomBytes(bytes).toString('hex');

/** A W3C trace context a caller sends: its trace id and its own span id. */
function callerTrace(): { traceId: string; parentId: string; traceparent: string } {
  const traceId = hex(16);
  const parentId = hex(8);
  return { traceId, parentId, traceparent: `00-${traceId}-${parentId}-01` };
}

/**
 * OpenTelemetry traces (docs/operations.md §3 "Traces"): the gateway exports its spans over
 * OTLP/HTTP to a receiver in this test, and the tree joins the caller, the gateway, a Tool
 * Service and an upstream MCP server (v2 SDK): the caller's `traceparent` (header, or `_meta`
 * per SEP-414) is the request span's parent; the Tool Service and the upstream get the
 * gateway's client span as theirs; a refresh round is a trace of its own with a span per pull.
 */
describe('OpenTelemetry traces across the gateway, a Tool Service and an upstream', () => {
  let receiver: OtlpReceiver;
  let service: TestToolService;
  let calc: V2Upstream;
  /** A 2025-11-25 server (v1 SDK): its session is opened by the gateway. */
  let repo: V1Upstream;
  let idp: IntrospectionServer;
  let gateway: GatewayProcess;
  /** The same, sampling none of the traces it starts itself (mcp.tracing.samplingRatio 0). */
  let unsampled: GatewayProcess;

  beforeAll(async () => {
    [receiver, service, calc, idp, repo] = await Promise.all([
      OtlpReceiver.start(),
      TestToolService.start(manifest('tr', [tool({ name: 'tr.echo' })])),
      V2Upstream.start(),
      IntrospectionServer.start(),
      V1Upstream.start(),
    ]);
    idp.answers.set('opaque-alice', {
      active: true,
      sub: 'alice',
      scope: 'mcp',
      aud: RESOURCE,
      exp: Math.floor(Date.now() / 1000) + 600,
    });
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('tr', service, 'tr.')], {
          upstreams: [upstream('calc', calc.url, CALC_FORWARDS), upstream('repo', repo.url)],
        }),
        http: { modernEra: true },
        tracing: { endpoint: receiver.url, samplingRatio: 1 },
        auth: {
          mode: 'jwt',
          issuer: 'https://idp.test',
          audience: RESOURCE,
          introspectionUrl: idp.url,
          introspectionClientId: 'gateway-test',
          introspectionClientSecretEnv: 'TEST_INTROSPECTION_SECRET',
        },
      },
      env: { TEST_INTROSPECTION_SECRET: 'secret' },
      waitReady: true,
    });
    unsampled = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('tr', service, 'tr.')], {
          upstreams: [upstream('calc', calc.url, CALC_FORWARDS), upstream('repo', repo.url)],
        }),
        tracing: { endpoint: receiver.url, samplingRatio: 0, serviceName: 'unsampled-gateway' },
      },
      waitReady: true,
    });
  });

  afterAll(async () => {
    await Promise.all([gateway?.stop(), unsampled?.stop()]);
    await Promise.all([service?.stop(), calc?.stop(), repo?.stop(), idp?.stop(), receiver?.stop()]);
  });

  /** Waits until the receiver holds spans of `traceId` matching every check. */
  async function spansOf(
    traceId: string,
    until: (spans: ReceivedSpan[]) => boolean,
  ): Promise<ReceivedSpan[]> {
    let spans: ReceivedSpan[] = [];
    await waitFor(
      () => {
        spans = receiver.trace(traceId);
        return Promise.resolve(until(spans));
      },
      15_000,
      () => `spans of ${traceId}: ${JSON.stringify(spans, null, 1)}\n${gateway.output}`,
    );
    return spans;
  }

  const auth = { authorization: 'Bearer opaque-alice' };
  /** Traces of callers the unsampled gateway followed (their spans are exported by it). */
  const followed = new Set<string>();

  it('a 2025 tools/call of a bundle tool: caller → request span → authenticate, POST to the Tool Service, whose traceparent is that POST span', async () => {
    const caller = callerTrace();
    const call = await rpc(
      gateway.mcpUrl,
      'tools/call',
      { name: 'tr.echo', arguments: { n: 1 } },
      { ...auth, traceparent: caller.traceparent },
    );
    expect(call.json.result.isError).toBeFalsy();
    const spans = await spansOf(caller.traceId, (s) => s.length >= 3);
    const request = spans.find((s) => s.kind === SERVER)!;
    expect(request).toMatchObject({
      name: 'tools/call tr.echo',
      parentSpanId: caller.parentId,
      service: 'mcp-gateway',
      attributes: expect.objectContaining({
        'mcp.method.name': 'tools/call',
        'gen_ai.tool.name': 'tr.echo',
        'gen_ai.operation.name': 'execute_tool',
        'mcp.protocol.version': '2025-11-25',
        'jsonrpc.request.id': '1',
        'user.id': 'alice',
        'mcp_gateway.source.id': 'tr',
        'mcp_gateway.tool_call.outcome': 'ok',
        'http.response.status_code': 200,
      }),
    });
    const authSpan = spans.find((s) => s.name === 'authenticate');
    expect(authSpan?.parentSpanId).toBe(request.spanId);
    const post = spans.find((s) => s.kind === CLIENT)!;
    expect(post).toMatchObject({
      name: 'POST',
      parentSpanId: request.spanId,
      attributes: expect.objectContaining({
        'http.request.method': 'POST',
        'http.response.status_code': 200,
        'gen_ai.tool.name': 'tr.echo',
        'mcp_gateway.source.id': 'tr',
      }),
    });
    const received = service.toolRequests('tr.echo').at(-1)!;
    expect(received.headers.traceparent).toBe(`00-${caller.traceId}-${post.spanId}-01`);
  });

  it('a 2026 tools/call of an upstream tool with the trace context in _meta (SEP-414): request → authenticate, mrtr round → the upstream request, whose span the upstream gets in its header and in _meta', async () => {
    const caller = callerTrace();
    const call = await modernRequest(
      gateway.mcpUrl,
      'tools/call',
      { name: 'calc__add', arguments: { a: 2, b: 3 }, _meta: { traceparent: caller.traceparent } },
      {},
      'opaque-alice',
    );
    expect(call.json.result.structuredContent).toEqual({ sum: 5 });
    const spans = await spansOf(caller.traceId, (s) => s.length >= 4);
    const request = spans.find((s) => s.kind === SERVER)!;
    expect(request.parentSpanId).toBe(caller.parentId);
    expect(request.attributes['mcp.protocol.version']).toBe('2026-07-28');
    // a 2026 call of an upstream tool is a round of a multi round-trip exchange
    const round = spans.find((s) => s.name === 'mrtr round')!;
    expect(round).toMatchObject({
      parentSpanId: request.spanId,
      attributes: expect.objectContaining({
        'mcp_gateway.mrtr.client_era': '2026-07-28',
        'mcp_gateway.mrtr.retry': false,
      }),
    });
    const client = spans.find((s) => s.kind === CLIENT)!;
    expect(client).toMatchObject({
      name: 'tools/call add',
      parentSpanId: round.spanId,
      attributes: expect.objectContaining({
        'mcp.method.name': 'tools/call',
        'mcp_gateway.source.id': 'calc',
        'gen_ai.tool.name': 'add',
      }),
    });
    const forwarded = calc.requestsFor('tools/call').at(-1)!;
    const expected = `00-${caller.traceId}-${client.spanId}-01`;
    expect(forwarded.headers.traceparent).toBe(expected);
    expect(
      (forwarded.body as { params: { _meta: Record<string, unknown> } }).params._meta.traceparent,
    ).toBe(expected);
  });

  it("a 2025 upstream's session opened during a traced call: initialize and notifications/initialized are CLIENT spans under the call's upstream request, and the upstream gets each one's context in its header and in _meta", async () => {
    await repo.expireSessions();
    const caller = callerTrace();
    const answer = await rpc(
      gateway.mcpUrl,
      'tools/call',
      { name: 'repo__repo_search', arguments: { query: 'trace' } },
      { ...auth, traceparent: caller.traceparent },
    );
    expect(answer.json.result.content[0].text).toContain('"hits":2');
    const spans = await spansOf(caller.traceId, (s) =>
      ['initialize', 'notifications/initialized'].every((name) => s.some((x) => x.name === name)),
    );
    const call = spans.find((s) => s.kind === CLIENT && s.name === 'tools/call repo.search')!;
    expect(call).toBeDefined();
    for (const name of ['initialize', 'notifications/initialized']) {
      const span = spans.find((s) => s.name === name)!;
      expect(span).toMatchObject({
        kind: CLIENT,
        parentSpanId: call.spanId,
        attributes: expect.objectContaining({
          'mcp.method.name': name,
          'mcp_gateway.source.id': 'repo',
        }),
      });
      const sent = repo.requestsFor(name).at(-1)!;
      const expected = `00-${caller.traceId}-${span.spanId}-01`;
      expect(sent.headers.traceparent).toBe(expected);
      expect((sent.body as { params: { _meta: Record<string, unknown> } }).params._meta).toEqual(
        expect.objectContaining({ traceparent: expected }),
      );
    }
    // the call itself went on the new session, with the call's own span, which names the
    // request's id and the session's protocol version
    const sent = repo.requestsFor('tools/call').at(-1)!;
    expect(sent.headers.traceparent).toBe(`00-${caller.traceId}-${call.spanId}-01`);
    expect(call.attributes).toMatchObject({
      'mcp.protocol.version': '2025-11-25',
      'jsonrpc.request.id': String((sent.body as { id: number }).id),
    });
    expect(call.attributes['mcp.session.id']).toBeUndefined();
  });

  it("an untraced request's session traffic carries no trace context", async () => {
    await repo.expireSessions();
    const before = repo.requestsFor('initialize').length;
    // the unsampled gateway (ratio 0) starts no trace: nothing to pass on
    const answer = await rpc(unsampled.mcpUrl, 'tools/call', {
      name: 'repo__repo_search',
      arguments: { query: 'quiet' },
    });
    expect(answer.json.result.content[0].text).toContain('"hits":2');
    const opened = repo.requestsFor('initialize').slice(before);
    expect(opened.length).toBeGreaterThan(0);
    for (const sent of [...opened, ...repo.requestsFor('notifications/initialized').slice(-1)]) {
      expect(sent.headers.traceparent).toBeUndefined();
      expect((sent.body as { params?: { _meta?: unknown } }).params?._meta).toBeUndefined();
    }
  });

  it("a tool's own failure (isError) marks the request span and the upstream's span tool_error; a Tool Service's 4xx marks its POST span", async () => {
    const caller = callerTrace();
    const flaky = await rpc(
      gateway.mcpUrl,
      'tools/call',
      { name: 'repo__flaky', arguments: {} },
      { ...auth, traceparent: caller.traceparent },
    );
    expect(flaky.json.result.isError).toBe(true);
    const spans = await spansOf(caller.traceId, (s) =>
      s.some((x) => x.kind === CLIENT && x.name === 'tools/call flaky'),
    );
    for (const span of [
      spans.find((s) => s.kind === SERVER)!,
      spans.find((s) => s.kind === CLIENT && s.name === 'tools/call flaky')!,
    ])
      expect(span).toMatchObject({
        statusCode: 2,
        attributes: expect.objectContaining({ 'error.type': 'tool_error' }),
      });

    service.tools.set('tr.echo', () => ({ status: 422, body: { error: 'bad input' } }));
    try {
      const refused = callerTrace();
      await rpc(
        gateway.mcpUrl,
        'tools/call',
        { name: 'tr.echo', arguments: {} },
        { ...auth, traceparent: refused.traceparent },
      );
      const posted = await spansOf(refused.traceId, (s) =>
        s.some((x) => x.kind === CLIENT && x.name === 'POST'),
      );
      expect(posted.find((s) => s.kind === CLIENT && s.name === 'POST')).toMatchObject({
        statusCode: 2,
        attributes: expect.objectContaining({
          'http.response.status_code': 422,
          'error.type': '422',
        }),
      });
    } finally {
      service.tools.delete('tr.echo');
    }
  });

  it('a caller context in _meta behind a \\u escape is followed, as JSON reads it', async () => {
    const caller = callerTrace();
    // the unsampled gateway starts no trace itself: only the caller's context makes one
    const body =
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tr.echo","arguments":{},' +
      `"_meta":{"trace\\u0070arent":"${caller.traceparent}"}}}`;
    followed.add(caller.traceId);
    const answer = await postRaw(unsampled.mcpUrl, body);
    expect(answer.json.result.isError).toBeFalsy();
    expect(service.toolRequests('tr.echo').at(-1)!.headers.traceparent).toMatch(
      new RegExp(`^00-${caller.traceId}-[0-9a-f]{16}-01$`),
    );
  });

  it('a request without a trace context starts a trace; a refused call is marked with its JSON-RPC code', async () => {
    const before = new Set(receiver.spans.map((s) => s.traceId));
    // arguments that are not an object: -32602 from the gateway, nothing sent on
    const call = await rpc(
      gateway.mcpUrl,
      'tools/call',
      { name: 'calc__add', arguments: 'x' },
      auth,
    );
    expect(call.json.error.code).toBe(-32602);
    await waitFor(
      () =>
        Promise.resolve(
          receiver.spans.some(
            (s) => s.kind === SERVER && !before.has(s.traceId) && s.name === 'tools/call calc__add',
          ),
        ),
      15_000,
      () => 'no span of the refused call',
    );
    const span = receiver.spans.find(
      (s) => s.kind === SERVER && !before.has(s.traceId) && s.name === 'tools/call calc__add',
    )!;
    expect(span.parentSpanId).toBe('');
    expect(span.attributes['error.type']).toBe('-32602');
    expect(span.attributes['rpc.response.status_code']).toBe('-32602');
  });

  it('a refresh round is a trace of its own, with a span per source pull and the upstream list requests under its pull', async () => {
    const before = receiver.spans.length;
    // a tools/call of a name no source publishes runs one round (contract §8)
    await rpc(gateway.mcpUrl, 'tools/call', { name: 'tr.nothing', arguments: {} }, auth);
    const round = await (async () => {
      let found: ReceivedSpan | undefined;
      await waitFor(
        () => {
          found = receiver.spans.slice(before).find((s) => s.name === 'refresh round');
          return Promise.resolve(
            found !== undefined &&
              receiver.trace(found.traceId).some((s) => s.name === 'pull upstream calc') &&
              receiver.trace(found.traceId).some((s) => s.name === 'pull bundle tr'),
          );
        },
        15_000,
        () =>
          `no refresh round: ${JSON.stringify(receiver.spans.slice(before).map((s) => s.name))}`,
      );
      return found!;
    })();
    expect(round.parentSpanId).toBe('');
    const spans = await spansOf(round.traceId, (s) =>
      s.some((x) => x.kind === CLIENT && x.attributes['mcp.method.name'] === 'tools/list'),
    );
    const pull = spans.find((s) => s.name === 'pull upstream calc')!;
    expect(pull.parentSpanId).toBe(round.spanId);
    expect(spans.find((s) => s.name === 'pull bundle tr')?.parentSpanId).toBe(round.spanId);
    const list = spans.find(
      (s) => s.kind === CLIENT && s.attributes['mcp.method.name'] === 'tools/list',
    )!;
    expect(list.parentSpanId).toBe(pull.spanId);
    // the bundle's manifest GET is a CLIENT span under its pull; the Tool Service gets it
    const bundlePull = spans.find((s) => s.name === 'pull bundle tr')!;
    const withGet = await spansOf(round.traceId, (s) =>
      s.some((x) => x.kind === CLIENT && x.parentSpanId === bundlePull.spanId),
    );
    const get = withGet.find((x) => x.kind === CLIENT && x.parentSpanId === bundlePull.spanId)!;
    expect(get).toMatchObject({
      name: 'GET',
      attributes: expect.objectContaining({
        'http.request.method': 'GET',
        'http.response.status_code': 200,
      }),
    });
    expect(service.manifestRequests().map((r) => r.headers.traceparent)).toContain(
      `00-${round.traceId}-${get.spanId}-01`,
    );
  });

  it('a POST answered before its body is read (refused token, wrong media type) is a SERVER span of its own', async () => {
    const refused = callerTrace();
    const answer = await rpc(
      gateway.mcpUrl,
      'tools/call',
      { name: 'tr.echo', arguments: {} },
      { authorization: 'Bearer opaque-mallory', traceparent: refused.traceparent },
    );
    expect(answer.status).toBe(401);
    const spans = await spansOf(refused.traceId, (s) => s.some((x) => x.name === 'authenticate'));
    const request = spans.find((x) => x.kind === SERVER)!;
    expect(request).toMatchObject({
      name: 'POST /mcp',
      parentSpanId: refused.parentId,
      attributes: expect.objectContaining({
        'http.response.status_code': 401,
        'error.type': '401',
      }),
    });
    expect(spans.find((x) => x.name === 'authenticate')).toMatchObject({
      parentSpanId: request.spanId,
      attributes: expect.objectContaining({ 'mcp_gateway.auth.outcome': 'refused' }),
    });
    const media = callerTrace();
    const unsupported = await fetch(gateway.mcpUrl, {
      method: 'POST',
      headers: {
        ...auth,
        'content-type': 'text/plain',
        accept: 'application/json, text/event-stream',
        traceparent: media.traceparent,
      },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    });
    expect(unsupported.status).toBe(415);
    const mediaSpans = await spansOf(media.traceId, (s) => s.some((x) => x.kind === SERVER));
    expect(mediaSpans.find((x) => x.kind === SERVER)).toMatchObject({
      name: 'POST /mcp',
      parentSpanId: media.parentId,
      attributes: expect.objectContaining({
        'http.response.status_code': 415,
        'user.id': 'alice',
      }),
    });
  });

  it("a caller's trace context in _meta never reaches an upstream beside the gateway's: replaced when traced, dropped when not", async () => {
    const header = callerTrace();
    const other = callerTrace();
    // the header's context is the parent; _meta's other traceparent and tracestate go
    await rpc(
      gateway.mcpUrl,
      'tools/call',
      {
        name: 'calc__add',
        arguments: { a: 1, b: 2 },
        _meta: { traceparent: other.traceparent, tracestate: 'evil=fromMeta' },
      },
      { ...auth, traceparent: header.traceparent },
    );
    let forwarded = calc.requestsFor('tools/call').at(-1)!;
    let meta = (forwarded.body as { params: { _meta: Record<string, unknown> } }).params._meta;
    expect(meta.traceparent).toBe(forwarded.headers.traceparent);
    expect(String(meta.traceparent)).toMatch(new RegExp(`^00-${header.traceId}-`));
    expect(meta.tracestate).toBeUndefined();
    // a malformed one: the gateway's own trace instead
    await rpc(
      gateway.mcpUrl,
      'tools/call',
      {
        name: 'calc__add',
        arguments: { a: 1, b: 2 },
        _meta: { traceparent: 'garbage', tracestate: 'evil=1' },
      },
      auth,
    );
    forwarded = calc.requestsFor('tools/call').at(-1)!;
    meta = (forwarded.body as { params: { _meta: Record<string, unknown> } }).params._meta;
    expect(String(meta.traceparent)).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(meta.traceparent).toBe(forwarded.headers.traceparent);
    expect(meta.tracestate).toBeUndefined();
    // a trace the gateway did not sample: the caller's malformed context is not passed on
    await rpc(unsampled.mcpUrl, 'tools/call', {
      name: 'calc__add',
      arguments: { a: 1, b: 2 },
      _meta: { traceparent: 'garbage', tracestate: 'evil=1', progressToken: 'kept' },
    });
    forwarded = calc.requestsFor('tools/call').at(-1)!;
    meta = (forwarded.body as { params: { _meta: Record<string, unknown> } }).params._meta;
    // a progress token goes on as the gateway's own (libs/upstream/src/progress-token.ts)
    expect(meta).toEqual(
      expect.objectContaining({ progressToken: (forwarded.body as { id: unknown }).id }),
    );
    expect(meta.traceparent).toBeUndefined();
    expect(meta.tracestate).toBeUndefined();
    expect(forwarded.headers.traceparent).toBeUndefined();
  });

  it("forwardHeaders naming traceparent and tracestate: the upstream gets the gateway's context (or none), never the caller's headers beside it; other forwarded headers pass", async () => {
    const caller = callerTrace();
    const add = { name: 'calc__add', arguments: { a: 1, b: 2 } };
    // the context from _meta is the parent; the caller's tracestate header stays behind
    await rpc(
      gateway.mcpUrl,
      'tools/call',
      { ...add, _meta: { traceparent: caller.traceparent } },
      { ...auth, tracestate: 'evil=fromheader', 'x-tenant': 't1' },
    );
    let forwarded = calc.requestsFor('tools/call').at(-1)!;
    const meta = (forwarded.body as { params: { _meta: Record<string, unknown> } }).params._meta;
    expect(String(forwarded.headers.traceparent)).toMatch(new RegExp(`^00-${caller.traceId}-`));
    expect(forwarded.headers.traceparent).toBe(meta.traceparent);
    expect(forwarded.headers.tracestate).toBeUndefined();
    expect(forwarded.headers['x-tenant']).toBe('t1');
    // a malformed header context: the gateway's own trace, the caller's tracestate gone
    await rpc(gateway.mcpUrl, 'tools/call', add, {
      ...auth,
      traceparent: 'garbage',
      tracestate: 'evil=2',
    });
    forwarded = calc.requestsFor('tools/call').at(-1)!;
    expect(String(forwarded.headers.traceparent)).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(forwarded.headers.tracestate).toBeUndefined();
    // not traced: no trace context at all
    await rpc(unsampled.mcpUrl, 'tools/call', add, {
      traceparent: 'garbage',
      tracestate: 'evil=3',
      'x-tenant': 't2',
    });
    forwarded = calc.requestsFor('tools/call').at(-1)!;
    expect(forwarded.headers.traceparent).toBeUndefined();
    expect(forwarded.headers.tracestate).toBeUndefined();
    expect(forwarded.headers['x-tenant']).toBe('t2');
  });

  it("sampling 0: a request it starts is not recorded and sends no trace context on; a caller's sampled context is followed", async () => {
    const plain = await rpc(unsampled.mcpUrl, 'tools/call', { name: 'tr.echo', arguments: {} });
    expect(plain.json.result.isError).toBeFalsy();
    expect(service.toolRequests('tr.echo').at(-1)!.headers.traceparent).toBeUndefined();
    const caller = callerTrace();
    await rpc(
      unsampled.mcpUrl,
      'tools/call',
      { name: 'tr.echo', arguments: {} },
      { traceparent: caller.traceparent },
    );
    const spans = await spansOf(caller.traceId, (s) => s.some((x) => x.kind === CLIENT));
    expect(spans.every((x) => x.service === 'unsampled-gateway')).toBe(true);
    const post = spans.find((x) => x.kind === CLIENT)!;
    expect(service.toolRequests('tr.echo').at(-1)!.headers.traceparent).toBe(
      `00-${caller.traceId}-${post.spanId}-01`,
    );
    // and an unsampled caller context records nothing either
    const off = callerTrace();
    await rpc(
      unsampled.mcpUrl,
      'tools/call',
      { name: 'tr.echo', arguments: {} },
      { traceparent: `00-${off.traceId}-${off.parentId}-00` },
    );
    // the caller's decision is passed on: the Tool Service gets its trace, flagged not sampled
    expect(service.toolRequests('tr.echo').at(-1)!.headers.traceparent).toMatch(
      new RegExp(`^00-${off.traceId}-[0-9a-f]{16}-00$`),
    );
    // the spans of the sampled call above were exported; give the exporter one more batch
    await new Promise((r) => setTimeout(r, 1500));
    expect(
      receiver.spans.filter(
        (x) =>
          x.service === 'unsampled-gateway' &&
          x.traceId !== caller.traceId &&
          !followed.has(x.traceId),
      ),
    ).toEqual([]);
  });

  it('what a caller sends is bounded in the span: a method and an id of 100,000 characters', async () => {
    const caller = callerTrace();
    const long = 'x'.repeat(100_000);
    const answer = await rpc(
      gateway.mcpUrl,
      long,
      {},
      { ...auth, traceparent: caller.traceparent },
      long,
    );
    expect(answer.json.error.code).toBe(-32601);
    const [span] = await spansOf(caller.traceId, (s) => s.some((x) => x.kind === SERVER));
    expect(span!.name.length).toBeLessThanOrEqual(128);
    expect(String(span!.attributes['mcp.method.name']).length).toBeLessThanOrEqual(128);
    expect(String(span!.attributes['jsonrpc.request.id']).length).toBeLessThanOrEqual(128);
  });

  it('exports with the OTLP JSON encoding', () => {
    expect(receiver.contentTypes.every((t) => t.startsWith('application/json'))).toBe(true);
  });
});

/**
 * An export that fails — a collector that is down, or an endpoint whose path is wrong and
 * answers 404 — is said in the gateway's log (docs/operations.md §3 "Traces"): before, the
 * SDK's errors went nowhere and a gateway exporting to a wrong path looked healthy. One line
 * first, then at most one a minute.
 */
describe('failed trace exports are logged', () => {
  const track = stopAfterEach();

  it.each([
    ['a collector that is down', async () => `http://127.0.0.1:${await freePort()}/v1/traces`],
    [
      'an endpoint answering 404 (no /v1/traces)',
      async () => {
        const service = track(await TestToolService.start(manifest('nf', [])));
        return `http://127.0.0.1:${new URL(service.url).port}/`;
      },
    ],
  ])('%s', async (_what, endpoint) => {
    const service = track(await TestToolService.start(manifest('tr', [tool({ name: 'tr.echo' })])));
    const gateway = track(
      await GatewayProcess.start({
        mcp: {
          ...gatewayConfig([bundle('tr', service, 'tr.')]),
          tracing: { endpoint: await endpoint(), samplingRatio: 1, exportTimeoutMillis: 2_000 },
        },
        waitReady: true,
      }),
    );
    for (let i = 0; i < 5; i++) {
      expect(
        (await rpc(gateway.mcpUrl, 'tools/call', { name: 'tr.echo', arguments: {} })).json.result
          .isError,
      ).toBeFalsy();
      await new Promise((r) => setTimeout(r, 400));
    }
    await gateway.waitForOutput('"msg":"OpenTelemetry SDK: ', 15_000);
    await new Promise((r) => setTimeout(r, 2_500));
    expect(gateway.output.split('"msg":"OpenTelemetry SDK: ').length - 1).toBe(1);
  });
});
