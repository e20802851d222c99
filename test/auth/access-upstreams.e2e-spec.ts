import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool, upstream } from '../support/fixtures';
import { V1Upstream } from '../support/mcp-upstreams';
import { AppsUpstream, RECEIPTS_EXTENSION, UI_EXTENSION } from '../support/apps-upstream';
import { TestAuthorizationServer } from '../support/oidc-provider';
import { rpc } from '../support/rpc';
import { connectV1 } from '../support/sdk-clients';
import { TestToolService } from '../support/tool-service';

const RESOURCE = 'https://gateway.test/mcp';

/**
 * docs/operations.md §13 "Access" with an upstream MCP server (v1 SDK) beside a bundle: a source
 * grant opens the upstream's tools, prompts, resources and templates, and initialize's capabilities
 * follow the grant; prompts/get and resources/read outside it are answered as for unknown names.
 */
describe('mcp.access over upstream prompts, resources and capabilities', () => {
  let as: TestAuthorizationServer;
  let repo: V1Upstream;
  let apps: AppsUpstream;
  let claims: TestToolService;
  let gateway: GatewayProcess;
  let withRepo: string;
  let bundleOnly: string;
  let appsOnly: string;

  beforeAll(async () => {
    as = await TestAuthorizationServer.start({
      resources: { [RESOURCE]: { scope: 'mcp' } },
      defaultResource: RESOURCE,
    });
    repo = await V1Upstream.start();
    apps = await AppsUpstream.start();
    claims = await TestToolService.start(manifest('claims', [tool({ name: 'claims.open' })]));
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('claims', claims, 'claims.')], {
          upstreams: [upstream('repo', repo.url), upstream('apps', apps.url)],
        }),
        auth: {
          mode: 'jwt',
          issuer: as.issuer,
          audience: RESOURCE,
          jwksUrl: as.jwksUrl,
          algorithms: ['ES256'],
        },
        access: {
          rules: [
            { match: { claim: 'groups', value: 'dev' }, sources: ['repo', 'claims'] },
            { match: { claim: 'groups', value: 'ops' }, sources: ['claims'] },
            { match: { claim: 'groups', value: 'apps' }, sources: ['apps'] },
          ],
        },
      },
      waitReady: true,
    });
    withRepo = (await as.mint({ subject: 'dev1', claims: { groups: ['dev'] } })).access_token;
    bundleOnly = (await as.mint({ subject: 'ops1', claims: { groups: ['ops'] } })).access_token;
    appsOnly = (await as.mint({ subject: 'apps1', claims: { groups: ['apps'] } })).access_token;
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([as?.stop(), repo?.stop(), apps?.stop(), claims?.stop()]);
  });

  const call = (token: string, method: string, params: Record<string, unknown> = {}) =>
    rpc(gateway.mcpUrl, method, params, { authorization: `Bearer ${token}` });

  it('lists: the granted caller sees the upstream entries, the other sees none of them', async () => {
    const devTools = (await call(withRepo, 'tools/list')).json.result.tools.map(
      (t: { name: string }) => t.name,
    );
    expect(devTools).toContain('claims.open');
    expect(devTools.some((n: string) => n.startsWith('repo__'))).toBe(true);
    expect((await call(bundleOnly, 'tools/list')).json.result.tools).toEqual([
      expect.objectContaining({ name: 'claims.open' }),
    ]);
    for (const [method, key] of [
      ['prompts/list', 'prompts'],
      ['resources/list', 'resources'],
      ['resources/templates/list', 'resourceTemplates'],
    ] as const) {
      expect((await call(withRepo, method)).json.result[key].length).toBeGreaterThan(0);
      expect((await call(bundleOnly, method)).json.result[key]).toEqual([]);
    }
  });

  it('initialize offers only what the caller may use', async () => {
    const dev = await connectV1(gateway.mcpUrl, { authorization: `Bearer ${withRepo}` });
    const ops = await connectV1(gateway.mcpUrl, { authorization: `Bearer ${bundleOnly}` });
    try {
      expect(dev.getServerCapabilities()).toMatchObject({
        tools: {},
        prompts: {},
        resources: {},
        completions: {},
      });
      expect(Object.keys(ops.getServerCapabilities() ?? {})).toEqual(['tools']);
    } finally {
      await dev.close();
      await ops.close();
    }
  });

  it('initialize declares the extensions of the granted upstreams only (docs/operations.md §10 "Extensions")', async () => {
    const granted = await connectV1(gateway.mcpUrl, { authorization: `Bearer ${appsOnly}` });
    const other = await connectV1(gateway.mcpUrl, { authorization: `Bearer ${withRepo}` });
    try {
      expect(granted.getServerCapabilities()?.extensions).toEqual({
        [UI_EXTENSION]: {},
        [RECEIPTS_EXTENSION]: { version: 2 },
      });
      expect(other.getServerCapabilities()).not.toHaveProperty('extensions');
    } finally {
      await granted.close();
      await other.close();
    }
  });

  it('prompts/get and resources/read outside the grant answer exactly as unknown ones, with no upstream call of them and the same refresh', async () => {
    const prompts = (await call(withRepo, 'prompts/list')).json.result.prompts as {
      name: string;
    }[];
    const promptName = prompts[0]!.name;
    const listPulls = (): number => repo.requestsFor('prompts/list').length;
    const asked = (): number =>
      repo.requestsFor('prompts/get').length + repo.requestsFor('resources/read').length;
    const askedBefore = asked();
    const before = listPulls();
    const denied = await call(bundleOnly, 'prompts/get', { name: promptName, arguments: {} });
    const read = await call(bundleOnly, 'resources/read', { uri: 'repo://readme' });
    const deniedPulls = listPulls() - before;
    // neither reached the upstream as a request of the caller's
    expect(asked()).toBe(askedBefore);
    const beforeUnknown = listPulls();
    const unknown = await call(bundleOnly, 'prompts/get', { name: 'repo__nope', arguments: {} });
    // ...and waited for the refresh an unknown name waits for (one round per miss: two, one)
    expect([deniedPulls, listPulls() - beforeUnknown]).toEqual([2, 1]);
    expect(denied.status).toBe(unknown.status);
    expect(denied.json.error.code).toBe(unknown.json.error.code);
    expect(denied.json.error.message.replace(promptName, 'N')).toBe(
      unknown.json.error.message.replace('repo__nope', 'N'),
    );
    const readUnknown = await call(bundleOnly, 'resources/read', { uri: 'nothing://here' });
    expect(read.json.error.code).toBe(readUnknown.json.error.code);
    expect(read.json.error.message.replace('repo://readme', 'U')).toBe(
      readUnknown.json.error.message.replace('nothing://here', 'U'),
    );
    // the granted caller reads it
    const ok = await call(withRepo, 'resources/read', { uri: 'repo://readme' });
    expect(ok.json.result.contents.length).toBeGreaterThan(0);
  });
});
