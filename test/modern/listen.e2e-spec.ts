import { Client as V2Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { GatewayProcess, TEST_SESSION_KEYS, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool, upstream } from '../support/fixtures';
import { ListenUpstream, STATUS_URI } from '../support/listen-upstream';
import { SHARED_REDIS_URL, deleteKeys, redisClient, uniqueKeyPrefix } from '../support/redis';
import { rpc } from '../support/rpc';
import { connectV1 } from '../support/sdk-clients';
import { SseReader } from '../support/sse-reader';
import { TestToolService } from '../support/tool-service';
import { ADMIN_TOKEN, admin, waitForState } from '../admin/admin-support';

const V = '2026-07-28';
const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';
const envelope = {
  'io.modelcontextprotocol/protocolVersion': V,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
};
const listenHeaders = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': V,
  'mcp-method': 'subscriptions/listen',
};
const listenBody = (id: string | number, notifications?: unknown): string =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'subscriptions/listen',
    params: { _meta: envelope, ...(notifications === undefined ? {} : { notifications }) },
  });

/** A raw listen on the gateway (the bytes of the stream are checked). */
function rawListen(url: string, id: string | number, notifications: unknown): Promise<SseReader> {
  return SseReader.open(url, 'POST', listenHeaders, listenBody(id, notifications));
}

