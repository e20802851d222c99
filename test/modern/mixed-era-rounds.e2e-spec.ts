import { createServer } from 'node:net';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { Client as V2Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { BalancedGateways, oneConnectionPerRequest } from '../support/balancer';
import { waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool, upstream } from '../support/fixtures';
import { ListenUpstream } from '../support/listen-upstream';
import { LiveUpstream } from '../support/live-upstreams';
import { CLIENT_KINDS, connectClient } from '../support/sdk-clients';
import { SseReader } from '../support/sse-reader';
import { TestToolService } from '../support/tool-service';
import { V1AskingUpstream, V2MrtrUpstream } from '../mrtr/mrtr-upstreams';

const V = '2026-07-28';
const ELICIT_AND_SAMPLE = { elicitation: { form: {} }, sampling: {} };
const PARTIAL_SOURCES = 'io.github.mcp-gateway/partialSources';
/** Long listens and SDK pools: a short drain keeps every replica's stop within its bound. */
const SHORT_GRACE = { gracePeriodSeconds: 3 };

const envelope = (capabilities: object = {}) => ({
  'io.modelcontextprotocol/protocolVersion': V,
  'io.modelcontextprotocol/clientCapabilities': capabilities,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
});

/** A raw 2026 request through the balancer, on its own connection (so on the next replica). */
async function modern(
  url: string,
  method: string,
  params: Record<string, unknown> = {},
  capabilities: object = ELICIT_AND_SAMPLE,
) {
  const res = await oneConnectionPerRequest(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': V,
      'mcp-method': method,
      ...(typeof params.name === 'string' ? { 'mcp-name': params.name } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: { ...params, _meta: envelope(capabilities) },
    }),
  });
  return { status: res.status, json: (await res.json()) as any };
}

/** True when two consecutive raw 2026 tools/list (so one on each replica) both list `name`. */
async function listedOnBoth(url: string, name: string): Promise<boolean> {
  for (let i = 0; i < 2; i++) {
    const list = await modern(url, 'tools/list');
    if (!list.json.result?.tools.some((t: { name: string }) => t.name === name)) return false;
  }
  return true;
}

/** A raw 2025 request through the balancer (no session: only for the stateless list paths). */
async function legacyList(url: string, method: string) {
  const res = await oneConnectionPerRequest(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: {} }),
  });
  return { status: res.status, json: (await res.json()) as any };
}

/** Runs `send` and returns its answer with the replica index the balancer gave its one connection. */
async function onReplica<T>(
  deployment: BalancedGateways,
  send: () => Promise<T>,
): Promise<{ answer: T; replica: number }> {
  const before = [...deployment.balancer.connections];
  const answer = await send();
  const grown = deployment.balancer.connections
    .map((n, i) => (n > (before[i] ?? 0) ? i : -1))
    .filter((i) => i >= 0);
  expect(grown).toHaveLength(1);
  return { answer, replica: grown[0]! };
}

