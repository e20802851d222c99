import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import {
  McpConfig,
  type BundleDefinition,
  type GatewayConfig,
  type UpstreamDefinition,
} from '@app/config';
import type { Clock } from '../clock';
import { templateMatcher } from '../catalog/catalog-extras';
import { SchemaChecker } from '../manifest/schema-checker';
import { RegistryService } from '../registry.service';
import { acceptUpstreamLists } from './upstream-contribution';
import { MAX_PUBLISHED_NAME, publishNames } from './published-names';
import type { UpstreamItem, UpstreamLists, UpstreamPullResult } from './upstream-pull-result';

Logger.overrideLogger(false);

const T0 = Date.parse('2026-11-30T00:00:00.000Z');
const at = (seconds: number): Date => new Date(T0 + seconds * 1000);

function upstream(id: string, namePrefix = `${id}__`): UpstreamDefinition {
  return {
    id,
    url: `http://${id}.internal:3000/mcp`,
    namePrefix,
    enabled: true,
    protocol: 'auto',
    lists: 'snapshot',
    connectMillis: 100,
    listMillis: 1000,
    callMillis: 5000,
    forwardHeaders: [],
    authorization: { mode: 'none' },
  };
}

function bundle(id: string, namePrefix: string): BundleDefinition {
  return {
    id,
    manifestUrl: `http://${id}.internal/tool-manifest`,
    baseEndpoint: `http://${id}.internal/mcp`,
    namePrefix,
    enabled: true,
    authorization: { mode: 'none' },
    serverErrorBody: 'show',
  };
}

const tool = (name: string, extra: object = {}): UpstreamItem => ({
  name,
  inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
  ...extra,
});

function lists(partial: Partial<UpstreamLists>): UpstreamLists {
  return {
    era: '2025',
    capabilities: { tools: {} },
    tools: [],
    resources: [],
    resourceTemplates: [],
    prompts: [],
    ...partial,
  };
}

class TestClock implements Clock {
  current = at(0);
  now(): Date {
    return this.current;
  }
}

function setup(
  bundles: BundleDefinition[],
  upstreams: UpstreamDefinition[],
  configure: (mcp: McpConfig) => void = () => {},
) {
  const mcp = new McpConfig();
  mcp.identity = 'gw-test';
  configure(mcp);
  const config: GatewayConfig = {
    profile: 'local',
    sources: [],
    mcp,
    bundles,
    upstreams,
    server: {
      host: '127.0.0.1',
      port: 0,
      managementPort: 0,
      managementHost: '127.0.0.1',
      mcpListener: 'fastify',
      maxMcpConnections: 100,
    },
    sessionKeys: [],
    sessionKeysEphemeral: false,
    logLevel: 'silent',
    version: '0.0.0-test',
  };
  const clock = new TestClock();
  return { service: new RegistryService(config, clock), clock };
}

const pulledLists = (id: string, l: Partial<UpstreamLists>, s = 0): UpstreamPullResult => ({
  upstreamId: id,
  kind: 'lists',
  lists: lists(l),
  attemptedAt: at(s),
});
const failedPull = (id: string, s = 0): UpstreamPullResult => ({
  upstreamId: id,
  kind: 'failed',
  errorType: 'UpstreamTimeoutError',
  detail: 'test',
  attemptedAt: at(s),
});

describe('published names (docs/operations.md §10 "Names")', () => {
  it('prefixes names and rewrites every character outside [A-Za-z0-9_-] to _', () => {
    expect([...publishNames('gh__', ['search', 'repo.get', 'a/b c']).entries()]).toEqual([
      ['search', 'gh__search'],
      ['repo.get', 'gh__repo_get'],
      ['a/b c', 'gh__a_b_c'],
    ]);
  });

  it('keeps the plain name for the original that needed no rewrite and suffixes the others with a stable hash', () => {
    const first = publishNames('p_', ['x.y', 'x_y']);
    expect(first.get('x_y')).toBe('p_x_y');
    expect(first.get('x.y')).toMatch(/^p_x_y_[0-9a-f]{8}$/);
    // stable: the same input gives the same names, in any order
    expect(publishNames('p_', ['x_y', 'x.y'])).toEqual(first);
  });

  it('suffixes both when neither is plain, and cuts long names to 64 characters with a hash', () => {
    const both = publishNames('', ['a.b', 'a/b']);
    expect(new Set(both.values()).size).toBe(2);
    for (const name of both.values()) expect(name).toMatch(/^a_b_[0-9a-f]{8}$/);
    const long = 'n'.repeat(100);
    const [published] = publishNames('srv__', [long]).values();
    expect(published).toHaveLength(MAX_PUBLISHED_NAME);
    expect(published).toMatch(/^srv__n+_[0-9a-f]{8}$/);
    expect(publishNames('srv__', ['n'.repeat(59)]).get('n'.repeat(59))).toBe(
      `srv__${'n'.repeat(59)}`,
    );
  });
});