/** The v2 SDK client pinned to 2026-07-28 (it listens with `client.listen`). */
async function connectModern(url: string): Promise<V2Client> {
  const client = new V2Client(
    { name: 'e2e-listen', version: '1' },
    { versionNegotiation: { mode: 'pin', version: V } as never },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

/** A 2025 session id minted by `initialize` on this gateway. */
async function legacySession(url: string): Promise<string> {
  const answer = await rpc(url, 'initialize', {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'raw', version: '1' },
  });
  const id = answer.headers.get('mcp-session-id');
  if (id === null) throw new Error('initialize issued no session id');
  return id;
}

function openGet(url: string, headers: Record<string, string>): Promise<SseReader> {
  return SseReader.open(url, 'GET', { accept: 'text/event-stream', ...headers });
}

const toolNames = async (url: string): Promise<string[]> =>
  ((await rpc(url, 'tools/list')).json.result.tools as { name: string }[]).map((t) => t.name);

/**
 * docs/operations.md §11 "Notification streams": `subscriptions/listen` for 2026-07-28 clients and
 * the GET stream of a 2025 session carry the catalog's list changes; a 2026 upstream's own
 * notifications are relayed through an upstream listen that lives exactly as long as the client's
 * stream.
 */
describe('notification streams: subscriptions/listen (2026) and the session GET stream (2025)', () => {
  let service: TestToolService;
  let calc: ListenUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    service = await TestToolService.start(manifest('ins', [tool({ name: 'ins.quote' })], 'r1'));
    calc = await ListenUpstream.start(['echo']);
    const mcp = gatewayConfig([bundle('ins', service, 'ins.')], {
      registry: { refreshIntervalSeconds: 1 },
      upstreams: [upstream('calc', calc.url)],
    });
    gateway = await GatewayProcess.start({
      mcp: { ...mcp, http: { modernEra: true }, listen: { keepAliveMillis: 300 } },
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await calc?.stop();
    await service?.stop();
  });

  it('both eras advertise listChanged: true (initialize and server/discover)', async () => {
    const init = await rpc(gateway.mcpUrl, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'raw', version: '1' },
    });
    expect(init.json.result.capabilities.tools).toEqual({ listChanged: true });
    const client = await connectModern(gateway.mcpUrl);
    try {
      expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: true });
    } finally {
      await client.close();
    }
  });

  it('a listen is acknowledged first with the honoured filter, tagged with the listen id; unknown keys and lists the gateway does not serve are dropped', async () => {
    const stream = await rawListen(gateway.mcpUrl, 'L1', {
      toolsListChanged: true,
      promptsListChanged: true,
      bogus: true,
    });
    try {
      expect(stream.status).toBe(200);
      expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
      expect(stream.headers['x-accel-buffering']).toBe('no');
      const first = await stream.waitForMessage(() => true);
      expect(first).toEqual({
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        // no upstream of this catalog serves prompts: the gateway does not advertise them
        params: { notifications: { toolsListChanged: true }, _meta: { [SUBSCRIPTION_ID]: 'L1' } },
      });
    } finally {
      stream.close();
    }
  });

  it('a numeric listen id is kept a number on every message', async () => {
    const stream = await rawListen(gateway.mcpUrl, 7, { toolsListChanged: true });
    try {
      const ack = await stream.waitForMessage(() => true);
      expect(ack.params._meta[SUBSCRIPTION_ID]).toBe(7);
    } finally {
      stream.close();
    }
  });

  it('a listen without notifications is -32602 in-band (200); an empty filter is acknowledged, then closed with the closing result', async () => {
    const missing = await rpc(
      gateway.mcpUrl,
      'subscriptions/listen',
      { _meta: envelope },
      listenHeaders,
      3,
    );
    expect(missing.status).toBe(200);
    expect(missing.json.error.code).toBe(-32602);
    const wrong = await rpc(
      gateway.mcpUrl,
      'subscriptions/listen',
      { _meta: envelope, notifications: { toolsListChanged: 'yes' } },
      listenHeaders,
      4,
    );
    expect(wrong.json.error.code).toBe(-32602);

    const empty = await rawListen(gateway.mcpUrl, 'E', {});
    await empty.waitForEnd();
    expect(empty.messages).toEqual([
      {
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: { notifications: {}, _meta: { [SUBSCRIPTION_ID]: 'E' } },
      },
      {
        jsonrpc: '2.0',
        id: 'E',
        result: {
          resultType: 'complete',
          _meta: {
            [SUBSCRIPTION_ID]: 'E',
            'io.modelcontextprotocol/serverInfo': expect.objectContaining({
              name: 'mcp-gateway-test',
            }),
          },
        },
      },
    ]);
  });

  it('keep-alive comments arrive on an open listen stream and on a session GET stream', async () => {
    const listen = await rawListen(gateway.mcpUrl, 'K', { toolsListChanged: true });
    const get = await openGet(gateway.mcpUrl, {
      'mcp-session-id': await legacySession(gateway.mcpUrl),
      'mcp-protocol-version': '2025-11-25',
    });
    try {
      expect(get.status).toBe(200);
      await waitFor(
        () => listen.comments.includes('keepalive') && get.comments.includes('keepalive'),
      );
    } finally {
      listen.close();
      get.close();
    }
  });

  it('a bundle manifest change reaches a v2 client listening and a v1 client on its GET stream', async () => {
    const modern = await connectModern(gateway.mcpUrl);
    const legacy = await connectV1(gateway.mcpUrl);
    let modernSeen = 0;
    let legacySeen = 0;
    modern.setNotificationHandler('notifications/tools/list_changed', () => {
      modernSeen++;
    });
    legacy.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      legacySeen++;
    });
    const subscription = await modern.listen({ toolsListChanged: true });
    try {
      expect(subscription.honoredFilter).toEqual({ toolsListChanged: true });
      // the v1 client opens its GET stream after notifications/initialized; wait until a
      // keep-alive proves it is open, then change the manifest
      await waitFor(async () => (await gateway.toolBundles()).catalog.published === true);
      service.manifest = () => ({
        body: manifest('ins', [tool({ name: 'ins.quote' }), tool({ name: 'ins.claim' })], 'r2'),
      });
      await waitFor(
        () => modernSeen > 0 && legacySeen > 0,
        15_000,
        () => `notifications: modern ${modernSeen}, legacy ${legacySeen}`,
      );
      expect((await legacy.listTools()).tools.map((t) => t.name)).toContain('ins.claim');
    } finally {
      await subscription.close();
      await modern.close();
      await legacy.close();
    }
  });

  it('B25: re-fetching an unchanged manifest sends no notification', async () => {
    const stream = await rawListen(gateway.mcpUrl, 'U', { toolsListChanged: true });
    try {
      await stream.waitForMessage((m) => m.method === 'notifications/subscriptions/acknowledged');
      const pulls = (): number => service.requests.filter((r) => r.method === 'GET').length;
      const before = pulls();
      await waitFor(() => pulls() >= before + 3, 15_000);
      expect(
        stream.messages.filter((m) => m.method === 'notifications/tools/list_changed'),
      ).toEqual([]);
    } finally {
      stream.close();
    }
  });

  it('an upstream tool added reaches both eras; the v2 upstream is listened to while the client listens', async () => {
    const modern = await connectModern(gateway.mcpUrl);
    const legacy = await connectV1(gateway.mcpUrl);
    let modernSeen = 0;
    let legacySeen = 0;
    modern.setNotificationHandler('notifications/tools/list_changed', () => {
      modernSeen++;
    });
    legacy.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      legacySeen++;
    });
    const subscription = await modern.listen({ toolsListChanged: true });
    try {
      await waitFor(
        () => calc.openListens > 0,
        10_000,
        () => 'the gateway opened no upstream listen',
      );
      calc.addTool('late');
      await waitFor(
        () => modernSeen > 0 && legacySeen > 0,
        15_000,
        () => `notifications: modern ${modernSeen}, legacy ${legacySeen}`,
      );
      await waitFor(async () => (await toolNames(gateway.mcpUrl)).includes('calc__late'), 10_000);
    } finally {
      await subscription.close();
      await modern.close();
      await legacy.close();
    }
  });

  it("relays a v2 upstream's list_changed through the listen, stamped with the client's listen id", async () => {
    await waitFor(
      () => calc.openListens === 0,
      10_000,
      () => 'an earlier upstream listen is still open',
    );
    const stream = await rawListen(gateway.mcpUrl, 'client-listen-1', { toolsListChanged: true });
    try {
      await waitFor(() => calc.openListens === 1, 10_000);
      const upstreamListen = calc.listensSeen.at(-1) as { id: unknown; params: any };
      expect(upstreamListen.params.notifications).toEqual({ toolsListChanged: true });
      // nothing in the catalog changes: the notification that arrives is the upstream's own
      calc.notifyToolsChanged();
      const relayed = await stream.waitForMessage(
        (m) => m.method === 'notifications/tools/list_changed',
      );
      expect(relayed.params._meta[SUBSCRIPTION_ID]).toBe('client-listen-1');
      expect(relayed).not.toHaveProperty('id');
    } finally {
      stream.close();
    }
  });

  it('resourceSubscriptions: a URI owned by a 2026 upstream that supports subscribe is honoured, sent on its listen, and only its updates relayed', async () => {
    await waitFor(
      () => calc.openListens === 0,
      10_000,
      () => 'an earlier upstream listen is still open',
    );
    const stream = await rawListen(gateway.mcpUrl, 'R', {
      resourceSubscriptions: [STATUS_URI],
    });
    try {
      const ack = await stream.waitForMessage(() => true);
      expect(ack.params.notifications).toEqual({ resourceSubscriptions: [STATUS_URI] });
      await waitFor(() => calc.openListens === 1, 10_000);
      expect((calc.listensSeen.at(-1) as { params: any }).params.notifications).toEqual({
        resourceSubscriptions: [STATUS_URI],
      });
      calc.notifyResourceUpdated('status://calc/other');
      calc.notifyResourceUpdated(STATUS_URI);
      const updated = await stream.waitForMessage(
        (m) => m.method === 'notifications/resources/updated',
      );
      expect(updated.params).toEqual({ uri: STATUS_URI, _meta: { [SUBSCRIPTION_ID]: 'R' } });
      expect(
        stream.messages.filter((m) => m.method === 'notifications/resources/updated'),
      ).toHaveLength(1);
    } finally {
      stream.close();
    }
  });

  it('closing the client stream ends the upstream listen (seen on the upstream)', async () => {
    await waitFor(
      () => calc.openListens === 0,
      10_000,
      () => 'an earlier upstream listen is still open',
    );
    const client = await connectModern(gateway.mcpUrl);
    const subscription = await client.listen({ toolsListChanged: true });
    try {
      await waitFor(
        () => calc.openListens === 1,
        10_000,
        () => 'no upstream listen opened',
      );
      await subscription.close();
      expect(await subscription.closed).toBe('local');
      await waitFor(
        () => calc.openListens === 0,
        10_000,
        () => 'the upstream listen stayed open',
      );
    } finally {
      await client.close();
    }
  });

  it('the 2025 GET stream: 405 without a session or with a 2026 version, 404 for a session that does not open, 406 without an event-stream Accept', async () => {
    const session = await legacySession(gateway.mcpUrl);
    const noSession = await openGet(gateway.mcpUrl, {});
    await noSession.waitForEnd();
    expect(noSession.status).toBe(405);
    expect(noSession.headers.allow).toBe('POST');
    const modern = await openGet(gateway.mcpUrl, {
      'mcp-session-id': session,
      'mcp-protocol-version': V,
    });
    await modern.waitForEnd();
    expect(modern.status).toBe(405);
    const forged = await openGet(gateway.mcpUrl, { 'mcp-session-id': `${session}x` });
    await forged.waitForEnd();
    expect(forged.status).toBe(404);
    const jsonOnly = await SseReader.open(gateway.mcpUrl, 'GET', {
      accept: 'application/json',
      'mcp-session-id': session,
    });
    await jsonOnly.waitForEnd();
    expect(jsonOnly.status).toBe(406);
  });
});