/** The SSE message events of a call's streamed answer (fetch Response), read one by one. */
class CallStream {
  private buffer = '';
  private readonly decoder = new TextDecoder();
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  constructor(response: Response) {
    if (response.body === null) throw new Error(`no body (status ${response.status})`);
    this.reader = response.body.getReader();
  }

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

/** A port on 127.0.0.1 that nothing listens on (bound once, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * docs/operations.md §11 "Several replicas", the cases mixed-era.e2e-spec.ts leaves to its own
 * suites: MRTR rounds and era bridging both ways, a listen and live fan-out, each through two
 * replicas sharing Redis behind a round-robin TCP balancer, every request on a fresh connection (so
 * a retry, an answer or a list may land on either replica).
 */
describe('MRTR and era bridging through two replicas behind a round-robin balancer', () => {
  let v2: V2MrtrUpstream;
  let v1: V1AskingUpstream;
  let deployment: BalancedGateways;

  beforeAll(async () => {
    v2 = await V2MrtrUpstream.start();
    v1 = await V1AskingUpstream.start();
    deployment = await BalancedGateways.start({
      mcp: gatewayConfig([], {
        upstreams: [
          upstream('v2', v2.url, { timeouts: { callMillis: 30_000 } }),
          upstream('v1', v1.url, { timeouts: { callMillis: 30_000 } }),
        ],
        shutdown: SHORT_GRACE,
      }),
    });
  }, 200_000);

  afterAll(async () => {
    await deployment?.stop();
    await v2?.stop();
    await v1?.stop();
  });

  it('2026 client ↔ 2026 upstream: input_required on one replica, the retry on the other completes with the upstream’s own requestState', async () => {
    const first = await onReplica(deployment, () =>
      modern(deployment.url, 'tools/call', {
        name: 'v2__confirm_deploy',
        arguments: { env: 'lb' },
      }),
    );
    const result = first.answer.json.result;
    expect(result.resultType).toBe('input_required');
    expect(result.inputRequests.confirm.method).toBe('elicitation/create');
    expect(result.requestState).toMatch(/^gwrs1\./);
    const retry = await onReplica(deployment, () =>
      modern(deployment.url, 'tools/call', {
        name: 'v2__confirm_deploy',
        arguments: { env: 'lb' },
        inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
        requestState: result.requestState,
      }),
    );
    expect(retry.replica).not.toBe(first.replica);
    expect(retry.answer.json.result.resultType).toBe('complete');
    expect(text(retry.answer.json.result)).toBe('deployed to lb (state=opaque-state-lb)');
    expect(v2.calls().at(-1).params.requestState).toBe('opaque-state-lb');
  });

  it.each(['v2-auto', 'v2-pin'] as const)(
    'the %s client answers both MRTR rounds of a 2026 upstream with its handlers, through the balancer',
    async (kind) => {
      const client = new V2Client(
        { name: `e2e-${kind}`, version: '1' },
        {
          versionNegotiation: { mode: kind === 'v2-auto' ? 'auto' : { pin: V } },
          capabilities: ELICIT_AND_SAMPLE,
        },
      );
      const asked: string[] = [];
      client.setRequestHandler('elicitation/create', (request) => {
        asked.push(String(request.params.message));
        return { action: 'accept', content: { confirm: true, publish: true } };
      });
      client.setRequestHandler('sampling/createMessage', () => ({
        role: 'assistant',
        content: { type: 'text', text: `poem of ${kind}` },
        model: 'test-model',
      }));
      await client.connect(
        new StreamableHTTPClientTransport(new URL(deployment.url), {
          fetch: oneConnectionPerRequest,
        }),
      );
      try {
        expect(client.getNegotiatedProtocolVersion?.()).toBe(V);
        const deploy = await client.callTool({
          name: 'v2__confirm_deploy',
          arguments: { env: kind },
        });
        expect(text(deploy)).toBe(`deployed to ${kind} (state=opaque-state-${kind})`);
        const poem = await client.callTool({ name: 'v2__write_poem', arguments: { topic: 'lb' } });
        expect(text(poem)).toBe(`poem of ${kind} | published=true`);
        expect(asked).toEqual([`Deploy to ${kind}?`, 'Publish it?']);
      } finally {
        await client.close();
      }
    },
  );

  it('2026 client → 2025 upstream: the parked call is answered by a retry on the other replica (Redis)', async () => {
    const first = await onReplica(deployment, () =>
      modern(deployment.url, 'tools/call', {
        name: 'v1__approve',
        arguments: { question: 'Balanced?' },
      }),
    );
    const result = first.answer.json.result;
    expect(result.resultType).toBe('input_required');
    const [key, request] = Object.entries(result.inputRequests as Record<string, any>)[0]!;
    expect(request).toMatchObject({
      method: 'elicitation/create',
      params: { message: 'Balanced?' },
    });
    const retry = await onReplica(deployment, () =>
      modern(deployment.url, 'tools/call', {
        name: 'v1__approve',
        arguments: { question: 'Balanced?' },
        inputResponses: { [key]: { action: 'accept', content: { approve: true } } },
        requestState: result.requestState,
      }),
    );
    expect(retry.replica).not.toBe(first.replica);
    expect(retry.answer.json.result.resultType).toBe('complete');
    expect(text(retry.answer.json.result)).toBe(
      'approve={"action":"accept","content":{"approve":true}}',
    );
  });

  it('2026 client → 2025 upstream: two elicitations, each round on the next replica, then the result', async () => {
    let answer = await modern(deployment.url, 'tools/call', {
      name: 'v1__double_check',
      arguments: { question: 'Twice?' },
    });
    const seen: string[] = [];
    for (let round = 0; answer.json.result?.resultType === 'input_required'; round++) {
      expect(round).toBeLessThan(3);
      const [key, request] = Object.entries(
        answer.json.result.inputRequests as Record<string, any>,
      )[0]!;
      seen.push(request.params.message);
      answer = await modern(deployment.url, 'tools/call', {
        name: 'v1__double_check',
        arguments: { question: 'Twice?' },
        inputResponses: { [key]: { action: 'accept', content: { approve: round === 0 } } },
        requestState: answer.json.result.requestState,
      });
    }
    expect(seen).toEqual(['Twice?', 'Really? Twice?']);
    expect(text(answer.json.result)).toBe('first={"approve":true} second={"approve":false}');
  });

  it.each(['v2-auto', 'v2-pin'] as const)(
    'the %s client answers a 2025 upstream’s elicitation and sampling through the balancer',
    async (kind) => {
      const client = new V2Client(
        { name: `e2e-${kind}`, version: '1' },
        {
          versionNegotiation: { mode: kind === 'v2-auto' ? 'auto' : { pin: V } },
          capabilities: ELICIT_AND_SAMPLE,
        },
      );
      client.setRequestHandler('elicitation/create', () => ({
        action: 'accept',
        content: { approve: true },
      }));
      client.setRequestHandler('sampling/createMessage', () => ({
        role: 'assistant',
        content: { type: 'text', text: `short ${kind}` },
        model: 'test-model',
      }));
      await client.connect(
        new StreamableHTTPClientTransport(new URL(deployment.url), {
          fetch: oneConnectionPerRequest,
        }),
      );
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
        expect(text(summary)).toBe(`summary=short ${kind}`);
      } finally {
        await client.close();
      }
    },
  );

  it('2025 client (v1 SDK) → 2026 upstream: input_required becomes requests on the call stream; its answers may land on either replica', async () => {
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
      content: { type: 'text', text: 'from v1' },
      model: 'test-model',
    }));
    const before = [...deployment.balancer.connections];
    await client.connect(
      new V1Transport(new URL(deployment.url), { fetch: oneConnectionPerRequest }),
    );
    try {
      for (const env of ['one', 'two']) {
        const deploy = await client.callTool({
          name: 'v2__confirm_deploy',
          arguments: { env },
        });
        expect(deploy.isError).toBeFalsy();
        expect(deploy).not.toHaveProperty('resultType');
        expect(text(deploy)).toBe(`deployed to ${env} (state=opaque-state-${env})`);
      }
      const poem = await client.callTool({ name: 'v2__write_poem', arguments: { topic: 'x' } });
      expect(text(poem)).toBe('from v1 | published=false');
      expect(asked).toEqual(['Deploy to one?', 'Deploy to two?', 'Publish it?']);
      // the session's requests spread over both replicas
      deployment.balancer.connections.forEach((n, i) => expect(n).toBeGreaterThan(before[i]!));
    } finally {
      await client.close();
    }
  });

  it('2025 session → 2026 upstream: the answer POSTed through the balancer lands on the other replica and reaches the waiting call (Redis)', async () => {
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
    const init = await oneConnectionPerRequest(deployment.url, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: ELICIT_AND_SAMPLE,
          clientInfo: { name: 'raw', version: '1' },
        },
      }),
    });
    await init.text();
    const session = {
      ...headers,
      'mcp-protocol-version': '2025-11-25',
      'mcp-session-id': init.headers.get('mcp-session-id') ?? '',
    };
    const call = await onReplica(deployment, async () => {
      const res = await oneConnectionPerRequest(deployment.url, {
        method: 'POST',
        headers: session,
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 9,
          method: 'tools/call',
          params: { name: 'v2__confirm_deploy', arguments: { env: 'crossed' } },
        }),
      });
      expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
      const stream = new CallStream(res);
      return { stream, request: await stream.next() };
    });
    expect(call.answer.request).toMatchObject({
      method: 'elicitation/create',
      params: { message: 'Deploy to crossed?' },
    });
    const posted = await onReplica(deployment, () =>
      oneConnectionPerRequest(deployment.url, {
        method: 'POST',
        headers: session,
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: call.answer.request.id,
          result: { action: 'accept', content: { confirm: true } },
        }),
      }),
    );
    expect(posted.replica).not.toBe(call.replica);
    expect(posted.answer.status).toBe(202);
    const final = await call.answer.stream.next();
    expect(final.id).toBe(9);
    expect(text(final.result)).toBe('deployed to crossed (state=opaque-state-crossed)');
  });

  it('2025 client (v2 SDK, legacy) → 2026 upstream: both rounds answered by its handlers', async () => {
    const client = new V2Client(
      { name: 'e2e-v2-legacy', version: '1' },
      { capabilities: ELICIT_AND_SAMPLE },
    );
    const asked: string[] = [];
    client.setRequestHandler('elicitation/create', (request) => {
      asked.push(String(request.params.message));
      return { action: 'accept', content: { confirm: true, publish: true } };
    });
    client.setRequestHandler('sampling/createMessage', () => ({
      role: 'assistant',
      content: { type: 'text', text: 'from legacy' },
      model: 'test-model',
    }));
    await client.connect(
      new StreamableHTTPClientTransport(new URL(deployment.url), {
        fetch: oneConnectionPerRequest,
      }),
    );
    try {
      expect(client.getNegotiatedProtocolVersion?.()).not.toBe(V);
      const deploy = await client.callTool({
        name: 'v2__confirm_deploy',
        arguments: { env: 'legacy' },
      });
      expect(text(deploy)).toBe('deployed to legacy (state=opaque-state-legacy)');
      const poem = await client.callTool({ name: 'v2__write_poem', arguments: { topic: 'y' } });
      expect(text(poem)).toBe('from legacy | published=true');
      expect(asked).toEqual(['Deploy to legacy?', 'Publish it?']);
    } finally {
      await client.close();
    }
  });
});

