import { createServer } from 'node:net';
import { publishNames } from '@app/registry';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool, upstream } from '../support/fixtures';
import { LiveUpstream } from '../support/live-upstreams';
import { V1Upstream } from '../support/mcp-upstreams';
import { TestAuthorizationServer } from '../support/oidc-provider';
import { rpc, type RawAnswer } from '../support/rpc';
import { connectClient, connectV1, type AnyClient } from '../support/sdk-clients';
import { TestToolService } from '../support/tool-service';

const RESOURCE = 'https://gateway.test/mcp';
const PARTIAL_SOURCES = 'io.github.mcp-gateway/partialSources';
const MODERN = '2026-07-28';

/** A port on 127.0.0.1 that nothing listens on (bound once, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const names = (items: readonly { name: string }[]): string[] => items.map((i) => i.name).sort();

/**
 * docs/operations.md §13 "Access", over docs/operations.md §11 "Live lists": the lists of `lists:
 * live` upstreams, fetched per request, show a JWT caller only what `mcp.access.rules` grant it,
 * merged with the snapshot sources (a bundle and a snapshot upstream); a live tool outside the
 * grant is answered exactly like an unknown tool, in both eras. Live upstreams are real SDK servers
 * (2026 v2 and 2025 v1), tokens come from the real oidc-provider harness.
 */
