import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool, upstream } from '../support/fixtures';
import { ListenUpstream, STATUS_URI } from '../support/listen-upstream';
import { V1Upstream } from '../support/mcp-upstreams';
import { modernListen, modernRequest } from '../support/modern-rpc';
import { jwtAuthConfig, TestAuthorizationServer } from '../support/oidc-provider';
import { postRaw, rpc, STANDARD_HEADERS } from '../support/rpc';
import { connectV1, connectV2 } from '../support/sdk-clients';
import { TestToolService } from '../support/tool-service';

const RESOURCE = 'https://gateway.test/mcp';
const CLAIMS_RESOURCE = `${RESOURCE}/servers/claims`;

const SERVERS = [
  {
    id: 'claims',
    title: 'Claims team',
    instructions: 'Open and close claims; look things up in the docs.',
    tools: ['processing.claims.*'],
    sources: ['docs'],
  },
  { id: 'data', title: 'Data team', sources: ['wh', 'calc'] },
  { id: 'tagged', tags: ['claims'] },
  { id: 'reference', tags: ['reference'] },
];

/**
 * docs/operations.md §16 "Virtual servers": named views of the catalog on /mcp/servers/{id},
 * each with its own serverInfo and instructions, in both eras, composed with a caller's grant.
 */
describe('virtual servers: per-team views of one catalog', () => {
  let processing: TestToolService;
  let docs: TestToolService;
  let wh: V1Upstream;
  let calc: ListenUpstream;
  let gateway: GatewayProcess;
  const at = (id: string): string => gateway.mcpUrl.replace(/\/mcp$/, `/mcp/servers/${id}`);
  const names = async (url: string, headers: Record<string, string> = {}): Promise<string[]> =>
    ((await rpc(url, 'tools/list', {}, headers)).json.result.tools as { name: string }[]).map(
      (t) => t.name,
    );

  beforeAll(async () => {
    processing = await TestToolService.start(
      manifest('processing', [
        tool({ name: 'processing.claims.open', meta: { tags: ['claims', 'write'] } }),
        tool({ name: 'processing.claims.close' }),
        tool({ name: 'processing.admin.purge' }),
      ]),
    );
    docs = await TestToolService.start(manifest('docs', [tool({ name: 'docs.search' })]));
    wh = await V1Upstream.start();
    calc = await ListenUpstream.start(['echo']);
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig(
          [bundle('processing', processing, 'processing.'), bundle('docs', docs, 'docs.')],
          { upstreams: [upstream('wh', wh.url), upstream('calc', calc.url)] },
        ),
        virtualServers: SERVERS,
        toolTags: [{ source: 'docs', tools: 'docs.*', tags: ['reference'] }],
      },
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([processing?.stop(), docs?.stop(), wh?.stop(), calc?.stop()]);
  });

  it('a 2025 client on /mcp/servers/claims gets that server: its serverInfo, instructions and tools only', async () => {
    const client = await connectV1(at('claims'));
    try {
      expect(client.getServerVersion()).toMatchObject({
        name: 'mcp-gateway-test/claims',
        title: 'Claims team',
      });
      expect(client.getInstructions()).toBe(SERVERS[0]?.instructions);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([
        'docs.search',
        'processing.claims.close',
        'processing.claims.open',
      ]);
      // a tool outside the view is an unknown tool there, and its Tool Service is not called
      await expect(
        client.callTool({ name: 'processing.admin.purge', arguments: {} }),
      ).rejects.toThrow(/Tool not found/);
      expect(processing.toolRequests('processing.admin.purge')).toHaveLength(0);
      const ok = await client.callTool({ name: 'processing.claims.open', arguments: {} });
      expect(ok.isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });

  it('variant: a 2026 client on /mcp/servers/data gets the data view, serverInfo in every _meta', async () => {
    const discover = await modernRequest(at('data'), 'server/discover', {}, {});
    expect(discover.json.result._meta['io.modelcontextprotocol/serverInfo']).toMatchObject({
      name: 'mcp-gateway-test/data',
      title: 'Data team',
    });
    const list = await modernRequest(at('data'), 'tools/list', {}, {});
    const dataTools = list.json.result.tools.map((t: { name: string }) => t.name) as string[];
    expect(dataTools).toContain('wh__repo_search');
    expect(dataTools.every((n) => n.startsWith('wh__') || n.startsWith('calc__'))).toBe(true);
    expect(list.json.result._meta['io.modelcontextprotocol/serverInfo'].name).toBe(
      'mcp-gateway-test/data',
    );
    const call = await modernRequest(
      at('data'),
      'tools/call',
      { name: 'wh__repo_search', arguments: { query: 'x' } },
      {},
    );
    expect(call.json.result.isError).toBeFalsy();
    const outside = await modernRequest(
      at('data'),
      'tools/call',
      { name: 'docs.search', arguments: {} },
      {},
    );
    expect(outside.json.error?.message ?? outside.json.result?.content?.[0]?.text).toMatch(
      /not found/i,
    );
    // and the v2 SDK client sees the same view
    const client = await connectV2(at('data'));
    try {
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(
        [...dataTools].sort(),
      );
    } finally {
      await client.close();
    }
  });

  it("selects by tags: a manifest tool's _meta.tags and mcp.toolTags, which are never published", async () => {
    expect(await names(at('tagged'))).toEqual(['processing.claims.open']);
    expect(await names(at('reference'))).toEqual(['docs.search']);
    const listed = (await rpc(at('tagged'), 'tools/list', {})).json.result.tools[0];
    expect(listed._meta).toBeUndefined();
    expect(JSON.stringify(listed)).not.toContain('write');
  });

  it('/mcp stays the whole catalog with the gateway identity; an unknown server path is a 404', async () => {
    const all = await names(gateway.mcpUrl);
    expect(all).toEqual(
      expect.arrayContaining([
        'docs.search',
        'processing.admin.purge',
        'processing.claims.close',
        'processing.claims.open',
        'wh__repo_search',
      ]),
    );
    expect(all).toHaveLength(4 + (await names(at('data'))).length);
    expect(all).toContain('calc__echo');
    const init = await rpc(gateway.mcpUrl, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 't', version: '1' },
    });
    expect(init.json.result.serverInfo.name).toBe('mcp-gateway-test');
    expect(init.json.result.instructions).toBeUndefined();
    for (const path of ['/mcp/servers/nope', '/mcp/servers/', '/mcp/servers/claims/x']) {
      const answer = await postRaw(
        gateway.mcpUrl.replace(/\/mcp$/, path),
        '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
        STANDARD_HEADERS,
      );
      expect(answer.status).toBe(404);
    }
  });

  it("a listen on a server's path honours only resources of its view", async () => {
    const honoured = async (server: string): Promise<unknown> => {
      const stream = await modernListen(
        at(server),
        'L',
        { resourceSubscriptions: [STATUS_URI] },
        {},
      );
      try {
        const ack = await stream.waitForMessage(() => true);
        return ack.params.notifications;
      } finally {
        stream.close();
      }
    };
    expect(await honoured('data')).toEqual({ resourceSubscriptions: [STATUS_URI] });
    expect(await honoured('claims')).toEqual({});
  });

  it('GET /actuator/servers shows each server with its path and the tools its view holds', async () => {
    const body = (await (await fetch(`${gateway.managementUrl}/actuator/servers`)).json()) as {
      servers: { id: string; path: string; toolCount: number }[];
    };
    const dataCount = (await names(at('data'))).length;
    expect(dataCount).toBeGreaterThan(1);
    expect(body.servers.map((s) => [s.id, s.path, s.toolCount])).toEqual([
      ['claims', '/mcp/servers/claims', 3],
      ['data', '/mcp/servers/data', dataCount],
      ['tagged', '/mcp/servers/tagged', 1],
      ['reference', '/mcp/servers/reference', 1],
    ]);
  });
});