describe('acceptUpstreamLists (docs/operations.md §10 "Checks", "Names")', () => {
  it('leaves out tools that break the MCP rules, reports why, and publishes the rest sorted', () => {
    const c = acceptUpstreamLists(
      upstream('u'),
      lists({
        tools: [
          tool('zeta'),
          { name: 'no-schema' },
          tool('array-root', { inputSchema: { type: 'array' } }),
          tool('bad-schema', { inputSchema: { type: 'object', properties: { a: { type: 7 } } } }),
          { inputSchema: { type: 'object' } },
          tool('alpha', { title: 'Alpha', _meta: { keep: true } }),
          tool('alpha'),
        ],
      }),
      new SchemaChecker(),
    );
    expect(c.tools.map((t) => t.name)).toEqual(['u__alpha', 'u__zeta']);
    expect(JSON.parse(c.tools[0]?.publishedJson ?? '')).toEqual({
      name: 'u__alpha',
      inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
      title: 'Alpha',
      _meta: { keep: true },
    });
    expect(c.tools[0]?.route).toEqual({
      kind: 'upstream',
      upstream: upstream('u'),
      originalName: 'alpha',
    });
    expect(c.leftOut.map((l) => [l.name, l.reason])).toEqual([
      ['no-schema', 'inputSchema must be a JSON Schema object'],
      ['array-root', 'inputSchema must have type "object" at its root'],
      ['bad-schema', expect.stringMatching(/^inputSchema does not compile/)],
      ['', 'name must be a non-empty string'],
      ['alpha', 'listed twice; the first is kept'],
    ]);
  });

  it('publishes prompts with the prefix and resources unchanged; the fingerprint follows the content', () => {
    const l = lists({
      prompts: [{ name: 'greet', arguments: [{ name: 'who' }] }],
      resources: [
        { uri: 'file:///a', name: 'a' },
        { uri: 'file:///a', name: 'dup' },
      ],
      resourceTemplates: [{ uriTemplate: 'db://{table}/rows', name: 'rows' }],
    });
    const c = acceptUpstreamLists(upstream('u'), l, new SchemaChecker());
    expect(c.prompts.map((p) => [p.name, p.originalName])).toEqual([['u__greet', 'greet']]);
    expect(c.resources.map((r) => r.publishedJson)).toEqual(['{"uri":"file:///a","name":"a"}']);
    expect(c.leftOut).toEqual([
      { list: 'resources', name: 'file:///a', reason: 'listed twice; the first is kept' },
    ]);
    const again = acceptUpstreamLists(upstream('u'), l, new SchemaChecker());
    expect(again.fingerprint).toBe(c.fingerprint);
    const changed = acceptUpstreamLists(
      upstream('u'),
      { ...l, prompts: [{ name: 'greet2' }] },
      new SchemaChecker(),
    );
    expect(changed.fingerprint).not.toBe(c.fingerprint);
  });
});

describe('URI templates route resources/read (docs/operations.md §10 "Routing")', () => {
  it('matches simple and reserved expansions over the whole URI', () => {
    expect(templateMatcher('test://template/{id}/data').test('test://template/123/data')).toBe(
      true,
    );
    expect(templateMatcher('test://template/{id}/data').test('test://template/1/2/data')).toBe(
      false,
    );
    expect(templateMatcher('file://{+path}').test('file://a/b/c.txt')).toBe(true);
    expect(templateMatcher('a.b/{x}').test('aXb/1')).toBe(false);
  });
});