describe('live lists honour mcp.access (docs/operations.md §13 "Access"; docs/operations.md §11 "Live lists")', () => {
  let as: TestAuthorizationServer;
  let service: TestToolService;
  let repo: V1Upstream;
  let alpha: LiveUpstream;
  let beta: LiveUpstream;
  let gateway: GatewayProcess;
  /** groups: alpha-team: the whole live source `alpha` and the snapshot upstream `repo`. */
  let sourceToken: string;
  /** groups: beta-one: the single live tool `beta__beta_whoami` and the bundle `ins`. */
  let toolToken: string;
  /** groups: ghost-team: the live source `ghost` (always down) and the bundle `ins`. */
  let ghostToken: string;
  /** groups: live-only: the live source `alpha` alone (nothing of the snapshot). */
  let liveOnlyToken: string;
  /** groups: live-tool-only: the live tool `beta__beta_whoami` alone. */
  let liveToolOnlyToken: string;
  /** groups: ghost-tool: the single live tool `ghost__lookup` (always down) and the bundle `ins`. */
  let ghostToolToken: string;
  /** groups: ghost-tool-only: the single live tool `ghost__lookup` alone. */
  let ghostToolOnlyToken: string;
  /** The snapshot upstream's published tool and prompt names, as its own server lists them. */
  let repoTools: string[];
  let repoPrompts: string[];

  beforeAll(async () => {
    as = await TestAuthorizationServer.start({
      resources: { [RESOURCE]: { scope: 'mcp' } },
      defaultResource: RESOURCE,
    });
    service = await TestToolService.start(manifest('ins', [tool({ name: 'ins.quote' })]));
    repo = await V1Upstream.start();
    alpha = await LiveUpstream.start({ stem: 'alpha' });
    beta = await LiveUpstream.start({ stem: 'beta', era: '2025' });
    const ghost = await closedPort();

    const direct = await connectV1(repo.url);
    try {
      // published as the registry publishes any upstream's names (docs/operations.md §10 "Names")
      const published = (originals: string[]) => [...publishNames('repo__', originals).values()];
      repoTools = published((await direct.listTools()).tools.map((t) => t.name));
      repoPrompts = published((await direct.listPrompts()).prompts.map((p) => p.name));
    } finally {
      await direct.close();
    }

    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('ins', service, 'ins.')], {
          upstreams: [
            upstream('repo', repo.url),
            upstream('alpha', alpha.url, { lists: 'live' }),
            upstream('beta', beta.url, { lists: 'live' }),
            upstream('ghost', `http://127.0.0.1:${ghost}/mcp`, {
              lists: 'live',
              timeouts: { connectMillis: 200, listMillis: 1000 },
            }),
          ],
        }),
        http: { modernEra: true },
        auth: {
          mode: 'jwt',
          issuer: as.issuer,
          audience: RESOURCE,
          jwksUrl: as.jwksUrl,
          algorithms: ['ES256'],
        },
        access: {
          rules: [
            { match: { claim: 'groups', value: 'alpha-team' }, sources: ['alpha', 'repo'] },
            {
              match: { claim: 'groups', value: 'beta-one' },
              sources: ['ins'],
              tools: ['beta__beta_whoami'],
            },
            { match: { claim: 'groups', value: 'ghost-team' }, sources: ['ghost', 'ins'] },
            { match: { claim: 'groups', value: 'live-only' }, sources: ['alpha'] },
            { match: { claim: 'groups', value: 'live-tool-only' }, tools: ['beta__beta_whoami'] },
            {
              match: { claim: 'groups', value: 'ghost-tool' },
              sources: ['ins'],
              tools: ['ghost__lookup'],
            },
            { match: { claim: 'groups', value: 'ghost-tool-only' }, tools: ['ghost__lookup'] },
          ],
        },
      },
      waitReady: true,
    });
    sourceToken = (await as.mint({ subject: 'ann', claims: { groups: ['alpha-team'] } }))
      .access_token;
    toolToken = (await as.mint({ subject: 'bob', claims: { groups: ['beta-one'] } })).access_token;
    ghostToken = (await as.mint({ subject: 'gus', claims: { groups: ['ghost-team'] } }))
      .access_token;
    liveOnlyToken = (await as.mint({ subject: 'liv', claims: { groups: ['live-only'] } }))
      .access_token;
    liveToolOnlyToken = (await as.mint({ subject: 'lto', claims: { groups: ['live-tool-only'] } }))
      .access_token;
    ghostToolToken = (await as.mint({ subject: 'gtt', claims: { groups: ['ghost-tool'] } }))
      .access_token;
    ghostToolOnlyToken = (
      await as.mint({ subject: 'gto', claims: { groups: ['ghost-tool-only'] } })
    ).access_token;
  }, 120_000);

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([as?.stop(), service?.stop(), repo?.stop(), alpha?.stop(), beta?.stop()]);
  });

  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  /** A 2025 request without a session (the gateway serves sessionless 2025 requests). */
  const legacy = (token: string, method: string, params: Record<string, unknown> = {}) =>
    rpc(gateway.mcpUrl, method, params, bearer(token));

  /** A 2026-07-28 request as the wire carries it (cache hints and `_meta` included). */
  const modern = (token: string, method: string, params: Record<string, unknown> = {}) =>
    rpc(
      gateway.mcpUrl,
      method,
      {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN,
          'io.modelcontextprotocol/clientCapabilities': {},
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
        },
      },
      { ...bearer(token), 'mcp-protocol-version': MODERN, 'mcp-method': method },
    );

  const expectedTools = () => ({
    source: [...repoTools, 'alpha__alpha_whoami', 'alpha__anon_alpha'].sort(),
    tool: ['beta__beta_whoami', 'ins.quote'],
    ghost: ['ins.quote'],
  });

  /** Both SDK clients, one per era: v1 (2025-11-25 session) and v2 pinned to 2026-07-28. */
  async function withClients(
    token: string,
    use: (client: AnyClient, era: '2025' | '2026') => Promise<void>,
  ): Promise<void> {
    for (const [kind, era] of [
      ['v1', '2025'],
      ['v2-pin', '2026'],
    ] as const) {
      const client = await connectClient(kind, gateway.mcpUrl, { headers: bearer(token) });
      try {
        await use(client, era);
      } finally {
        await client.close();
      }
    }
  }

  it('tools/list shows each caller exactly its grants, live and snapshot merged (SDK clients, both eras)', async () => {
    const expected = expectedTools();
    for (const [token, want] of [
      [sourceToken, expected.source],
      [toolToken, expected.tool],
      [ghostToken, expected.ghost],
    ] as const)
      await withClients(token, async (client, era) => {
        const { tools } = await client.listTools();
        expect({ era, tools: names(tools) }).toEqual({ era, tools: want });
      });
    // the live lists were really fetched per request (not served from the snapshot)
    expect(alpha.toolLists().length).toBeGreaterThan(0);
    expect(beta.toolLists().length).toBeGreaterThan(0);
  });

  it('tools/list on the wire: the same names in both eras, and 2026 lists are cacheScope private', async () => {
    const expected = expectedTools();
    for (const [token, want] of [
      [sourceToken, expected.source],
      [toolToken, expected.tool],
      [ghostToken, expected.ghost],
    ] as const) {
      const old = await legacy(token, 'tools/list');
      expect(old.status).toBe(200);
      expect(names(old.json.result.tools)).toEqual(want);
      const now = await modern(token, 'tools/list');
      expect(now.status).toBe(200);
      expect(names(now.json.result.tools)).toEqual(want);
      expect(now.json.result.cacheScope).toBe('private');
      const prompts = await modern(token, 'prompts/list');
      expect(prompts.status).toBe(200);
      expect(prompts.json.result.cacheScope).toBe('private');
    }
  });

  it('prompts/list shows live prompts only to a source grant, never for a single tool grant', async () => {
    const wantSource = [...repoPrompts, 'alpha__anon_brief'].sort();
    await withClients(sourceToken, async (client, era) => {
      const { prompts } = await client.listPrompts();
      expect({ era, prompts: names(prompts) }).toEqual({ era, prompts: wantSource });
    });
    for (const token of [toolToken, ghostToken]) {
      expect((await legacy(token, 'prompts/list')).json.result.prompts).toEqual([]);
      expect((await modern(token, 'prompts/list')).json.result.prompts).toEqual([]);
    }
    // and prompts/get of a live prompt outside the grant is an unknown prompt
    const denied = await legacy(toolToken, 'prompts/get', { name: 'beta__anon_brief' });
    const unknown = await legacy(toolToken, 'prompts/get', { name: 'beta__nope' });
    expect(denied.json.error.code).toBe(unknown.json.error.code);
    expect(denied.json.error.message.replace('beta__anon_brief', 'N')).toBe(
      unknown.json.error.message.replace('beta__nope', 'N'),
    );
  });

  it('partialSources names only the down live sources the caller is granted (both eras)', async () => {
    for (const send of [legacy, modern]) {
      for (const method of ['tools/list', 'prompts/list']) {
        const ghostCaller = await send(ghostToken, method);
        expect(ghostCaller.status).toBe(200);
        expect(ghostCaller.json.result._meta?.[PARTIAL_SOURCES]).toEqual([
          { id: 'ghost', kind: 'upstream', state: 'missing' },
        ]);
        // ghost is down for everyone, but not theirs: their lists carry no partialSources
        for (const token of [sourceToken, toolToken]) {
          const other = await send(token, method);
          expect(other.status).toBe(200);
          expect(other.json.result._meta?.[PARTIAL_SOURCES]).toBeUndefined();
          expect(other.text).not.toContain('ghost');
        }
      }
    }
    const now = await modern(ghostToken, 'tools/list');
    // a list missing a source is not to be reused
    expect(now.json.result.ttlMs).toBe(0);
  });

  it('a caller granted a single tool of a down live source hears of it in tools/list only, also when it is the only grant (both eras)', async () => {
    for (const send of [legacy, modern]) {
      const tools = await send(ghostToolToken, 'tools/list');
      expect(tools.status).toBe(200);
      expect(names(tools.json.result.tools)).toEqual(['ins.quote']);
      expect(tools.json.result._meta?.[PARTIAL_SOURCES]).toEqual([
        { id: 'ghost', kind: 'upstream', state: 'missing' },
      ]);
      // no prompt of ghost is granted: its prompts list is not theirs to miss
      const prompts = await send(ghostToolToken, 'prompts/list');
      expect(prompts.status).toBe(200);
      expect(prompts.json.result._meta?.[PARTIAL_SOURCES]).toBeUndefined();
      expect(prompts.text).not.toContain('ghost');

      // granted nothing else: an empty list that says why (the other sources answered)
      const alone = await send(ghostToolOnlyToken, 'tools/list');
      expect(alone.status).toBe(200);
      expect(alone.json.result.tools).toEqual([]);
      expect(alone.json.result._meta?.[PARTIAL_SOURCES]).toEqual([
        { id: 'ghost', kind: 'upstream', state: 'missing' },
      ]);
    }
  });

  /** The error of a tools/call, with the tool's name replaced, for comparing bodies. */
  function errorBody(answer: RawAnswer, name: string): unknown {
    expect(answer.json?.error).toBeDefined();
    return {
      status: answer.status,
      body: JSON.parse(answer.text.split(name).join('<name>')) as unknown,
    };
  }

  it('a live tool outside the grant is answered exactly like an unknown tool, after the same refresh (both eras)', async () => {
    const cases: [string, string, string][] = [
      // a single-tool grant on beta does not open beta's other tools, nor alpha's
      [toolToken, 'beta__anon_beta', 'beta__no_such_tool'],
      [toolToken, 'alpha__alpha_whoami', 'alpha__no_such_tool'],
      // a source grant on alpha does not open beta
      [sourceToken, 'beta__beta_whoami', 'beta__no_such_tool'],
    ];
    for (const send of [legacy, modern]) {
      for (const [token, denied, unknown] of cases) {
        const pulls = (): number => service.manifestRequests().length;
        const beforeDenied = pulls();
        const deniedAnswer = await send(token, 'tools/call', { name: denied, arguments: {} });
        const deniedPulls = pulls() - beforeDenied;
        const beforeUnknown = pulls();
        const unknownAnswer = await send(token, 'tools/call', { name: unknown, arguments: {} });
        expect(errorBody(deniedAnswer, denied)).toEqual(errorBody(unknownAnswer, unknown));
        // the same wait for a refresh of the sources: its time does not tell them apart either
        expect([denied, deniedPulls]).toEqual([denied, pulls() - beforeUnknown]);
      }
    }
    // the SDK clients see the same: an error, not a result
    await withClients(toolToken, async (client) => {
      await expect(client.callTool({ name: 'beta__anon_beta', arguments: {} })).rejects.toThrow(
        /not found/i,
      );
    });
  });

  it('a granted live tool call works, for the single tool grant and the source grant (both eras)', async () => {
    await withClients(toolToken, async (client, era) => {
      const answer = await client.callTool({ name: 'beta__beta_whoami', arguments: {} });
      expect({ era, content: answer.content }).toEqual({
        era,
        content: [{ type: 'text', text: 'anon' }],
      });
    });
    await withClients(sourceToken, async (client, era) => {
      const answer = await client.callTool({ name: 'alpha__anon_alpha', arguments: {} });
      expect({ era, content: answer.content }).toEqual({
        era,
        content: [{ type: 'text', text: 'alpha answered anon' }],
      });
      const brief = await client.getPrompt({ name: 'alpha__anon_brief' });
      expect(brief.messages[0]?.content).toEqual({ type: 'text', text: 'anon' });
    });
  });

  it('a caller granted only live entries is offered them: initialize capabilities and server/discover (both eras)', async () => {
    for (const [token, tools, prompts] of [
      [liveOnlyToken, ['alpha__alpha_whoami', 'alpha__anon_alpha'], ['alpha__anon_brief']],
      [liveToolOnlyToken, ['beta__beta_whoami'], []],
    ] as const) {
      await withClients(token, async (client, era) => {
        const offered = client.getServerCapabilities() ?? {};
        expect({ era, tools: offered.tools !== undefined }).toEqual({ era, tools: true });
        expect({ era, prompts: offered.prompts !== undefined }).toEqual({
          era,
          prompts: prompts.length > 0,
        });
        expect(names((await client.listTools()).tools)).toEqual(tools);
        if (prompts.length > 0)
          expect(names((await client.listPrompts()).prompts)).toEqual(prompts);
        const called = await client.callTool({ name: tools[0], arguments: {} });
        expect(called.isError).toBeFalsy();
      });
      // server/discover on the wire: the same capabilities, private to this caller
      const discover = await modern(token, 'server/discover');
      expect(discover.status).toBe(200);
      expect(discover.json.result.capabilities.tools).toBeDefined();
      expect(discover.json.result.capabilities.prompts !== undefined).toBe(prompts.length > 0);
      expect(discover.json.result.cacheScope).toBe('private');
    }
  });

  it('when a granted live source goes down, its caller hears of it and the others do not', async () => {
    await alpha.stop();
    for (const send of [legacy, modern]) {
      const mine = await send(sourceToken, 'tools/list');
      expect(mine.status).toBe(200);
      expect(names(mine.json.result.tools)).toEqual([...repoTools].sort());
      expect(mine.json.result._meta?.[PARTIAL_SOURCES]).toEqual([
        { id: 'alpha', kind: 'upstream', state: 'missing' },
      ]);
      const theirs = await send(toolToken, 'tools/list');
      expect(names(theirs.json.result.tools)).toEqual(expectedTools().tool);
      expect(theirs.json.result._meta?.[PARTIAL_SOURCES]).toBeUndefined();
    }
  });
});