describe('notification streams: the cap (mcp.listen.maxStreams)', () => {
  let service: TestToolService;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    service = await TestToolService.start(manifest('ins', [tool({ name: 'ins.quote' })]));
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('ins', service, 'ins.')]),
        http: { modernEra: true },
        listen: { maxStreams: 2 },
      },
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await service?.stop();
  });

  it('past maxStreams a listen is refused in-band with -32603 and a GET with 503; a closed stream frees its place', async () => {
    const a = await rawListen(gateway.mcpUrl, 'a', { toolsListChanged: true });
    const b = await openGet(gateway.mcpUrl, {
      'mcp-session-id': await legacySession(gateway.mcpUrl),
    });
    try {
      expect([a.status, b.status]).toEqual([200, 200]);
      const refused = await rpc(
        gateway.mcpUrl,
        'subscriptions/listen',
        { _meta: envelope, notifications: { toolsListChanged: true } },
        listenHeaders,
        'c',
      );
      expect(refused.status).toBe(200);
      expect(refused.json.error).toEqual({ code: -32603, message: 'Subscription limit reached' });
      const get = await openGet(gateway.mcpUrl, {
        'mcp-session-id': await legacySession(gateway.mcpUrl),
      });
      await get.waitForEnd();
      expect(get.status).toBe(503);
      a.close();
      await waitFor(async () => {
        const again = await rawListen(gateway.mcpUrl, 'd', { toolsListChanged: true });
        again.close();
        return (
          again.status === 200 &&
          String(again.headers['content-type']).startsWith('text/event-stream')
        );
      });
    } finally {
      a.close();
      b.close();
    }
  });
});

