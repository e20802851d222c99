import { decodeJwt } from 'jose';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool, upstream } from '../support/fixtures';
import { ListenUpstream } from '../support/listen-upstream';
import { V2Upstream } from '../support/mcp-upstreams';
import { V1AskingUpstream } from '../mrtr/mrtr-upstreams';
import { TestAuthorizationServer } from '../support/oidc-provider';
import { OtlpReceiver } from '../support/otlp-receiver';
import { postRaw, rpc } from '../support/rpc';
import { connectV1, connectV2 } from '../support/sdk-clients';
import { SseReader } from '../support/sse-reader';
import { TestToolService } from '../support/tool-service';

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const GATEWAY_AUD = 'http://127.0.0.1/mcp-gateway';
const CALC_AUD = 'https://calc.internal.example/mcp';
const OPS_AUD = 'https://ops.internal.example';
const LIVE_AUD = 'https://live.internal.example/mcp';
const LISTEN_AUD = 'https://listen.internal.example/mcp';
const ASK_AUD = 'https://ask.internal.example/mcp';
const GATEWAY_CLIENT = {
  client_id: 'mcp-gateway',
  client_secret: 'gw-secret-91c2',
  grant_types: ['client_credentials', TOKEN_EXCHANGE],
};
/** A client the authorization server does not allow to exchange tokens (pulls still work). */
const NO_EXCHANGE_CLIENT = {
  client_id: 'no-exchange',
  client_secret: 'nx-secret-5d7e',
  grant_types: ['client_credentials'],
};

function bearerOf(headers: Record<string, string | string[] | undefined>): string | undefined {
  const value = headers.authorization;
  return typeof value === 'string' && value.startsWith('Bearer ') ? value.slice(7) : undefined;
}

