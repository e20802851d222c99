import { bundle, gatewayConfig, manifest, tool, upstream } from '../support/fixtures';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { ListenUpstream, STATUS_URI } from '../support/listen-upstream';
import { modernListen } from '../support/modern-rpc';
import { jwtAuthConfig, TestAuthorizationServer } from '../support/oidc-provider';
import { openLegacySession, rpc, type RawAnswer } from '../support/rpc';
import { ScriptedUpstream, upTool } from '../support/scripted-upstream';
import type { SseReader } from '../support/sse-reader';
import { TestToolService } from '../support/tool-service';

const RESOURCE = 'https://gateway.test/mcp';
/** Longer than every call's 3 s deadline: B's slow calls end by timing out, holding a connection 3 s each. */
const SLOW_MS = 10_000;

/**
 * One caller's requests hold at most its share of a source's connections and call slots
 * (docs/operations.md §1 `execution.maxConcurrentCallsPerCaller`; unset: a quarter of
 * `maxConnectionsPerOrigin`, here 4 → 1). Caller B, granted only the slow tools, fills what it
 * may with slow calls (and with 2026 listens held for it); caller A's calls of other tools of the
 * same sources still find a connection and are answered. Before the share, B's calls took all
 * four connections and A's waited out its callMillis (upstream) or got "busy" (bundle).
 */