describe('live lists honour mcp.access when every source of a list failed (docs/operations.md §13 "Access"; docs/operations.md §11 "Live lists")', () => {
  let as: TestAuthorizationServer;
  let gateway: GatewayProcess;
  let downOnly: string;

  beforeAll(async () => {
    as = await TestAuthorizationServer.start({
      resources: { [RESOURCE]: { scope: 'mcp' } },
      defaultResource: RESOURCE,
    });
    const down = await closedPort();
    const alsoDown = await closedPort();
    const dead = { lists: 'live', timeouts: { connectMillis: 200, listMillis: 1000 } };
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([], {
          upstreams: [
            upstream('down', `http://127.0.0.1:${down}/mcp`, dead),
            upstream('also-down', `http://127.0.0.1:${alsoDown}/mcp`, dead),
          ],
        }),
        http: { modernEra: true },
        auth: {
          mode: 'jwt',
          issuer: as.issuer,
          audience: RESOURCE,
          jwksUrl: as.jwksUrl,
          algorithms: ['ES256'],
        },
        access: { rules: [{ match: { subject: 'dana' }, sources: ['down'] }] },
      },
      waitReady: false,
    });
    downOnly = (await as.mint({ subject: 'dana' })).access_token;
    // the catalog is published once the first pulls were attempted (both fail)
    await waitFor(
      async () =>
        !/Registry unavailable/.test(
          JSON.stringify(
            (await rpc(gateway.mcpUrl, 'tools/list', {}, { authorization: `Bearer ${downOnly}` }))
              .json,
          ),
        ),
      60_000,
    );
  }, 120_000);

  afterAll(async () => {
    await gateway?.stop();
    await as?.stop();
  });

  it('the -32603 answer names only the failed sources granted to the caller', async () => {
    const answer = await rpc(
      gateway.mcpUrl,
      'tools/list',
      {},
      { authorization: `Bearer ${downOnly}` },
    );
    expect(answer.json.result).toBeUndefined();
    expect(answer.json.error.code).toBe(-32603);
    expect(answer.json.error.data).toEqual({ failedSources: ['down'] });
    expect(answer.text).not.toContain('also-down');
  });
});