describe('a listen through two replicas behind a round-robin balancer', () => {
  let service: TestToolService;
  let calc: ListenUpstream;
  let deployment: BalancedGateways;

  beforeAll(async () => {
    service = await TestToolService.start(manifest('ins', [tool({ name: 'ins.quote' })], 'r1'));
    calc = await ListenUpstream.start(['echo']);
    deployment = await BalancedGateways.start({
      mcp: {
        ...gatewayConfig([bundle('ins', service, 'ins.')], {
          registry: { refreshIntervalSeconds: 1 },
          upstreams: [upstream('calc', calc.url)],
          shutdown: SHORT_GRACE,
        }),
        listen: { keepAliveMillis: 300 },
      },
    });
  }, 200_000);

  afterAll(async () => {
    await deployment?.stop();
    await calc?.stop();
    await service?.stop();
  });

  it('a raw listen and the v2 client’s listen, each on a replica, receive a bundle’s and an upstream’s catalog change', async () => {
    const raw = await SseReader.open(
      deployment.url,
      'POST',
      {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': V,
        'mcp-method': 'subscriptions/listen',
      },
      JSON.stringify({
        jsonrpc: '2.0',
        id: 'lb-listen',
        method: 'subscriptions/listen',
        params: { _meta: envelope(), notifications: { toolsListChanged: true } },
      }),
    );
    const client = new V2Client(
      { name: 'e2e-listen', version: '1' },
      { versionNegotiation: { mode: { pin: V } } },
    );
    let seen = 0;
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      seen++;
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(deployment.url), {
        fetch: oneConnectionPerRequest,
      }),
    );
    const subscription = await client.listen({ toolsListChanged: true });
    const changes = () =>
      raw.messages.filter((m) => m.method === 'notifications/tools/list_changed').length;
    try {
      expect(raw.status).toBe(200);
      await raw.waitForMessage((m) => m.method === 'notifications/subscriptions/acknowledged');
      expect(subscription.honoredFilter).toEqual({ toolsListChanged: true });
      // a bundle change: every replica pulls the manifest itself
      service.manifest = () => ({
        body: manifest('ins', [tool({ name: 'ins.quote' }), tool({ name: 'ins.claim' })], 'r2'),
      });
      await waitFor(
        () => changes() > 0 && seen > 0,
        30_000,
        () => `bundle change: raw ${changes()}, client ${seen}`,
      );
      // each replica pulls on its own schedule: wait until both list it
      await waitFor(
        () => listedOnBoth(deployment.url, 'ins.claim'),
        15_000,
        () => 'ins.claim not listed on every replica',
      );
      // an upstream change, relayed through the listens the replicas hold on the upstream
      const [rawBefore, clientBefore] = [changes(), seen];
      await waitFor(
        () => calc.openListens > 0,
        15_000,
        () => 'no replica opened an upstream listen',
      );
      calc.addTool('late');
      await waitFor(
        () => changes() > rawBefore && seen > clientBefore,
        30_000,
        () => `upstream change: raw ${changes()}, client ${seen}`,
      );
      // each replica pulls on its own schedule: wait until both list it
      await waitFor(
        () => listedOnBoth(deployment.url, 'calc__late'),
        15_000,
        () => 'calc__late not listed on every replica',
      );
    } finally {
      raw.close();
      await subscription.close();
      await client.close();
    }
  });

  it.each(['v1', 'v2-legacy'] as const)(
    'the %s client’s session GET stream, opened through the balancer, receives a catalog change',
    async (kind) => {
      const client = await connectClient(kind, deployment.url, { fetch: oneConnectionPerRequest });
      let seen = 0;
      if (client instanceof V1Client)
        client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
          seen++;
        });
      else
        client.setNotificationHandler('notifications/tools/list_changed', () => {
          seen++;
        });
      try {
        // the GET stream opens after notifications/initialized, at a moment the test does not
        // see: change the manifest again each second until a change arrives
        let revision = 3;
        let changedAt = 0;
        await waitFor(
          () => {
            if (seen > 0) return true;
            if (Date.now() - changedAt > 1000) {
              const names = ['ins.quote', `ins.r${revision}`];
              service.manifest = () => ({
                body: manifest(
                  'ins',
                  names.map((name) => tool({ name })),
                  `r${revision}`,
                ),
              });
              revision++;
              changedAt = Date.now();
            }
            return false;
          },
          30_000,
          () => 'no tools/list_changed on the GET stream',
        );
        expect(seen).toBeGreaterThan(0);
      } finally {
        await client.close();
      }
    },
  );
});