describe('a caller takes at most its share of a source (mcp.auth on)', () => {
  let as: TestAuthorizationServer;
  let up: ScriptedUpstream;
  let listens: ListenUpstream;
  let service: TestToolService;
  let gateway: GatewayProcess;
  let alice: Record<string, string>;
  let bob: Record<string, string>;
  const streams: SseReader[] = [];

  beforeAll(async () => {
    [as, up, listens, service] = await Promise.all([
      TestAuthorizationServer.start({
        resources: { [RESOURCE]: { scope: 'mcp' } },
        defaultResource: RESOURCE,
      }),
      ScriptedUpstream.start({ tools: [upTool('slow'), upTool('fast')] }),
      ListenUpstream.start(['echo']),
      TestToolService.start(
        manifest('ops', [
          tool({ name: 'ops.slow', meta: { timeoutMillis: 3000 } }),
          tool({ name: 'ops.fast', meta: { timeoutMillis: 3000 } }),
        ]),
      ),
    ]);
    up.onTool('slow', async () => {
      await new Promise((resolve) => setTimeout(resolve, SLOW_MS));
      return { result: { content: [{ type: 'text', text: 'slow-ok' }] } };
    });
    up.onTool('fast', () => ({ result: { content: [{ type: 'text', text: 'fast-ok' }] } }));
    service.tools.set('ops.slow', () => ({ body: { slow: 'ok' }, delayMs: SLOW_MS }));
    service.tools.set('ops.fast', () => ({ body: { fast: 'ok' } }));
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('ops', service, 'ops.')], {
          execution: { maxConnectionsPerOrigin: 4 },
          upstreams: [
            upstream('u', up.url, { timeouts: { callMillis: 3000 } }),
            // three more names for the same server: one origin, one pool of connections; their
            // calls' deadlines pass while a call to u (3 s) holds the caller's share
            ...['v', 'w', 'x'].map((id) =>
              upstream(id, up.url, { timeouts: { callMillis: 1500 } }),
            ),
            upstream('ub', listens.url, { timeouts: { callMillis: 3000 } }),
          ],
        }),
        http: { modernEra: true },
        auth: jwtAuthConfig(as, RESOURCE),
        access: {
          rules: [
            {
              match: { claim: 'groups', value: 'dev' },
              tools: ['u__fast', 'ops.fast', 'ub__echo'],
            },
            {
              match: { claim: 'groups', value: 'ops' },
              tools: ['u__slow', 'v__slow', 'w__slow', 'x__slow', 'ops.slow'],
              sources: ['ub'],
            },
          ],
        },
      },
      waitReady: true,
    });
    const mint = async (subject: string, group: string) => ({
      authorization: `Bearer ${(await as.mint({ subject, claims: { groups: [group] } })).access_token}`,
    });
    [alice, bob] = await Promise.all([mint('alice', 'dev'), mint('bob', 'ops')]);
  }, 120_000);

  afterAll(async () => {
    for (const stream of streams) stream.close();
    await gateway?.stop();
    await Promise.all([as?.stop(), up?.stop(), listens?.stop(), service?.stop()]);
  });

  const call = (who: Record<string, string>, name: string, id: number): Promise<RawAnswer> =>
    rpc(gateway.mcpUrl, 'tools/call', { name, arguments: {} }, who, id);
  const textOf = (answer: RawAnswer): string =>
    (answer.json?.result?.content?.[0]?.text as string | undefined) ?? answer.text;

  it.each([
    [
      'an upstream',
      'u__slow',
      'u__fast',
      'fast-ok',
      /^Upstream u: not sent: for \d+ ms this caller had 1 other requests to it running, its share of its connections \(execution\.maxConcurrentCallsPerCaller\)$/,
    ],
    [
      'a bundle',
      'ops.slow',
      'ops.fast',
      '{"fast":"ok"}',
      /^Tool ops\.slow failed: not sent: for \d+ ms this caller had 1 other calls to its Tool Service running, its share \(execution\.maxConcurrentCallsPerCaller\)\.$/,
    ],
  ])(
    "%s: the caller's calls past its share wait for its own; another caller's call is answered",
    async (_kind, slow, fast, fastText, refusal) => {
      const first = call(bob, slow, 1);
      // the first has taken B's share once the source has it
      await waitFor(
        () =>
          slow.startsWith('u__')
            ? up.calls('slow').length > 0
            : service.toolRequests('ops.slow').length > 0,
        10_000,
      );
      // without the share these seven would take the other connections and queue for more,
      // ahead of A's call, which would wait out its own 3 s; with it they wait for B's own
      const more = [2, 3, 4, 5, 6, 7, 8].map((id) => call(bob, slow, id));
      const other = await call(alice, fast, 9);
      expect(textOf(other)).toContain(fastText);
      expect(other.json.result.isError).not.toBe(true);
      // each waited for B's one connection: those that never got it say so, those handed it
      // near their deadline time out on the source (how many is a matter of timing)
      const waited = await Promise.all(more);
      for (const answer of waited) {
        expect(answer.json.result.isError).toBe(true);
        expect(textOf(answer)).toMatch(
          new RegExp(`${refusal.source}|did not answer|no answer within`),
        );
      }
      expect(waited.some((answer) => refusal.test(textOf(answer)))).toBe(true);
      // B's own call ends by its deadline; its share is given back then
      const ended = await first;
      expect(ended.json.result.isError).toBe(true);
      expect(textOf(ended)).not.toMatch(refusal);
      expect(textOf(await call(bob, slow, 10))).not.toMatch(refusal);
    },
    30_000,
  );

  it("the share is of the origin's connections: requests to several upstreams at one origin count together", async () => {
    const before = up.calls('slow').length;
    const first = call(bob, 'u__slow', 20);
    await waitFor(() => up.calls('slow').length > before, 10_000);
    // B's share of the origin is taken by its call to u: its calls to v, w and x (other
    // upstreams, the same origin) wait for it, and their 1.5 s deadlines pass while u's 3 s run
    const more = ['v', 'w', 'x'].map((id, i) => call(bob, `${id}__slow`, 21 + i));
    const other = await call(alice, 'u__fast', 30);
    expect(textOf(other)).toContain('fast-ok');
    expect(other.json.result.isError).not.toBe(true);
    const waited = await Promise.all(more);
    expect(waited.map((answer) => /its share of its connections/.test(textOf(answer)))).toEqual([
      true,
      true,
      true,
    ]);
    expect(up.calls('slow').length).toBe(before + 1);
    expect((await first).json.result.isError).toBe(true);
  }, 30_000);

  it("2026 listens held for a caller count in its share: past it none is opened on the upstream, and another caller's call is answered", async () => {
    for (let i = 0; i < 3; i += 1) {
      const stream = await modernListen(
        gateway.mcpUrl,
        `B${i}`,
        { toolsListChanged: true },
        {},
        bob.authorization!.slice(7),
      );
      streams.push(stream);
      await stream.waitForMessage(() => true);
    }
    await waitFor(() => listens.openListens >= 1, 10_000);
    // the other two wait for B's share, re-tried with backoff, never on the upstream
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(listens.openListens).toBe(1);
    const answer = await rpc(
      gateway.mcpUrl,
      'tools/call',
      { name: 'ub__echo', arguments: { text: 'hi' } },
      alice,
      8,
    );
    expect(answer.text).toContain('echo:hi');
  }, 30_000);

  it("a 2025 subscription bridged to the 2026 upstream's listen past the caller's share is refused, saying so", async () => {
    // B's share is held by its 2026 listen above: the subscribe waits its deadline for it and
    // is refused, saying why, and no other listen is opened on the upstream
    expect(listens.openListens).toBe(1);
    const session = await openLegacySession(gateway.mcpUrl, bob);
    const subscribed = await rpc(
      gateway.mcpUrl,
      'resources/subscribe',
      { uri: STATUS_URI },
      session,
    );
    expect(subscribed.json.error).toMatchObject({ code: -32603 });
    expect(subscribed.json.error.message).toMatch(
      /^Upstream ub: not sent: for \d+ ms this caller had 1 other requests to it running, its share/,
    );
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(listens.openListens).toBe(1);
    const answer = await rpc(
      gateway.mcpUrl,
      'tools/call',
      { name: 'ub__echo', arguments: { text: 'again' } },
      alice,
      11,
    );
    expect(answer.text).toContain('echo:again');
  }, 30_000);
});
