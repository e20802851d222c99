// class-transformer's @Type (config validation) needs the metadata polyfill Nest loads first.
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { loadGatewayConfig, type GatewayConfig } from '@app/config';
import type { ResourceServer } from '@app/identity';
import type { CatalogRefresh, RegistryService } from '@app/registry';
import { CacheHintsService } from '../codecs/cache-hints';
import { LegacyCodec } from '../codecs/legacy.codec';
import { ModernCodec } from '../codecs/modern.codec';
import { ForwardedError, GatewayError, GatewayErrorCode } from '../errors/gateway-error';
import { MethodDispatcher } from '../handlers/method-dispatcher';
import { InitializeHandler } from '../handlers/initialize.handler';
import { SerializedResult, type MethodHandler } from '../methods/method-handler';
import { PingHandler } from '../handlers/ping.handler';
import { ServerCapabilities } from '../servers/server-capabilities';
import { ServerDiscoverHandler } from '../handlers/server-discover.handler';
import type { CallerLimits } from '../limits/caller-limits.service';
import type { UpstreamRouter } from '../relay/upstream-router';
import type { HttpAnswer } from '../answers/http-answer';
import { InFlightRequests } from '../answers/in-flight-requests';
import { SubscriptionsListenHandler } from '../listen/subscriptions-listen.handler';
import type { ListenRequest, SubscriptionsListen } from '../listen/subscriptions-listen.service';
import { McpTransport } from './mcp-transport.service';
import type { LegacyInputBridge } from '../mrtr/legacy-input-bridge';
import { SessionTokenService } from '../session/session-token.service';
import { EndedSessions } from '../session/ended-sessions';
import { VirtualServers } from '../servers/virtual-servers.service';

/**
 * The front door in process: McpTransport with both real codecs, in front of a fake `tools/call`
 * handler, the real lifecycle handlers (`initialize`, `server/discover`, `ping`, and
 * `subscriptions/listen` over a fake stream service) and an empty catalog (no listener, no
 * source, no Redis). It pins, in one table,
 * which HTTP status and JSON-RPC code every kind of failure gets in each era: what the
 * transport refuses itself, what each codec refuses, and what each error a handler raises
 * becomes (libs/mcp/src/errors/wire-errors.ts is the one era mapping; wire notes §1.1, §1.2).
 * The numbers are written out, not taken from the mapping, so a change of the wire fails here.
 */

const MODERN = '2026-07-28';
const LEGACY = '2025-11-25';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function gatewayConfig(): GatewayConfig {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-transport-spec-'));
  dirs.push(dir);
  writeFileSync(
    join(dir, 'gateway.yaml'),
    stringify({
      mcp: {
        identity: 'gw-spec',
        http: { modernEra: true },
        bundles: [
          {
            id: 'alpha',
            manifestUrl: 'http://alpha.svc:8080/tool-manifest',
            baseEndpoint: 'http://alpha.svc:8080/mcp',
            namePrefix: 'alpha.',
          },
        ],
      },
    }),
  );
  return loadGatewayConfig({
    env: {
      MCP_CONFIG_FILE: 'gateway.yaml',
      MCP_SESSION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
    },
    cwd: dir,
    version: '9.9.9',
  });
}

/** An upstream's result text as a router passes it on: no envelope members, its own _meta. */
const PASSED_ON = String.raw`{"content":[],"n":12345678901234567890,"_meta":{"x/y":1.0,"s":"\u00e9"}}`;
const passedOnValue = JSON.parse(PASSED_ON) as Record<string, unknown>;

/**
 * `tools/call` whose tool name says what to do: `raise:<GatewayErrorCode>` throws that
 * GatewayError, `forward:<code>` an upstream's error with its own code, `crash` a plain Error,
 * anything else answers a result.
 */