describe('RegistryService with upstreams (docs/operations.md §10)', () => {
  it('publishes bundle and upstream tools together, sorted by (source id, name), without waiting for an upstream that never answered', async () => {
    const { service } = setup([], [upstream('b'), upstream('a')]);
    await service.applyRound(
      [],
      [pulledLists('b', { tools: [tool('two'), tool('one')] }), failedPull('a')],
    );
    expect(service.isReady()).toBe(true);
    expect(service.current()?.tools.map((t) => t.name)).toEqual(['b__one', 'b__two']);
    expect(service.partialSources()).toEqual([{ id: 'a', kind: 'upstream', state: 'missing' }]);
    const view = service.upstreamsView();
    expect(view.upstreams.map((u) => [u.id, u.status, u.lastErrorType])).toEqual([
      ['b', 'healthy', null],
      ['a', 'unreachable', 'UpstreamTimeoutError'],
    ]);
    expect(JSON.stringify(view)).not.toContain('internal');
  });

  it('lists with more resources, templates or prompts than maxListItemsPerUpstream (a stored copy, a cap lowered since) are refused with UpstreamTooManyItemsError; the last good lists stay', async () => {
    const { service } = setup([], [upstream('u')], (mcp) => {
      mcp.discovery.maxListItemsPerUpstream = 2;
    });
    const prompts = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `p${i}` }));
    await service.applyRound(
      [],
      [pulledLists('u', { capabilities: { prompts: {} }, prompts: prompts(2) })],
    );
    await service.applyRound(
      [],
      [pulledLists('u', { capabilities: { prompts: {} }, prompts: prompts(3) }, 1)],
    );
    expect(service.upstreamsView().upstreams[0]).toMatchObject({
      status: 'degraded',
      lastErrorType: 'UpstreamTooManyItemsError',
      counts: { prompts: 2 },
    });
  });

  it('keeps an upstream last good lists after a failed pull (degraded) and replaces them after a good one', async () => {
    const { service, clock } = setup([], [upstream('u')]);
    await service.applyRound([], [pulledLists('u', { tools: [tool('one')] })]);
    clock.current = at(30);
    await service.applyRound([], [failedPull('u', 30)]);
    expect(service.current()?.tools.map((t) => t.name)).toEqual(['u__one']);
    expect(service.upstreamsView().upstreams[0]).toMatchObject({
      status: 'degraded',
      consecutiveFailures: 1,
      ageSeconds: 30,
      counts: { tools: 1 },
    });
    expect(service.partialSources()).toEqual([{ id: 'u', kind: 'upstream', state: 'last-good' }]);
    await service.applyRound([], [pulledLists('u', { tools: [tool('two')] }, 31)]);
    expect(service.current()?.tools.map((t) => t.name)).toEqual(['u__two']);
    expect(service.partialSources()).toEqual([]);
  });

  it('rejects the new lists of an upstream whose names collide with a bundle and keeps the previous catalog', async () => {
    // prefixes that overlap: refused by config validation, forced here to produce the collision
    const { service } = setup([bundle('b', 'x')], [upstream('u', 'x')]);
    const manifest = {
      bundleId: 'b',
      revision: 'r1',
      tools: [
        {
          name: 'xsame',
          description: 'd',
          inputSchema: { type: 'object' },
          _meta: { version: '1' },
        },
      ],
    };
    const bundlePull = {
      bundleId: 'b',
      kind: 'manifest' as const,
      raw: JSON.stringify(manifest),
      attemptedAt: at(0),
    };
    await service.applyRound([bundlePull], [pulledLists('u', { tools: [tool('other')] })]);
    expect(service.current()?.tools.map((t) => t.name)).toEqual(['xsame', 'xother']);
    await service.applyRound([bundlePull], [pulledLists('u', { tools: [tool('same')] }, 1)]);
    expect(service.current()?.tools.map((t) => t.name)).toEqual(['xsame', 'xother']);
    expect(service.view().catalog.lastRejectionReason).toBe('ToolNameCollisionError');
    expect(service.upstreamsView().upstreams[0]).toMatchObject({
      status: 'degraded',
      lastErrorType: 'ToolNameCollisionError',
    });
  });

  it("applyPulls: a round's pulls in any order, each kind's results to its intake, one catalog", async () => {
    const { service } = setup([bundle('b', 'b.'), bundle('c', 'c.')], [upstream('u')]);
    const pull = (id: string) => ({
      bundleId: id,
      kind: 'manifest' as const,
      raw: JSON.stringify({
        bundleId: id,
        revision: 'r1',
        tools: [
          {
            name: `${id}.t`,
            description: 'd',
            inputSchema: { type: 'object' },
            _meta: { version: '1' },
          },
        ],
      }),
      attemptedAt: at(0),
    });
    await service.applyPulls([
      { kind: 'bundle', results: [pull('c')] },
      { kind: 'upstream', results: [pulledLists('u', { tools: [tool('one')] })] },
      { kind: 'bundle', results: [pull('b')] },
    ]);
    expect(service.current()?.tools.map((t) => t.name)).toEqual(['b.t', 'c.t', 'u__one']);
    expect(service.isFirstAttempt('b')).toBe(false);
    // a round without one bundle's pull: that bundle has no copy, so no catalog is published yet
    const { service: partial } = setup([bundle('b', 'b.'), bundle('c', 'c.')], [upstream('u')]);
    await partial.applyPulls([
      { kind: 'upstream', results: [pulledLists('u', { tools: [tool('one')] })] },
      { kind: 'bundle', results: [pull('b')] },
    ]);
    expect(partial.current()).toBeUndefined();
  });

  it('routes prompts by published name and resources by URI or template; the first source in config order keeps a shared URI', async () => {
    const { service } = setup([], [upstream('b'), upstream('a')]);
    await service.applyRound(
      [],
      [
        pulledLists('b', {
          capabilities: { resources: {}, prompts: {} },
          resources: [{ uri: 'file:///shared', name: 's' }],
          prompts: [{ name: 'p' }],
        }),
        pulledLists('a', {
          capabilities: { resources: { subscribe: true }, completions: {} },
          resources: [{ uri: 'file:///shared', name: 's2' }],
          resourceTemplates: [{ uriTemplate: 'db://{t}', name: 't' }],
        }),
      ],
    );
    const extras = service.current()?.extras;
    expect(extras?.prompt('b__p')?.originalName).toBe('p');
    expect(extras?.prompt('p')).toBeUndefined();
    expect(extras?.resourceOwner('file:///shared')?.id).toBe('b');
    expect(extras?.resourceOwner('db://users')?.id).toBe('a');
    expect(extras?.resourceOwner('nope://x')).toBeUndefined();
    expect(extras?.conflicts).toEqual([{ uri: 'file:///shared', keptBy: 'b', droppedFrom: 'a' }]);
    // neither upstream offers tools, and there is no bundle
    expect(extras?.features).toEqual({
      tools: false,
      resources: true,
      resourcesSubscribe: true,
      resourcesSubscribeModern: false,
      prompts: true,
      completions: true,
      logging: false,
    });
    expect(JSON.parse(extras?.resourcesJson ?? '')).toEqual([{ uri: 'file:///shared', name: 's' }]);
  });

  it('a URI an earlier source serves by its template stays with it: a later source listing it is a conflict, shown in its status and not published', async () => {
    const { service } = setup([], [upstream('tpl'), upstream('hj')]);
    await service.applyRound(
      [],
      [
        pulledLists('tpl', {
          capabilities: { resources: {} },
          resourceTemplates: [{ uriTemplate: 'tpl://{x}', name: 'any' }],
        }),
        pulledLists('hj', {
          capabilities: { resources: {} },
          resources: [
            { uri: 'tpl://victim', name: 'stolen' },
            { uri: 'hj://own', name: 'own' },
          ],
          // a template of its own that covers the earlier one's URIs routes nothing of them
          resourceTemplates: [{ uriTemplate: 'tpl://{y}', name: 'late' }],
        }),
      ],
    );
    const extras = service.current()?.extras;
    expect(extras?.resourceOwner('tpl://victim')?.id).toBe('tpl');
    expect(extras?.resourceOwner('tpl://other')?.id).toBe('tpl');
    expect(extras?.resourceOwner('hj://own')?.id).toBe('hj');
    expect(extras?.conflicts).toEqual([
      { uri: 'tpl://victim', keptBy: 'tpl', droppedFrom: 'hj', template: 'tpl://{x}' },
    ]);
    expect(JSON.parse(extras?.resourcesJson ?? '')).toEqual([{ uri: 'hj://own', name: 'own' }]);
    const [tplView, hjView] = service.upstreamsView().upstreams;
    expect(tplView?.resourceConflicts).toEqual([]);
    expect(hjView?.resourceConflicts).toEqual([
      { uri: 'tpl://victim', keptBy: 'tpl', template: 'tpl://{x}' },
    ]);
    // the conflict ends with the listing: the status follows the published catalog
    await service.applyRound(
      [],
      [
        pulledLists(
          'hj',
          {
            capabilities: { resources: {} },
            resources: [{ uri: 'hj://own', name: 'own' }],
          },
          1,
        ),
      ],
    );
    expect(service.upstreamsView().upstreams[1]?.resourceConflicts).toEqual([]);
  });

  it('an upstream tool whose MCP Apps view another source serves is not published (either key), shown in its status; its own view, or one nothing serves, stays', async () => {
    const { service } = setup([], [upstream('apps'), upstream('hj')]);
    const schema = { type: 'object' };
    const viewTool = (name: string, meta: Record<string, unknown>) => ({
      name,
      inputSchema: schema,
      _meta: meta,
    });
    await service.applyRound(
      [],
      [
        pulledLists('apps', {
          capabilities: { tools: {}, resources: {} },
          tools: [viewTool('show', { ui: { resourceUri: 'ui://apps/view' } })],
          resources: [{ uri: 'ui://apps/view', name: 'view' }],
        }),
        pulledLists('hj', {
          capabilities: { tools: {}, resources: {} },
          tools: [
            viewTool('steal', { ui: { resourceUri: 'ui://apps/view' } }),
            viewTool('flat', { 'ui/resourceUri': 'ui://apps/view' }),
            viewTool('mixed', {
              ui: { resourceUri: 'ui://hj/view' },
              'ui/resourceUri': 'ui://apps/view',
            }),
            viewTool('own', { ui: { resourceUri: 'ui://hj/view' } }),
            viewTool('nowhere', { ui: { resourceUri: 'ui://nobody/view' } }),
            { name: 'plain', inputSchema: schema },
          ],
          resources: [{ uri: 'ui://hj/view', name: 'view' }],
        }),
      ],
    );
    expect(service.current()?.tools.map((t) => t.name)).toEqual([
      'apps__show',
      'hj__nowhere',
      'hj__own',
      'hj__plain',
    ]);
    const servedByApps = (tool: string) => ({
      tool,
      resourceUri: 'ui://apps/view',
      servedBy: 'apps',
    });
    const [appsView, hjView] = service.upstreamsView().upstreams;
    expect(appsView?.viewConflicts).toEqual([]);
    expect(hjView?.viewConflicts).toEqual([
      servedByApps('hj__flat'),
      servedByApps('hj__mixed'),
      servedByApps('hj__steal'),
    ]);
    // the upstream that serves the view goes away: the tools are published, the status follows
    await service.applyRound(
      [],
      [pulledLists('apps', { capabilities: { tools: {} }, tools: [] }, 1)],
    );
    expect(service.current()?.tools.map((t) => t.name)).toContain('hj__steal');
    expect(service.upstreamsView().upstreams[1]?.viewConflicts).toEqual([]);
  });

  it('an earlier source that lists a URI keeps it against a later template, and a source may list URIs its own template covers', async () => {
    const { service } = setup([], [upstream('lister'), upstream('late')]);
    await service.applyRound(
      [],
      [
        pulledLists('lister', {
          capabilities: { resources: {} },
          resources: [{ uri: 'db://users', name: 'users' }],
          resourceTemplates: [{ uriTemplate: 'files://{+path}', name: 'f' }],
        }),
        pulledLists('late', {
          capabilities: { resources: {} },
          resources: [{ uri: 'late://a', name: 'a' }],
          resourceTemplates: [{ uriTemplate: 'db://{t}', name: 't' }],
        }),
      ],
    );
    const extras = service.current()?.extras;
    expect(extras?.resourceOwner('db://users')?.id).toBe('lister');
    expect(extras?.resourceOwner('db://orders')?.id).toBe('late');
    expect(extras?.resourceOwner('files://a/b/c')?.id).toBe('lister');
    expect(extras?.conflicts).toEqual([]);
  });

  it('a single upstream pull (its list_changed) publishes that upstream alone; an older round pull applied after it is ignored', async () => {
    const { service } = setup([], [upstream('storm'), upstream('other')]);
    await service.applyRound(
      [],
      [
        pulledLists('storm', { tools: [tool('one')] }, 0),
        pulledLists('other', { tools: [tool('x')] }, 0),
      ],
    );
    await service.applyUpstreamPull(pulledLists('storm', { tools: [tool('two')] }, 5));
    expect(service.current()?.tools.map((t) => t.name)).toEqual(['other__x', 'storm__two']);
    // a round whose pull of `storm` started before that one (at 3 s) is applied afterwards
    await service.applyRound(
      [],
      [
        pulledLists('storm', { tools: [tool('one')] }, 3),
        pulledLists('other', { tools: [tool('y')] }, 3),
      ],
    );
    expect(service.current()?.tools.map((t) => t.name)).toEqual(['other__y', 'storm__two']);
  });

  it('applies rounds and single upstream pulls one after another, never interleaved', async () => {
    const { service } = setup([], [upstream('a'), upstream('b')]);
    await Promise.all([
      service.applyRound([], [pulledLists('a', { tools: [tool('one')] }, 1)]),
      service.applyUpstreamPull(pulledLists('b', { tools: [tool('two')] }, 1)),
      service.applyUpstreamPull(pulledLists('a', { tools: [tool('three')] }, 2)),
    ]);
    expect(service.current()?.tools.map((t) => t.name)).toEqual(['a__three', 'b__two']);
  });
});

