import {
  ElicitRequestSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { bundle, gatewayConfig, manifest, tool, upstream } from '../support/fixtures';
import { V1Upstream } from '../support/mcp-upstreams';
import { GatewayProcess, TEST_SESSION_KEYS } from '../support/gateway-process';
import { jwtAuthConfig, TestAuthorizationServer } from '../support/oidc-provider';
import { modernRequest } from '../support/modern-rpc';
import { deleteKeys, redisClient, SHARED_REDIS_URL, uniqueKeyPrefix } from '../support/redis';
import { rpc, type RawAnswer } from '../support/rpc';
import { connectV1, connectV2 } from '../support/sdk-clients';
import { TestToolService } from '../support/tool-service';

const CLAIMS = [
  tool({ name: 'claims.open_claim', title: 'Open a claim', description: 'Opens a new claim.' }),
  tool({ name: 'claims.close_claim', title: 'Close a claim', description: 'Closes a claim.' }),
  tool({ name: 'claims.weather_at', title: 'Weather', description: 'Historical weather.' }),
];
const SEARCH_TOOLS = ['gateway__search_tools', 'gateway__describe_tools', 'gateway__call_tool'];
const WITH_SELECT = [...SEARCH_TOOLS, 'gateway__select_tools'];

const names = (tools: readonly { name: string }[]): string[] => tools.map((t) => t.name);
const RESOURCE = 'https://gateway.test/mcp';

/** The JSON-RPC answer of a response, JSON or SSE (where notifications may come first). */
function answerOf(answer: RawAnswer): any {
  const messages = [...answer.text.matchAll(/^data: (.*)$/gm)].map((m) =>
    JSON.parse(m[1] as string),
  );
  return messages.find((m) => 'result' in m || 'error' in m) ?? answer.json;
}

/** Resolves when `count` list_changed notifications arrived (each test's own counter). */
class ListChanges {
  private seen = 0;
  private readonly waiting: { count: number; resolve: () => void }[] = [];

  readonly handler = (): Promise<void> => {
    this.seen++;
    for (const w of this.waiting.filter((x) => x.count <= this.seen)) w.resolve();
    return Promise.resolve();
  };

  until(count: number): Promise<void> {
    if (this.seen >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push({ count, resolve }));
  }
}

/**
 * docs/operations.md §16 "Tool selection": where selection is on, a 2025 session is offered
 * `gateway__select_tools`; the names it selects (of those its caller may use) become its
 * `tools/list` beside the search tools, and the session is told `list_changed` so a client that
 * follows it lists again. The selection is the session's own, kept in Redis for every replica
 * when Redis is configured; a 2026 request (no session) is not offered it.
 */
describe('tool selection for 2025 sessions', () => {
  let claims: TestToolService;
  const keyPrefix = uniqueKeyPrefix();
  const started: GatewayProcess[] = [];
  let a: GatewayProcess;
  let b: GatewayProcess;

  async function replica(extra: Record<string, unknown> = {}): Promise<GatewayProcess> {
    const gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('claims', claims, 'claims.')]),
        toolSearch: { enabled: true, select: true },
        virtualServers: [
          { id: 'closing', tools: ['claims.close_claim'], toolSearch: true, toolSelect: true },
          { id: 'searching', tools: ['claims.*'], toolSearch: true },
        ],
        redis: { keyPrefix },
        ...extra,
      },
      env: { MCP_SESSION_KEYS: TEST_SESSION_KEYS, REDIS_URL: SHARED_REDIS_URL },
      waitReady: true,
    });
    started.push(gateway);
    return gateway;
  }

  beforeAll(async () => {
    claims = await TestToolService.start(manifest('claims', CLAIMS));
    [a, b] = [await replica(), await replica()];
  });

  afterAll(async () => {
    await Promise.all(started.map((g) => g.stop()));
    await claims?.stop();
    const redis = redisClient();
    await deleteKeys(redis, keyPrefix);
    redis.disconnect();
  });

  const at = (gateway: GatewayProcess, id: string): string =>
    gateway.mcpUrl.replace(/\/mcp$/, `/mcp/servers/${id}`);

  it('the v1 client selects tools, follows list_changed, lists them and calls one directly', async () => {
    const client = await connectV1(a.mcpUrl);
    const changes = new ListChanges();
    client.setNotificationHandler(ToolListChangedNotificationSchema, changes.handler);
    try {
      expect(names((await client.listTools()).tools)).toEqual(WITH_SELECT);
      const selected = await client.callTool({
        name: 'gateway__select_tools',
        arguments: { names: ['claims.open_claim', 'claims.weather_at', 'claims.nope'] },
      });
      expect(selected.isError).toBeFalsy();
      expect(selected.structuredContent).toEqual({
        selected: ['claims.open_claim', 'claims.weather_at'],
        unknown: ['claims.nope'],
      });
      await changes.until(1);
      const listed = (await client.listTools()).tools;
      expect(names(listed)).toEqual([...WITH_SELECT, 'claims.open_claim', 'claims.weather_at']);
      // a selected tool is listed with its full definition
      expect(listed.find((t) => t.name === 'claims.open_claim')).toMatchObject({
        title: 'Open a claim',
        inputSchema: { type: 'object' },
      });
      const called = await client.callTool({ name: 'claims.open_claim', arguments: {} });
      expect(called.isError).toBeFalsy();
      expect(claims.toolRequests('claims.open_claim')).toHaveLength(1);
      // replacing the selection, then clearing it
      await client.callTool({
        name: 'gateway__select_tools',
        arguments: { names: ['claims.close_claim'] },
      });
      await changes.until(2);
      expect(names((await client.listTools()).tools)).toEqual([
        ...WITH_SELECT,
        'claims.close_claim',
      ]);
      await client.callTool({ name: 'gateway__select_tools', arguments: { names: [] } });
      await changes.until(3);
      expect(names((await client.listTools()).tools)).toEqual(WITH_SELECT);
    } finally {
      await client.close();
    }
  });

  it('variant: the v2 client in its legacy mode', async () => {
    const client = await connectV2(a.mcpUrl);
    const changes = new ListChanges();
    client.setNotificationHandler('notifications/tools/list_changed', changes.handler);
    try {
      await client.callTool({
        name: 'gateway__select_tools',
        arguments: { names: ['claims.weather_at'] },
      });
      await changes.until(1);
      expect(names((await client.listTools()).tools)).toEqual([
        ...WITH_SELECT,
        'claims.weather_at',
      ]);
    } finally {
      await client.close();
    }
  });

  it("a selection is the session's own, and with Redis every replica serves it", async () => {
    const session = await openSession(a.mcpUrl);
    const other = await openSession(a.mcpUrl);
    const select = await rpc(
      a.mcpUrl,
      'tools/call',
      { name: 'gateway__select_tools', arguments: { names: ['claims.close_claim'] } },
      session,
    );
    // told on the call's own answer stream, before its result
    expect(select.text).toMatch(/notifications\/tools\/list_changed[\s\S]*"selected"/);
    const onB = await rpc(b.mcpUrl, 'tools/list', {}, session);
    expect(names(onB.json.result.tools)).toEqual([...WITH_SELECT, 'claims.close_claim']);
    const untouched = await rpc(a.mcpUrl, 'tools/list', {}, other);
    expect(names(untouched.json.result.tools)).toEqual(WITH_SELECT);
  });

  it('without a JSON-accepting stream: list_changed goes to the session’s GET stream', async () => {
    const session = await openSession(a.mcpUrl);
    const stream = await fetch(a.mcpUrl, {
      headers: { ...session, accept: 'text/event-stream' },
    });
    expect(stream.status).toBe(200);
    const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
    const answer = await fetch(a.mcpUrl, {
      method: 'POST',
      headers: { ...session, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'gateway__select_tools', arguments: { names: ['claims.weather_at'] } },
      }),
    });
    expect(answer.status).toBe(200);
    let text = '';
    while (!text.includes('list_changed')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    expect(text).toContain('"method":"notifications/tools/list_changed"');
    await reader.cancel();
  });

  it('names outside a virtual server’s view are not selected there; a server without selection does not offer it', async () => {
    const session = await openSession(at(a, 'closing'));
    const select = await rpc(
      at(a, 'closing'),
      'tools/call',
      {
        name: 'gateway__select_tools',
        arguments: { names: ['claims.open_claim', 'claims.close_claim', 'gateway__call_tool'] },
      },
      session,
    );
    expect(answerOf(select).result.structuredContent).toEqual({
      selected: ['claims.close_claim'],
      unknown: ['claims.open_claim', 'gateway__call_tool'],
    });
    const plain = await openSession(at(a, 'searching'));
    const listed = await rpc(at(a, 'searching'), 'tools/list', {}, plain);
    expect(names(listed.json.result.tools)).toEqual(SEARCH_TOOLS);
    const refused = await rpc(
      at(a, 'searching'),
      'tools/call',
      { name: 'gateway__select_tools', arguments: { names: ['claims.open_claim'] } },
      plain,
    );
    expect(refused.json.error.message).toMatch(/Tool not found/);
  });

  it('one session on two paths keeps one selection on each', async () => {
    const session = await openSession(a.mcpUrl);
    const select = (url: string, names: string[]) =>
      rpc(url, 'tools/call', { name: 'gateway__select_tools', arguments: { names } }, session);
    await select(a.mcpUrl, ['claims.open_claim']);
    await select(at(a, 'closing'), ['claims.close_claim']);
    const onMcp = await rpc(a.mcpUrl, 'tools/list', {}, session);
    expect(names(onMcp.json.result.tools)).toEqual([...WITH_SELECT, 'claims.open_claim']);
    const onClosing = await rpc(at(a, 'closing'), 'tools/list', {}, session);
    expect(names(onClosing.json.result.tools)).toEqual([...WITH_SELECT, 'claims.close_claim']);
  });

  it('bad names are an isError result that selects nothing', async () => {
    const session = await openSession(a.mcpUrl);
    for (const args of [{}, { names: 'claims.open_claim' }, { names: Array(51).fill('x') }]) {
      const answer = await rpc(
        a.mcpUrl,
        'tools/call',
        { name: 'gateway__select_tools', arguments: args },
        session,
      );
      const result = answerOf(answer).result;
      expect(result.isError).toBe(true);
      expect(result.content[0].text).toMatch(
        /^Invalid arguments for tool gateway__select_tools:[\s\S]*\n- \/names[:/]/,
      );
    }
    const listed = await rpc(a.mcpUrl, 'tools/list', {}, session);
    expect(names(listed.json.result.tools)).toEqual(WITH_SELECT);
  });

  it('a 2026 request and a 2025 request without a session are not offered selection', async () => {
    const modern = await modernRequest(a.mcpUrl, 'tools/list', {}, {});
    expect(names(modern.json.result.tools)).toEqual(SEARCH_TOOLS);
    const call = await modernRequest(
      a.mcpUrl,
      'tools/call',
      { name: 'gateway__select_tools', arguments: { names: ['claims.open_claim'] } },
      {},
    );
    expect(call.json.error.message).toMatch(/Tool not found/);
    const sessionless = await rpc(a.mcpUrl, 'tools/list', {});
    expect(names(sessionless.json.result.tools)).toEqual(SEARCH_TOOLS);
  });

  it('composed with a JWT grant: a tool outside the caller’s grant is never selected', async () => {
    const as = await TestAuthorizationServer.start({
      resources: { [RESOURCE]: { scope: 'mcp' } },
      defaultResource: RESOURCE,
    });
    try {
      await selectsWithinGrant(as);
    } finally {
      await as.stop();
    }
  });

  async function selectsWithinGrant(as: TestAuthorizationServer): Promise<void> {
    const gateway = await replica({
      auth: jwtAuthConfig(as, RESOURCE),
      access: {
        rules: [{ match: { claim: 'groups', value: 'narrow' }, tools: ['claims.weather_at'] }],
      },
    });
    const token = (await as.mint({ subject: 'n1', claims: { groups: ['narrow'] } })).access_token;
    const bearer = { authorization: `Bearer ${token}` };
    const session = await openSession(gateway.mcpUrl, bearer);
    const select = await rpc(
      gateway.mcpUrl,
      'tools/call',
      {
        name: 'gateway__select_tools',
        arguments: { names: ['claims.open_claim', 'claims.weather_at'] },
      },
      { ...session, ...bearer },
    );
    expect(answerOf(select).result.structuredContent).toEqual({
      selected: ['claims.weather_at'],
      unknown: ['claims.open_claim'],
    });
    const listed = await rpc(gateway.mcpUrl, 'tools/list', {}, { ...session, ...bearer });
    expect(names(listed.json.result.tools)).toEqual([...WITH_SELECT, 'claims.weather_at']);
    // the session is the caller's: another token cannot use it
    const other = (await as.mint({ subject: 'n2', claims: { groups: ['narrow'] } })).access_token;
    const stolen = await rpc(
      gateway.mcpUrl,
      'tools/list',
      {},
      { ...session, authorization: `Bearer ${other}` },
    );
    expect(stolen.json?.result?.tools?.map((t: { name: string }) => t.name) ?? []).not.toContain(
      'claims.weather_at',
    );
  }
});