describe('notification streams across two replicas sharing Redis', () => {
  const keyPrefix = uniqueKeyPrefix();
  const redis = redisClient();
  let service: TestToolService;
  let a: GatewayProcess;
  let b: GatewayProcess;

  beforeAll(async () => {
    service = await TestToolService.start(manifest('ins', [tool({ name: 'ins.quote' })], 'r1'));
    const mcp = {
      ...gatewayConfig([bundle('ins', service, 'ins.')], {
        registry: { refreshIntervalSeconds: 2 },
        redis: { keyPrefix },
      }),
      http: { modernEra: true },
    };
    const env = { REDIS_URL: SHARED_REDIS_URL, MCP_SESSION_KEYS: TEST_SESSION_KEYS };
    // one after the other, with room for a loaded machine: two boots at once on two cores
    const boot = async (): Promise<GatewayProcess> => {
      const gateway = GatewayProcess.spawn({ mcp, env });
      await gateway.waitForListening(60_000);
      await gateway.waitForReady(60_000);
      return gateway;
    };
    a = await boot();
    b = await boot();
  }, 250_000);

  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await service?.stop();
    await deleteKeys(redis, keyPrefix);
    redis.disconnect();
  });

  it('a change first seen on replica A reaches listeners of both eras on replica B; draining B ends them, the listen with its closing result', async () => {
    // the session is minted by A; B opens its GET stream (sealed sessions, no stickiness)
    const get = await openGet(b.mcpUrl, {
      'mcp-session-id': await legacySession(a.mcpUrl),
      'mcp-protocol-version': '2025-11-25',
    });
    const modern = await connectModern(b.mcpUrl);
    let modernSeen = 0;
    modern.setNotificationHandler('notifications/tools/list_changed', () => {
      modernSeen++;
    });
    const subscription = await modern.listen({ toolsListChanged: true });
    try {
      expect(get.status).toBe(200);
      service.manifest = () => ({
        body: manifest('ins', [tool({ name: 'ins.quote' }), tool({ name: 'ins.new' })], 'r2'),
      });
      // A learns of it at once (an unknown tool refreshes every source before answering)
      const call = await rpc(a.mcpUrl, 'tools/call', { name: 'ins.new', arguments: {} });
      expect(call.json.result).toBeDefined();
      await waitFor(
        () =>
          modernSeen > 0 &&
          get.messages.some((m) => m.method === 'notifications/tools/list_changed'),
        15_000,
        () => `replica B: modern ${modernSeen}, GET ${JSON.stringify(get.messages)}`,
      );
      const stopping = b.stop();
      expect(await subscription.closed).toBe('graceful');
      await get.waitForEnd();
      expect(await stopping).toBe(0);
    } finally {
      get.close();
      await subscription.close();
      await modern.close();
    }
  });
});