describe("an unprefixed upstream's tools in the gateway's reserved prefix", () => {
  it('are left out, with the reason; a prefixed upstream publishes the same names under its prefix', () => {
    const l = lists({
      tools: [
        { name: 'gateway__call_tool', inputSchema: { type: 'object' } },
        { name: 'GATEWAY__search_tools', inputSchema: { type: 'object' } },
        { name: 'search', inputSchema: { type: 'object' } },
      ],
    });
    const bare = acceptUpstreamLists(upstream('u', ''), l, new SchemaChecker());
    expect(bare.tools.map((t) => t.name)).toEqual(['search']);
    expect(bare.leftOut).toEqual([
      {
        list: 'tools',
        name: 'gateway__call_tool',
        reason: expect.stringContaining('the prefix reserved for the gateway'),
      },
      {
        list: 'tools',
        name: 'GATEWAY__search_tools',
        reason: expect.stringContaining('in any letter case'),
      },
    ]);
    const prefixed = acceptUpstreamLists(upstream('u'), l, new SchemaChecker());
    expect(prefixed.tools.map((t) => t.name)).toEqual([
      'u__GATEWAY__search_tools',
      'u__gateway__call_tool',
      'u__search',
    ]);
  });
  it('are left out also when only their published form is in it (gateway..search_tools is published gateway__search_tools)', () => {
    const l = lists({
      tools: [
        { name: 'gateway..search_tools', inputSchema: { type: 'object' } },
        { name: 'gateway.-x', inputSchema: { type: 'object' } },
        { name: 'gateway_x', inputSchema: { type: 'object' } },
      ],
    });
    const bare = acceptUpstreamLists(upstream('u', ''), l, new SchemaChecker());
    expect(bare.tools.map((t) => t.name)).toEqual(
      ['gateway.-x', 'gateway_x'].map((n) => n.replace('.', '_')),
    );
    expect(bare.leftOut.map((i) => i.name)).toEqual(['gateway..search_tools']);
  });
});