const toolsCall: MethodHandler = {
  method: 'tools/call',
  // the method's own header check (Mcp-Param-* in the real handler): `param-mismatch` fails it
  headerMismatch: (params) =>
    params?.name === 'param-mismatch'
      ? { header: 'Mcp-Param-Region', body: 'eu', reason: 'Mcp-Param-Region differs' }
      : undefined,
  handle(params) {
    const name = typeof params?.name === 'string' ? params.name : '';
    if (name.startsWith('raise:')) {
      const code = name.slice('raise:'.length) as GatewayErrorCode;
      const data = code === GatewayErrorCode.RateLimited ? { retryAfterSeconds: 3 } : undefined;
      return Promise.reject(new GatewayError(code, `raised ${code}`, data));
    }
    if (name.startsWith('forward:'))
      return Promise.reject(new ForwardedError(Number(name.slice('forward:'.length)), 'upstream'));
    if (name === 'crash') return Promise.reject(new Error('a bug'));
    if (name === 'passed-on')
      return Promise.resolve(new SerializedResult(PASSED_ON, passedOnValue));
    return Promise.resolve({ content: [{ type: 'text', text: 'ok' }] });
  },
};

/**
 * `subscriptions/listen` streams as SubscriptionsListen opens them, faked by the filter's first
 * key: `bad` is refused as a bad filter, `full` finds no room, anything else opens a stream.
 */
const listens = {
  open(request: ListenRequest) {
    const filter = (request.params?.notifications ?? {}) as Record<string, unknown>;
    if ('bad' in filter) throw new GatewayError(GatewayErrorCode.InvalidParams, 'Invalid params');
    if ('full' in filter)
      throw new GatewayError(GatewayErrorCode.LimitReached, 'Subscription limit reached');
    return { frames: [] };
  },
} as unknown as SubscriptionsListen;

/**
 * @param limits the callers' rate limits the dispatcher applies (none: unlimited)
 */
function frontDoor(limits?: CallerLimits): McpTransport {
  const config = gatewayConfig();
  const registry = {
    current: () => undefined,
    onPublished: () => () => undefined,
  } as unknown as RegistryService;
  // the next scheduled round is unknown: the cache hints use the refresh interval
  const refresh = { msUntilNextRefresh: () => undefined } as unknown as CatalogRefresh;
  const capabilities = new ServerCapabilities(registry, config);
  const notOurs = { deliverAnswer: () => Promise.resolve('not-ours') };
  const servers = new VirtualServers(config, registry);
  const sessions = new SessionTokenService(config);
  const dispatcher = new MethodDispatcher(
    [
      toolsCall,
      new InitializeHandler(sessions, capabilities, servers),
      new ServerDiscoverHandler(capabilities, servers),
      new SubscriptionsListenHandler(listens),
      new PingHandler(),
    ],
    limits,
  );
  const legacy = new LegacyCodec(
    config,
    dispatcher,
    sessions,
    new InFlightRequests(),
    notOurs as unknown as UpstreamRouter,
    notOurs as unknown as LegacyInputBridge,
    new EndedSessions(),
  );
  const modern = new ModernCodec(
    config,
    dispatcher,
    new CacheHintsService(config, registry, refresh),
    servers,
  );
  const resourceServer = { checksRequests: false } as ResourceServer;
  return new McpTransport(legacy, modern, config, resourceServer, servers);
}

type Headers = Record<string, string>;