async function openSession(
  url: string,
  headers: Record<string, string> = {},
): Promise<Record<string, string>> {
  const init = await rpc(
    url,
    'initialize',
    {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'tool-selection', version: '1' },
    },
    headers,
  );
  const session = {
    'mcp-session-id': init.headers.get('mcp-session-id') as string,
    'mcp-protocol-version': '2025-11-25',
  };
  await rpc(url, 'notifications/initialized', undefined, { ...session, ...headers });
  return session;
}

/**
 * docs/operations.md §16 "Tool search": `gateway__call_tool` is a direct call in every respect,
 * relays included: an upstream tool's elicitation reaches the client on the call's answer stream.
 */
describe('gateway__call_tool relays what the tool it calls relays', () => {
  let repo: V1Upstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    repo = await V1Upstream.start();
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([], { upstreams: [upstream('repo', repo.url)] }),
        toolSearch: { enabled: true },
      },
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await repo?.stop();
  });

  it("the upstream's elicitation/create reaches the v1 client and its answer the upstream", async () => {
    const client = await connectV1(gateway.mcpUrl, {}, { elicitation: { form: {} } });
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { approve: true } };
    });
    try {
      const result = await client.callTool({
        name: 'gateway__call_tool',
        arguments: { name: 'repo__confirm', arguments: { question: 'Deploy?' } },
      });
      expect(asked).toEqual(['Deploy?']);
      expect(result.isError).toBeFalsy();
      expect(repo.seen.elicitations.at(-1)).toEqual({
        action: 'accept',
        content: { approve: true },
      });
    } finally {
      await client.close();
    }
  });
});