/**
 * docs/operations.md §11 "Notification streams", with docs/operations.md §15: an open listen
 * follows the upstreams registered and removed at runtime through /admin/upstreams: a 2026 upstream
 * that joins gets an upstream listen for the streams already open, one that leaves has it ended.
 */
describe('notification streams follow runtime registrations (/admin/upstreams)', () => {
  let calc: ListenUpstream;
  let late: ListenUpstream;
  let twin: ListenUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    [calc, late, twin] = await Promise.all([
      ListenUpstream.start(['echo']),
      ListenUpstream.start(['ping']),
      ListenUpstream.start(['ping']),
    ]);
    const mcp = gatewayConfig([], {
      registry: { refreshIntervalSeconds: 1 },
      upstreams: [upstream('calc', calc.url)],
    });
    gateway = await GatewayProcess.start({
      mcp: { ...mcp, http: { modernEra: true } },
      env: { MCP_ADMIN_TOKEN: ADMIN_TOKEN },
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([calc?.stop(), late?.stop(), twin?.stop()]);
  });

  it('a registered upstream is listened to by the open listen and relayed; removing it ends that listen', async () => {
    const stream = await rawListen(gateway.mcpUrl, 'follow', { toolsListChanged: true });
    try {
      await waitFor(
        () => calc.openListens === 1,
        10_000,
        () => 'no listen on calc',
      );
      expect(late.openListens).toBe(0);
      const posted = await admin(gateway, 'POST', '/admin/upstreams', {
        id: 'late',
        url: late.url,
      });
      expect(posted.status).toBe(202);
      await waitForState(gateway, 'late', 'ACTIVE');
      await waitFor(
        () => late.openListens === 1,
        15_000,
        () => 'the open listen did not reach the registered upstream',
      );
      const changes = () =>
        stream.messages.filter((m) => m.method === 'notifications/tools/list_changed');
      // the catalog took late__ping: the gateway's own notification came first
      await waitFor(
        () => changes().length >= 1,
        10_000,
        () => 'no catalog change notified',
      );
      const before = changes().length;
      late.notifyToolsChanged();
      await waitFor(
        () => changes().length > before,
        10_000,
        () => 'the registered upstream’s notification was not relayed',
      );
      expect(changes().at(-1).params._meta[SUBSCRIPTION_ID]).toBe('follow');

      expect((await admin(gateway, 'DELETE', '/admin/upstreams/late')).status).toBe(200);
      await waitFor(
        () => late.openListens === 0,
        15_000,
        () => 'the removed upstream is still listened to',
      );
      // the configured upstream's listen was left alone
      expect(calc.openListens).toBe(1);
    } finally {
      stream.close();
    }
  });

  it('an id deleted and registered again at once on another server (same tools, same catalog): the listen moves to the new server', async () => {
    const stream = await rawListen(gateway.mcpUrl, 'moved', { toolsListChanged: true });
    try {
      await waitFor(
        () => calc.openListens === 1,
        10_000,
        () => 'no listen on calc',
      );
      expect(
        (await admin(gateway, 'POST', '/admin/upstreams', { id: 'late', url: late.url })).status,
      ).toBe(202);
      await waitForState(gateway, 'late', 'ACTIVE');
      await waitFor(
        () => late.openListens === 1,
        15_000,
        () => 'late was not listened to',
      );
      // within one refresh round: the published catalog (late__ping) stays byte for byte the same
      expect((await admin(gateway, 'DELETE', '/admin/upstreams/late')).status).toBe(200);
      expect(
        (await admin(gateway, 'POST', '/admin/upstreams', { id: 'late', url: twin.url })).status,
      ).toBe(202);
      await waitFor(
        () => late.openListens === 0 && twin.openListens === 1,
        15_000,
        () => `listens: old server ${late.openListens}, new server ${twin.openListens}`,
      );
      const before = stream.messages.length;
      twin.notifyToolsChanged();
      await waitFor(
        () =>
          stream.messages
            .slice(before)
            .some((m) => m.method === 'notifications/tools/list_changed'),
        10_000,
        () => 'the new server’s notification was not relayed',
      );
    } finally {
      stream.close();
      await admin(gateway, 'DELETE', '/admin/upstreams/late');
    }
  });
});