function envelope(params: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    ...params,
    _meta: {
      'io.modelcontextprotocol/protocolVersion': MODERN,
      'io.modelcontextprotocol/clientInfo': { name: 'spec', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  };
}

/** The headers a 2026 client sends with `method` (and `name` for tools/call). */
function modernHeaders(method: string, name?: string): Headers {
  return {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN,
    'mcp-method': method,
    ...(name === undefined ? {} : { 'mcp-name': name }),
  };
}

const legacyHeaders: Headers = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

interface Wire {
  readonly status: number;
  readonly code: number | undefined;
  readonly headers: Readonly<Record<string, string>>;
}

async function post(transport: McpTransport, headers: Headers, body: string): Promise<Wire> {
  const answer: HttpAnswer = await transport.post({ headers, body });
  const text = typeof answer.body === 'string' ? answer.body : '';
  const json = text.startsWith('event:') ? text.split('\ndata: ')[1]?.split('\n')[0] : text;
  const parsed = json === undefined || json === '' ? undefined : (JSON.parse(json) as unknown);
  const code = (parsed as { error?: { code?: number } } | undefined)?.error?.code;
  return { status: answer.status, code, headers: answer.headers ?? {} };
}

describe('McpTransport: era × failure → (HTTP status, JSON-RPC code), in one table', () => {
  let transport: McpTransport;
  let session: string;

  beforeAll(async () => {
    transport = frontDoor();
    const answer = await transport.post({
      headers: legacyHeaders,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 's', v: '1' } },
      }),
    });
    expect(answer.status).toBe(200);
    session = answer.headers?.['mcp-session-id'] ?? '';
    expect(session).not.toBe('');
  });

  const legacyCall = (name: string): string =>
    JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name } });
  const modernCall = (name: string): string =>
    JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: envelope({ name, arguments: {} }),
    });

  // Every error a handler may raise, and what each era makes of it.
  const raised: [GatewayErrorCode, [number, number], [number, number]][] = [
    //                                         2025-11-25        2026-07-28
    [GatewayErrorCode.InvalidParams, [200, -32602], [200, -32602]],
    [GatewayErrorCode.ToolNotFound, [200, -32001], [200, -32602]],
    [GatewayErrorCode.MethodNotFound, [200, -32601], [404, -32601]],
    [GatewayErrorCode.RegistryUnavailable, [200, -32603], [200, -32603]],
    [GatewayErrorCode.Internal, [500, -32603], [500, -32603]],
    [GatewayErrorCode.RateLimited, [429, -31429], [429, -31429]],
    [GatewayErrorCode.LimitReached, [200, -32603], [200, -32603]],
  ];

  describe.each(raised)(
    'a handler raises %s',
    (code, [legacyStatus, legacyCode], [mStatus, mCode]) => {
      it(`2025-11-25: ${legacyStatus} ${legacyCode}`, async () => {
        const wire = await post(
          transport,
          { ...legacyHeaders, 'mcp-session-id': session, 'mcp-protocol-version': LEGACY },
          legacyCall(`raise:${code}`),
        );
        expect([wire.status, wire.code]).toEqual([legacyStatus, legacyCode]);
      });
      it(`2026-07-28: ${mStatus} ${mCode}`, async () => {
        const name = `raise:${code}`;
        const wire = await post(transport, modernHeaders('tools/call', name), modernCall(name));
        expect([wire.status, wire.code]).toEqual([mStatus, mCode]);
      });
    },
  );

  it('a rate-limited call says when to come back, in both eras (Retry-After)', async () => {
    const name = `raise:${GatewayErrorCode.RateLimited}`;
    const legacy = await post(
      transport,
      { ...legacyHeaders, 'mcp-session-id': session },
      legacyCall(name),
    );
    const modern = await post(transport, modernHeaders('tools/call', name), modernCall(name));
    expect(legacy.headers['retry-after']).toBe('3');
    expect(modern.headers['retry-after']).toBe('3');
  });

  it("an upstream's error keeps its own code on 200 in 2025; in 2026 outside the reserved range, -32021 is 400, -32601 404, -32002 -32602, the rest of -32020…-32099 -32603", async () => {
    const session25 = { ...legacyHeaders, 'mcp-session-id': session };
    expect(await post(transport, session25, legacyCall('forward:-32042'))).toMatchObject({
      status: 200,
      code: -32042,
    });
    const modern = (code: number) =>
      post(
        transport,
        modernHeaders('tools/call', `forward:${code}`),
        modernCall(`forward:${code}`),
      );
    expect(await modern(-31000)).toMatchObject({ status: 200, code: -31000 });
    expect(await modern(-32042)).toMatchObject({ status: 200, code: -32603 });
    expect(await modern(-32002)).toMatchObject({ status: 200, code: -32602 });
    expect(await modern(-32601)).toMatchObject({ status: 404, code: -32601 });
    expect(
      await post(
        transport,
        modernHeaders('tools/call', 'forward:-32021'),
        modernCall('forward:-32021'),
      ),
    ).toMatchObject({ status: 400, code: -32021 });
  });

  it('a handler that crashes is 500 -32603 in both eras', async () => {
    const session25 = { ...legacyHeaders, 'mcp-session-id': session };
    expect(await post(transport, session25, legacyCall('crash'))).toMatchObject({
      status: 500,
      code: -32603,
    });
    expect(
      await post(transport, modernHeaders('tools/call', 'crash'), modernCall('crash')),
    ).toMatchObject({ status: 500, code: -32603 });
  });

  it('a result is 200 without an error in both eras', async () => {
    const session25 = { ...legacyHeaders, 'mcp-session-id': session };
    expect(await post(transport, session25, legacyCall('fine'))).toMatchObject({
      status: 200,
      code: undefined,
    });
    expect(
      await post(transport, modernHeaders('tools/call', 'fine'), modernCall('fine')),
    ).toMatchObject({ status: 200, code: undefined });
  });

  it('a passed-on upstream result keeps its text in both eras; 2026 sets its members in it', async () => {
    const answer25 = await transport.post({
      headers: { ...legacyHeaders, 'mcp-session-id': session },
      body: legacyCall('passed-on'),
    });
    expect(answer25.body).toBe(`{"jsonrpc":"2.0","id":1,"result":${PASSED_ON}}`);
    const answer26 = await transport.post({
      headers: modernHeaders('tools/call', 'passed-on'),
      body: modernCall('passed-on'),
    });
    const text = typeof answer26.body === 'string' ? answer26.body : '';
    // the gateway's serverInfo joins the upstream's _meta in place, resultType after the rest
    expect(text).toBe(
      String.raw`{"jsonrpc":"2.0","id":1,"result":{"content":[],"n":12345678901234567890,` +
        String.raw`"_meta":{"x/y":1.0,"s":"\u00e9","io.modelcontextprotocol/serverInfo":{"name":"gw-spec","version":"9.9.9"}},` +
        String.raw`"resultType":"complete"}}`,
    );
    // the same value the serialization of {...value, resultType, _meta} gives
    expect(JSON.parse(text)).toEqual(
      JSON.parse(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          result: {
            ...passedOnValue,
            resultType: 'complete',
            _meta: {
              ...(passedOnValue._meta as object),
              'io.modelcontextprotocol/serverInfo': { name: 'gw-spec', version: '9.9.9' },
            },
          },
        }),
      ),
    );
  });

  // What the transport and the codecs refuse before any handler runs.
  const refusals: [string, Headers, string, number, number][] = [
    // 2025-11-25 (no envelope, no modern header)
    [
      '2025: Content-Type not JSON',
      { ...legacyHeaders, 'content-type': 'text/plain' },
      legacyCall('x'),
      415,
      -32000,
    ],
    [
      '2025: Accept takes neither JSON nor SSE',
      { ...legacyHeaders, accept: 'text/html' },
      legacyCall('x'),
      406,
      -32000,
    ],
    ['2025: body not JSON', legacyHeaders, '{"jsonrpc":', 400, -32700],
    ['2025: a batch', legacyHeaders, `[${legacyCall('x')}]`, 400, -32600],
    ['2025: not a JSON-RPC request', legacyHeaders, '{"id":1,"method":"tools/call"}', 400, -32600],
    [
      '2025: params not an object',
      legacyHeaders,
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":5}',
      200,
      -32602,
    ],
    [
      '2025: a session id that does not open',
      { ...legacyHeaders, 'mcp-session-id': 'forged' },
      legacyCall('x'),
      404,
      -32001,
    ],
    [
      '2025: an unsupported MCP-Protocol-Version',
      { ...legacyHeaders, 'mcp-protocol-version': '1999-01-01' },
      legacyCall('x'),
      400,
      -32000,
    ],
    [
      '2025: an unknown method',
      legacyHeaders,
      '{"jsonrpc":"2.0","id":1,"method":"no/such"}',
      200,
      -32601,
    ],
    [
      '2025: initialize without a protocolVersion',
      legacyHeaders,
      '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}',
      200,
      -32602,
    ],
    [
      '2025: an envelope that claims a 2025 version',
      legacyHeaders,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: { _meta: { 'io.modelcontextprotocol/protocolVersion': LEGACY } },
      }),
      400,
      -32022,
    ],
    [
      '2025: an envelope version that is not a string',
      legacyHeaders,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: { _meta: { 'io.modelcontextprotocol/protocolVersion': 7 } },
      }),
      400,
      -32602,
    ],
    // the header names another version than the envelope: the mismatch wins, whichever they name
    [
      'a modern header, an envelope naming an unknown version',
      { ...modernHeaders('tools/list'), 'mcp-protocol-version': MODERN },
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': 'v999.0.0',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
      400,
      -32020,
    ],
    [
      'a modern header, an envelope naming a later modern version',
      modernHeaders('tools/list'),
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2099-01-01',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
      400,
      -32020,
    ],
    [
      'a 2025 header, an envelope naming an unknown version',
      { ...legacyHeaders, 'mcp-protocol-version': LEGACY },
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: { _meta: { 'io.modelcontextprotocol/protocolVersion': 'v999.0.0' } },
      }),
      400,
      -32020,
    ],
    [
      'no header, an envelope naming a later modern version',
      { ...modernHeaders('tools/list'), 'mcp-protocol-version': '' },
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2099-01-01',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
      400,
      -32022,
    ],
    // 2026-07-28
    [
      '2026: Content-Type not JSON',
      { ...modernHeaders('tools/call', 'x'), 'content-type': 'text/plain' },
      modernCall('x'),
      415,
      -32000,
    ],
    [
      '2026: body not JSON under a modern header',
      modernHeaders('tools/call', 'x'),
      '{"jsonrpc":',
      400,
      -32700,
    ],
    [
      '2026: a batch with a modern element',
      modernHeaders('tools/call', 'x'),
      `[${modernCall('x')}]`,
      400,
      -32600,
    ],
    [
      '2026: a modern header and no envelope',
      modernHeaders('tools/call', 'x'),
      legacyCall('x'),
      400,
      -32602,
    ],
    [
      '2026: initialize under a modern header',
      modernHeaders('initialize'),
      '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}',
      400,
      -32020,
    ],
    [
      '2026: header version differs from the envelope',
      { ...modernHeaders('tools/call', 'x'), 'mcp-protocol-version': '2026-01-01' },
      modernCall('x'),
      400,
      -32020,
    ],
    [
      '2026: no MCP-Protocol-Version header',
      { ...modernHeaders('tools/call', 'x'), 'mcp-protocol-version': '' },
      modernCall('x'),
      400,
      -32020,
    ],
    [
      '2026: Mcp-Method missing',
      { ...modernHeaders('tools/call', 'x'), 'mcp-method': '' },
      modernCall('x'),
      400,
      -32020,
    ],
    ['2026: Mcp-Method differs', modernHeaders('tools/list', 'x'), modernCall('x'), 400, -32020],
    ['2026: Mcp-Name missing', modernHeaders('tools/call'), modernCall('x'), 400, -32020],
    ['2026: Mcp-Name differs', modernHeaders('tools/call', 'y'), modernCall('x'), 400, -32020],
    [
      '2026: Mcp-Name a bad Base64 sentinel',
      modernHeaders('tools/call', '=?base64?!!!?='),
      modernCall('x'),
      400,
      -32020,
    ],
    [
      "2026: the method's own header check fails (Mcp-Param-*)",
      modernHeaders('tools/call', 'param-mismatch'),
      modernCall('param-mismatch'),
      400,
      -32020,
    ],
    [
      '2026: clientCapabilities missing',
      modernHeaders('tools/call', 'x'),
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'x', _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN } },
      }),
      400,
      -32602,
    ],
    [
      '2026: an unknown method',
      modernHeaders('no/such'),
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'no/such', params: envelope() }),
      404,
      -32601,
    ],
    [
      '2026: a 2025-only method',
      modernHeaders('resources/subscribe'),
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'resources/subscribe',
        params: envelope({ uri: 'x://y' }),
      }),
      404,
      -32601,
    ],
  ];

  it.each(refusals)('%s', async (_what, headers, body, status, code) => {
    const sent = Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== ''));
    expect(await post(transport, sent, body)).toMatchObject({ status, code });
  });

  it('a notification or a response is 202 without a body in both eras', async () => {
    const note = '{"jsonrpc":"2.0","method":"notifications/initialized"}';
    const session25 = { ...legacyHeaders, 'mcp-session-id': session };
    expect((await transport.post({ headers: session25, body: note })).status).toBe(202);
    const modern = await transport.post({
      headers: modernHeaders('notifications/initialized'),
      body: JSON.stringify({
        jsonrpc: '2.0',
        method: 'notifications/initialized',
        params: envelope(),
      }),
    });
    expect(modern.status).toBe(202);
  });
});