function auditLines(gateway: GatewayProcess): Record<string, unknown>[] {
  return gateway.stdout
    .split('\n')
    .filter((line) => line.includes('"audit":"tools/call"'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/**
 * docs/operations.md §14 "Credentials towards sources", with a real authorization server
 * (oidc-provider 9 + the RFC 8693 grant): the gateway verifies the caller's JWT, and each source
 * whose authorization mode is tokenExchange gets a token issued for its own audience, never the
 * caller's.
 */
describe('token exchange towards sources (docs/operations.md §14 "Credentials towards sources")', () => {
  let as: TestAuthorizationServer;
  let calc: V2Upstream;
  let plain: V2Upstream;
  let guarded: V2Upstream;
  let live: V2Upstream;
  let lsn: ListenUpstream;
  let ask: V1AskingUpstream;
  let ops: TestToolService;
  let gateway: GatewayProcess;
  /** Where the gateway's spans go (traces on, every request sampled). */
  let receiver: OtlpReceiver;
  const callerTokens: string[] = [];

  async function userToken(subject: string): Promise<string> {
    const minted = await as.mint({ subject, resource: GATEWAY_AUD, scope: 'mcp' });
    callerTokens.push(minted.access_token);
    return minted.access_token;
  }

  const exchange = (audience: string, clientId = GATEWAY_CLIENT.client_id): object => ({
    mode: 'tokenExchange',
    tokenEndpoint: as.tokenUrl,
    clientId,
    clientSecretEnv: clientId === GATEWAY_CLIENT.client_id ? 'GW_CLIENT_SECRET' : 'NX_SECRET',
    audience,
  });

  beforeAll(async () => {
    as = await TestAuthorizationServer.start({
      clients: [GATEWAY_CLIENT, NO_EXCHANGE_CLIENT],
      resources: {
        [GATEWAY_AUD]: { scope: 'mcp' },
        [CALC_AUD]: { scope: 'calc' },
        [OPS_AUD]: { scope: 'ops' },
        [LIVE_AUD]: { scope: 'live' },
        [LISTEN_AUD]: { scope: 'listen' },
        [ASK_AUD]: { scope: 'ask' },
      },
      defaultResource: GATEWAY_AUD,
    });
    [calc, plain, guarded, live, lsn, ask] = await Promise.all([
      V2Upstream.start(),
      V2Upstream.start(),
      V2Upstream.start(),
      V2Upstream.start(),
      ListenUpstream.start(['echo']),
      V1AskingUpstream.start(),
    ]);
    ops = await TestToolService.start(manifest('ops', [tool({ name: 'ops.echo' })]));
    receiver = await OtlpReceiver.start();
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('ops', ops, 'ops.', { authorization: exchange(OPS_AUD) })], {
          upstreams: [
            upstream('calc', calc.url, { authorization: exchange(CALC_AUD) }),
            upstream('plain', plain.url),
            upstream('guarded', guarded.url, {
              authorization: exchange('https://guarded.example', NO_EXCHANGE_CLIENT.client_id),
            }),
            upstream('live', live.url, { lists: 'live', authorization: exchange(LIVE_AUD) }),
            upstream('lsn', lsn.url, { authorization: exchange(LISTEN_AUD) }),
            upstream('ask', ask.url, {
              authorization: exchange(ASK_AUD),
              timeouts: { callMillis: 30_000 },
            }),
          ],
        }),
        auth: { mode: 'jwt', issuer: as.issuer, audience: GATEWAY_AUD, jwksUrl: as.jwksUrl },
        tracing: { endpoint: receiver.url, samplingRatio: 1 },
      },
      env: {
        LOG_LEVEL: 'info',
        GW_CLIENT_SECRET: GATEWAY_CLIENT.client_secret,
        NX_SECRET: NO_EXCHANGE_CLIENT.client_secret,
      },
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([
      calc?.stop(),
      plain?.stop(),
      guarded?.stop(),
      live?.stop(),
      lsn?.stop(),
      ask?.stop(),
      ops?.stop(),
      receiver?.stop(),
    ]);
    await as?.stop();
  });

  it('a token exchange in a traced call is a CLIENT span of that trace, under the request', async () => {
    const traceId = 'ab'.repeat(16);
    const token = await userToken('traced-user');
    const call = await rpc(
      gateway.mcpUrl,
      'tools/call',
      { name: 'ops.echo', arguments: {} },
      { authorization: `Bearer ${token}`, traceparent: `00-${traceId}-${'cd'.repeat(8)}-01` },
    );
    expect(call.json.result.isError).toBeFalsy();
    await waitFor(
      () =>
        receiver.trace(traceId).some((s) => s.attributes['mcp_gateway.auth.request'] !== undefined),
      15_000,
      () => JSON.stringify(receiver.trace(traceId), null, 1),
    );
    const spans = receiver.trace(traceId);
    const request = spans.find((s) => s.kind === 2)!;
    const exchanged = spans.find(
      (s) => s.attributes['mcp_gateway.auth.request'] === 'token_endpoint',
    )!;
    expect(exchanged).toMatchObject({
      kind: 3,
      name: 'POST',
      parentSpanId: request.spanId,
      attributes: expect.objectContaining({
        'http.request.method': 'POST',
        'url.full': as.tokenUrl,
        'http.response.status_code': 200,
      }),
    });
  });

  it("list pulls carry the gateway's client-credentials token for the upstream's audience", () => {
    const pulls = calc.requestsFor('tools/list');
    expect(pulls.length).toBeGreaterThan(0);
    const token = bearerOf(pulls[0]!.headers);
    expect(token).toBeDefined();
    expect(decodeJwt(token!)).toMatchObject({
      aud: CALC_AUD,
      client_id: 'mcp-gateway',
      sub: 'mcp-gateway',
    });
    for (const request of plain.requests) expect(request.headers.authorization).toBeUndefined();
  });

  it('the v1 SDK agent calls an upstream tool: the upstream gets a token with its own audience for the same user, never the caller token', async () => {
    const alice = await userToken('alice');
    const client = await connectV1(gateway.mcpUrl, { authorization: `Bearer ${alice}` });
    try {
      const result = await client.callTool({ name: 'calc__add', arguments: { a: 2, b: 5 } });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toEqual({ sum: 7 });
    } finally {
      await client.close();
    }
    const call = calc.requestsFor('tools/call').at(-1)!;
    const sent = bearerOf(call.headers)!;
    expect(sent).toBeDefined();
    expect(sent).not.toBe(alice);
    expect(decodeJwt(sent)).toMatchObject({
      iss: as.issuer,
      aud: CALC_AUD,
      sub: 'alice',
      act: { sub: 'mcp-gateway' },
    });
  });

  it('a bundle gets a token for its own audience; the caller headers of the contract still pass', async () => {
    const bob = await userToken('bob');
    const answer = await rpc(
      gateway.mcpUrl,
      'tools/call',
      { name: 'ops.echo', arguments: { q: 1 } },
      { authorization: `Bearer ${bob}`, guid: 'g-77', 'employee-no': 'E-1' },
    );
    expect(answer.status).toBe(200);
    expect(answer.json.result.isError).toBeUndefined();
    const request = ops.requests.filter((r) => r.method === 'POST').at(-1)!;
    const sent = bearerOf(request.headers)!;
    expect(sent).not.toBe(bob);
    expect(decodeJwt(sent)).toMatchObject({
      aud: OPS_AUD,
      sub: 'bob',
      act: { sub: 'mcp-gateway' },
    });
    expect(request.headers.guid).toBe('g-77');
    expect(request.headers['employee-no']).toBe('E-1');
  });

  it('the exchanged token is cached per caller token: a second call asks the authorization server nothing; another caller gets its own', async () => {
    const carol = await userToken('carol');
    const call = (token: string): ReturnType<typeof rpc> =>
      rpc(
        gateway.mcpUrl,
        'tools/call',
        { name: 'calc__add', arguments: { a: 1, b: 1 } },
        {
          authorization: `Bearer ${token}`,
        },
      );
    expect((await call(carol)).status).toBe(200);
    const after = (await as.counters()).exchange;
    expect((await call(carol)).status).toBe(200);
    expect((await as.counters()).exchange).toBe(after);
    const [first, second] = calc
      .requestsFor('tools/call')
      .slice(-2)
      .map((r) => bearerOf(r.headers));
    expect(first).toBe(second);
    const dave = await userToken('dave');
    expect((await call(dave)).status).toBe(200);
    expect((await as.counters()).exchange).toBe(after + 1);
    expect(decodeJwt(bearerOf(calc.requestsFor('tools/call').at(-1)!.headers)!).sub).toBe('dave');
  });

  it('a refused exchange is a tool error that names the cause, without a token; the upstream is not called', async () => {
    const erin = await userToken('erin');
    const client = await connectV2(gateway.mcpUrl, { authorization: `Bearer ${erin}` });
    try {
      const before = guarded.requestsFor('tools/call').length;
      const result = await client.callTool({ name: 'guarded__add', arguments: { a: 1, b: 1 } });
      expect(result.isError).toBe(true);
      const text = JSON.stringify(result.content);
      expect(text).toMatch(/could not obtain a credential/);
      // the client may not use the grant: oidc-provider answers 400 with its RFC 6749 error code
      expect(text).toMatch(/token exchange: the authorization server refused \(HTTP 400 [a-z_]+\)/);
      expect(text).not.toContain(erin);
      expect(guarded.requestsFor('tools/call').length).toBe(before);
    } finally {
      await client.close();
    }
  });

  it("a caller's own side requests (a live tools/list, a 2026 listen) carry the token exchanged for that upstream, as its calls do", async () => {
    const dana = await userToken('dana');
    const list = await rpc(gateway.mcpUrl, 'tools/list', {}, { authorization: `Bearer ${dana}` });
    expect(list.status).toBe(200);
    const fetched = live.requestsFor('tools/list').map((r) => bearerOf(r.headers));
    const forDana = fetched.filter((t) => t !== undefined && decodeJwt(t).sub === 'dana');
    expect(forDana.length).toBeGreaterThan(0);
    for (const token of forDana)
      expect(decodeJwt(token!)).toMatchObject({ aud: LIVE_AUD, act: { sub: 'mcp-gateway' } });
    expect(fetched).not.toContain(undefined);

    const stream = await SseReader.open(
      gateway.mcpUrl,
      'POST',
      {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'subscriptions/listen',
        authorization: `Bearer ${dana}`,
      },
      JSON.stringify({
        jsonrpc: '2.0',
        id: 'L1',
        method: 'subscriptions/listen',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
            'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
          },
          notifications: { toolsListChanged: true },
        },
      }),
    );
    try {
      await waitFor(() => lsn.openListens > 0, 15_000);
      const tokens = lsn.authorizations.map((h) => h.replace(/^Bearer /, ''));
      const danas = tokens.filter((t) => decodeJwt(t).sub === 'dana');
      expect(danas.length).toBeGreaterThan(0);
      for (const token of danas)
        expect(decodeJwt(token)).toMatchObject({ aud: LISTEN_AUD, act: { sub: 'mcp-gateway' } });
      expect(tokens).not.toContain(dana);
    } finally {
      stream.close();
    }
  });

  it("a 2026 client's answer to an input_required bridged from a 2025 tokenExchange upstream reaches the upstream with the token exchanged for that caller, and the retry completes", async () => {
    const token = await userToken('mrtr-user');
    const call = (params: Record<string, unknown>) =>
      postRaw(
        gateway.mcpUrl,
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: {
            name: 'ask__approve',
            arguments: { question: 'Ship it?' },
            ...params,
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
              'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
              ...(params._meta as Record<string, unknown> | undefined),
            },
          },
        }),
        {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'tools/call',
          'mcp-name': 'ask__approve',
          authorization: `Bearer ${token}`,
        },
      );
    const first = await call({});
    expect(first.json.result.resultType).toBe('input_required');
    const [key] = Object.keys(first.json.result.inputRequests as Record<string, unknown>);
    const traceId = 'ef'.repeat(16);
    const retry = await call({
      inputResponses: { [key!]: { action: 'accept', content: { approve: true } } },
      requestState: first.json.result.requestState,
      // traced: the answer the gateway posts to the upstream is in the retry's trace
      _meta: { traceparent: `00-${traceId}-${'12'.repeat(8)}-01` },
    });
    expect(retry.json.result.isError).not.toBe(true);
    expect(retry.json.result.resultType).toBe('complete');
    expect(JSON.stringify(retry.json.result.content)).toContain('approve');
    // the answer (a JSON-RPC response, no method) went with the token exchanged for this caller
    const answers = ask.bodies
      .map((body, i) => ({
        body,
        authorization: ask.authorizations[i],
        traceparent: ask.traceparents[i],
      }))
      .filter(({ body }) => body?.method === undefined && body?.result !== undefined);
    expect(answers).toHaveLength(1);
    expect(answers[0]!.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    const sent = answers[0]!.authorization?.replace(/^Bearer /, '');
    expect(sent).toBeDefined();
    expect(sent).not.toBe(token);
    expect(decodeJwt(sent!)).toMatchObject({ aud: ASK_AUD, sub: 'mrtr-user' });
  });

  it('an upstream without tokenExchange or passthrough never receives an Authorization', async () => {
    const frank = await userToken('frank');
    const answer = await rpc(
      gateway.mcpUrl,
      'tools/call',
      { name: 'plain__add', arguments: { a: 3, b: 4 } },
      { authorization: `Bearer ${frank}` },
    );
    expect(answer.status).toBe(200);
    for (const request of plain.requests) expect(request.headers.authorization).toBeUndefined();
  });

  it("no source ever received a caller's token, and none is in the gateway log; audit lines name the caller", async () => {
    const received = [...calc.requests, ...plain.requests, ...guarded.requests, ...live.requests]
      .map((r) => String(r.headers.authorization ?? ''))
      .concat(lsn.authorizations)
      .concat(ops.requests.map((r) => String(r.headers.authorization ?? '')));
    for (const token of callerTokens) {
      expect(received.some((h) => h.includes(token))).toBe(false);
      expect(gateway.output).not.toContain(token);
    }
    await waitFor(() => auditLines(gateway).some((l) => l.subject === 'erin'), 10_000);
    const lines = auditLines(gateway);
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          subject: 'alice',
          tool: 'calc__add',
          source: 'calc',
          outcome: 'ok',
        }),
        expect.objectContaining({ subject: 'bob', tool: 'ops.echo', source: 'ops', outcome: 'ok' }),
        expect.objectContaining({
          subject: 'erin',
          tool: 'guarded__add',
          source: 'guarded',
          outcome: 'isError',
        }),
      ]),
    );
  });
});