const live = (id: string, url: string, extra: Record<string, unknown> = {}) =>
  upstream(id, url, { lists: 'live', forwardHeaders: ['X-Tenant'], ...extra });
const UNREACHABLE = { timeouts: { connectMillis: 200, listMillis: 1000 } };

describe('live fan-out through two replicas behind a round-robin balancer', () => {
  let alpha: LiveUpstream;
  let beta: LiveUpstream;
  let deployment: BalancedGateways;

  beforeAll(async () => {
    alpha = await LiveUpstream.start({ stem: 'alpha' });
    beta = await LiveUpstream.start({ stem: 'beta', era: '2025' });
    deployment = await BalancedGateways.start({
      mcp: gatewayConfig([], {
        upstreams: [
          live('alpha', alpha.url),
          live('beta', beta.url),
          live('ghost', `http://127.0.0.1:${await closedPort()}/mcp`, UNREACHABLE),
        ],
      }),
    });
  }, 200_000);

  afterAll(async () => {
    await deployment?.stop();
    await alpha?.stop();
    await beta?.stop();
  });

  it('a live upstream down is skipped and named in partialSources, on either replica, in both eras', async () => {
    const replicas = new Set<number>();
    for (let i = 0; i < 2; i++) {
      const { answer, replica } = await onReplica(deployment, () =>
        modern(deployment.url, 'tools/list'),
      );
      replicas.add(replica);
      expect(answer.status).toBe(200);
      expect(answer.json.result.tools.map((t: { name: string }) => t.name)).toEqual([
        'alpha__alpha_whoami',
        'alpha__anon_alpha',
        'beta__anon_beta',
        'beta__beta_whoami',
      ]);
      expect(answer.json.result._meta[PARTIAL_SOURCES]).toEqual([
        { id: 'ghost', kind: 'upstream', state: 'missing' },
      ]);
    }
    expect(replicas.size).toBe(2);
    const legacy = await legacyList(deployment.url, 'tools/list');
    expect(legacy.json.result._meta[PARTIAL_SOURCES]).toEqual([
      { id: 'ghost', kind: 'upstream', state: 'missing' },
    ]);
  });

  it.each(CLIENT_KINDS)(
    'the %s client lists through the balancer: the down upstream named in partialSources',
    async (kind) => {
      const client = await connectClient(kind, deployment.url, {
        fetch: oneConnectionPerRequest,
        headers: { 'x-tenant': `t-${kind}` },
      });
      try {
        for (let i = 0; i < 2; i++) {
          const listed = await client.listTools();
          const tenant = `t-${kind}`;
          expect(listed.tools.map((t) => t.name)).toEqual([
            'alpha__alpha_whoami',
            `alpha__${tenant}_alpha`,
            'beta__beta_whoami',
            `beta__${tenant}_beta`,
          ]);
          expect(listed._meta?.[PARTIAL_SOURCES]).toEqual([
            { id: 'ghost', kind: 'upstream', state: 'missing' },
          ]);
        }
      } finally {
        await client.close();
      }
    },
  );

  it('every live upstream down: -32603 naming them, on either replica', async () => {
    const down = await BalancedGateways.start({
      mcp: gatewayConfig([], {
        upstreams: [
          live('down', `http://127.0.0.1:${await closedPort()}/mcp`, UNREACHABLE),
          live('also-down', `http://127.0.0.1:${await closedPort()}/mcp`, UNREACHABLE),
        ],
      }),
      waitReady: false,
    });
    try {
      // each replica publishes its catalog once its first pulls were attempted (both fail)
      for (const replica of down.replicas)
        await waitFor(
          async () => {
            const res = await fetch(replica.mcpUrl, {
              method: 'POST',
              headers: {
                'content-type': 'application/json',
                accept: 'application/json, text/event-stream',
              },
              body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
            });
            return !/Registry unavailable/.test(await res.text());
          },
          60_000,
          () => `replica not published:\n${down.output}`,
        );
      const replicas = new Set<number>();
      for (let i = 0; i < 2; i++) {
        const { answer, replica } = await onReplica(down, () => modern(down.url, 'tools/list'));
        replicas.add(replica);
        expect(answer.json.result).toBeUndefined();
        expect(answer.json.error.code).toBe(-32603);
        expect(answer.json.error.data).toEqual({ failedSources: ['down', 'also-down'] });
      }
      expect(replicas.size).toBe(2);
      const legacy = await legacyList(down.url, 'tools/list');
      expect(legacy.json.error.code).toBe(-32603);
      for (const kind of CLIENT_KINDS) {
        const client = await connectClient(kind, down.url, { fetch: oneConnectionPerRequest });
        try {
          await expect(client.listTools()).rejects.toMatchObject({ code: -32603 });
        } finally {
          await client.close();
        }
      }
    } finally {
      await down.stop();
    }
  }, 200_000);
});