describe('McpTransport: the methods that open a session, a stream or describe the server are handlers', () => {
  const initialize = JSON.stringify({
    jsonrpc: '2.0',
    id: 3,
    method: 'initialize',
    params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 's', v: '1' } },
  });
  const discover = JSON.stringify({
    jsonrpc: '2.0',
    id: 4,
    method: 'server/discover',
    params: envelope(),
  });
  const listen = (notifications: Record<string, unknown>): string =>
    JSON.stringify({
      jsonrpc: '2.0',
      id: 5,
      method: 'subscriptions/listen',
      params: envelope({ notifications }),
    });
  const ping = '{"jsonrpc":"2.0","id":6,"method":"ping"}';

  it('2025 initialize is served before any session check: a stale session id or version header does not stop it', async () => {
    const transport = frontDoor();
    const answer = await transport.post({
      headers: {
        ...legacyHeaders,
        'mcp-session-id': 'forged',
        'mcp-protocol-version': '1999-01-01',
      },
      body: initialize,
    });
    expect(answer.status).toBe(200);
    expect(answer.headers?.['mcp-session-id']).toEqual(expect.any(String));
    expect(answer.headers?.['mcp-session-id']).not.toBe('forged');
    const result = (JSON.parse(answer.body as string) as { result: Record<string, unknown> })
      .result;
    expect(Object.keys(result)).toEqual(['protocolVersion', 'capabilities', 'serverInfo']);
    expect(result.protocolVersion).toBe(LEGACY);
  });

  it('2026 server/discover: the members in the order the SDKs write them, cache hints included', async () => {
    const answer = await frontDoor().post({
      headers: modernHeaders('server/discover'),
      body: discover,
    });
    expect(answer.status).toBe(200);
    const result = (JSON.parse(answer.body as string) as { result: Record<string, unknown> })
      .result;
    expect(Object.keys(result)).toEqual([
      'resultType',
      'supportedVersions',
      'capabilities',
      'ttlMs',
      'cacheScope',
      '_meta',
    ]);
    expect(result.resultType).toBe('complete');
    expect(result.supportedVersions).toEqual([MODERN]);
    expect(result._meta).toEqual({
      'io.modelcontextprotocol/serverInfo': { name: 'gw-spec', version: '9.9.9' },
    });
  });

  it('2026 subscriptions/listen is answered as the stream it opened; its refusals keep their codes', async () => {
    const transport = frontDoor();
    const opened = await transport.post({
      headers: modernHeaders('subscriptions/listen'),
      body: listen({ toolsListChanged: true }),
    });
    expect(opened.status).toBe(200);
    expect(opened.headers?.['content-type']).toMatch(/^text\/event-stream/);
    expect(opened.stream).toBeDefined();
    expect(
      await post(transport, modernHeaders('subscriptions/listen'), listen({ bad: true })),
    ).toMatchObject({ status: 200, code: -32602 });
    expect(
      await post(transport, modernHeaders('subscriptions/listen'), listen({ full: true })),
    ).toMatchObject({ status: 200, code: -32603 });
  });

  it('each era serves only its own: discover and listen are unknown to 2025, initialize to 2026', async () => {
    const transport = frontDoor();
    for (const method of ['server/discover', 'subscriptions/listen'])
      expect(
        await post(
          transport,
          legacyHeaders,
          JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: {} }),
        ),
      ).toMatchObject({ status: 200, code: -32601 });
  });

  it('a caller over its rate limit can still initialize, discover and listen; other methods are 429', async () => {
    const refused = {
      enabled: true,
      admit: () =>
        Promise.reject(
          new GatewayError(GatewayErrorCode.RateLimited, 'Rate limit hit', {
            retryAfterSeconds: 1,
          }),
        ),
    } as unknown as CallerLimits;
    const transport = frontDoor(refused);
    expect(await post(transport, legacyHeaders, initialize)).toMatchObject({
      status: 200,
      code: undefined,
    });
    expect(await post(transport, modernHeaders('server/discover'), discover)).toMatchObject({
      status: 200,
      code: undefined,
    });
    expect(
      (
        await transport.post({
          headers: modernHeaders('subscriptions/listen'),
          body: listen({ toolsListChanged: true }),
        })
      ).stream,
    ).toBeDefined();
    expect(await post(transport, legacyHeaders, ping)).toMatchObject({
      status: 429,
      code: -31429,
    });
  });
});