describe('virtual servers composed with mcp.access: a caller sees the intersection', () => {
  let as: TestAuthorizationServer;
  let processing: TestToolService;
  let docs: TestToolService;
  let gateway: GatewayProcess;
  let opsToken: string;

  beforeAll(async () => {
    as = await TestAuthorizationServer.start({
      resources: { [RESOURCE]: { scope: 'mcp' }, [CLAIMS_RESOURCE]: { scope: 'mcp' } },
      defaultResource: RESOURCE,
    });
    processing = await TestToolService.start(
      manifest('processing', [
        tool({ name: 'processing.claims.open' }),
        tool({ name: 'processing.claims.close' }),
        tool({ name: 'processing.admin.purge' }),
      ]),
    );
    docs = await TestToolService.start(manifest('docs', [tool({ name: 'docs.search' })]));
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([
          bundle('processing', processing, 'processing.'),
          bundle('docs', docs, 'docs.'),
        ]),
        virtualServers: [SERVERS[0]],
        auth: jwtAuthConfig(as, RESOURCE),
        access: {
          rules: [
            {
              match: { claim: 'groups', value: 'ops' },
              sources: ['docs'],
              tools: ['processing.claims.close', 'processing.admin.purge'],
            },
          ],
        },
      },
      waitReady: true,
    });
    opsToken = (await as.mint({ subject: 'ops1', claims: { groups: ['ops'] } })).access_token;
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([as?.stop(), processing?.stop(), docs?.stop()]);
  });

  it('lists and calls only what both the view and the grant hold; the server path needs the token too', async () => {
    const url = gateway.mcpUrl.replace(/\/mcp$/, '/mcp/servers/claims');
    const auth = { authorization: `Bearer ${opsToken}` };
    const listed = await rpc(url, 'tools/list', {}, auth);
    expect(listed.json.result.tools.map((t: { name: string }) => t.name).sort()).toEqual([
      'docs.search',
      'processing.claims.close',
    ]);
    // granted but outside the view, and in the view but not granted: both unknown there
    for (const name of ['processing.admin.purge', 'processing.claims.open']) {
      const denied = await rpc(url, 'tools/call', { name }, auth);
      expect(denied.json.error.message).toMatch(/Tool not found/);
      expect(processing.toolRequests(name)).toHaveLength(0);
    }
    // on /mcp the same token has its whole grant
    const whole = await rpc(gateway.mcpUrl, 'tools/list', {}, auth);
    expect(whole.json.result.tools.map((t: { name: string }) => t.name).sort()).toEqual([
      'docs.search',
      'processing.admin.purge',
      'processing.claims.close',
    ]);
    const anonymous = await rpc(url, 'tools/list', {});
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toContain(
      'resource_metadata="https://gateway.test/.well-known/oauth-protected-resource/mcp/servers/claims"',
    );
  });

  it("takes a token for the server's own URL there and nowhere else; each path has its own metadata", async () => {
    const url = gateway.mcpUrl.replace(/\/mcp$/, '/mcp/servers/claims');
    const token = (
      await as.mint({ subject: 'ops2', resource: CLAIMS_RESOURCE, claims: { groups: ['ops'] } })
    ).access_token;
    const auth = { authorization: `Bearer ${token}` };
    const there = await rpc(url, 'tools/list', {}, auth);
    expect(there.json.result.tools.map((t: { name: string }) => t.name).sort()).toEqual([
      'docs.search',
      'processing.claims.close',
    ]);
    const onGateway = await rpc(gateway.mcpUrl, 'tools/list', {}, auth);
    expect(onGateway.status).toBe(401);
    expect(onGateway.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const base = gateway.mcpUrl.replace(/\/mcp$/, '');
    const own = (await (
      await fetch(`${base}/.well-known/oauth-protected-resource/mcp/servers/claims`)
    ).json()) as { resource: string; authorization_servers: string[] };
    expect(own).toMatchObject({ resource: CLAIMS_RESOURCE, authorization_servers: [as.issuer] });
    const gatewayOwn = (await (
      await fetch(`${base}/.well-known/oauth-protected-resource/mcp`)
    ).json()) as { resource: string };
    expect(gatewayOwn.resource).toBe(RESOURCE);
    expect(
      (await fetch(`${base}/.well-known/oauth-protected-resource/mcp/servers/nope`)).status,
    ).toBe(404);
  });
});