describe('rate limits per authenticated caller (docs/operations.md §14 "Rate limits per caller")', () => {
  let as: TestAuthorizationServer;
  let ops: TestToolService;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    as = await TestAuthorizationServer.start({
      resources: { [GATEWAY_AUD]: { scope: 'mcp' } },
      defaultResource: GATEWAY_AUD,
    });
    ops = await TestToolService.start(manifest('ops', [tool({ name: 'ops.echo' })]));
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('ops', ops, 'ops.')]),
        auth: { mode: 'jwt', issuer: as.issuer, audience: GATEWAY_AUD, jwksUrl: as.jwksUrl },
        rateLimits: { perSubject: { capacity: 2, refillPerSecond: 0.05 } },
        // carol may use the ops bundle; nobody else is granted anything
        access: { rules: [{ match: { subject: 'carol' }, sources: ['ops'] }] },
      },
      env: { LOG_LEVEL: 'info' },
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await ops?.stop();
    await as?.stop();
  });

  it("each caller has its own bucket: one caller's limit leaves another untouched", async () => {
    const alice = (await as.mint({ subject: 'alice', resource: GATEWAY_AUD })).access_token;
    const alice2 = (await as.mint({ subject: 'alice', resource: GATEWAY_AUD })).access_token;
    const bob = (await as.mint({ subject: 'bob', resource: GATEWAY_AUD })).access_token;
    const list = (token: string): Promise<number> =>
      rpc(gateway.mcpUrl, 'tools/list', {}, { authorization: `Bearer ${token}` }).then(
        (a) => a.status,
      );
    expect(await list(alice)).toBe(200);
    // a new token of the same subject shares the subject's bucket
    expect(await list(alice2)).toBe(200);
    const limited = await rpc(
      gateway.mcpUrl,
      'tools/list',
      {},
      { authorization: `Bearer ${alice}` },
    );
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited.json.error).toMatchObject({ code: -31429, data: { limit: 'perSubject' } });
    expect(await list(bob)).toBe(200);
    expect(await list(bob)).toBe(200);
  });

  it('a call to a tool the caller may not use is answered as unknown and audited as denied', async () => {
    const dora = (await as.mint({ subject: 'dora', resource: GATEWAY_AUD })).access_token;
    const carol = (await as.mint({ subject: 'carol', resource: GATEWAY_AUD })).access_token;
    const call = (token: string): ReturnType<typeof rpc> =>
      rpc(
        gateway.mcpUrl,
        'tools/call',
        { name: 'ops.echo', arguments: {} },
        {
          authorization: `Bearer ${token}`,
        },
      );
    const denied = await call(dora);
    expect(denied.status).toBe(200);
    expect(denied.json.error).toMatchObject({ code: -32001, message: 'Tool not found: ops.echo' });
    expect((await call(carol)).json.result).toBeDefined();
    await waitFor(() => auditLines(gateway).some((l) => l.subject === 'carol'), 10_000);
    const lines = auditLines(gateway);
    expect(lines.find((l) => l.subject === 'dora')).toMatchObject({
      tool: 'ops.echo',
      source: 'ops',
      outcome: 'denied',
      errorCode: 'tool_not_found',
    });
    expect(lines.find((l) => l.subject === 'carol')).toMatchObject({ outcome: 'ok' });
    expect(gateway.output).not.toContain(dora);
  });
});
