import type { GatewayConfig } from '@app/config';
import type { CallerAccess } from '@app/identity';
import type { CatalogSnapshot, CatalogTool, RegistryService } from '@app/registry';
import { ToolPattern, VirtualServers } from './virtual-servers.service';

function tool(name: string, sourceId: string, tags?: string[]): CatalogTool {
  return { name, sourceId, ...(tags === undefined ? {} : { tags }) } as unknown as CatalogTool;
}

const catalog = {
  tools: [
    tool('processing.claims.open', 'processing', ['claims']),
    tool('processing.claimsXopen', 'processing'),
    tool('processing.admin.purge', 'processing'),
    tool('docs.search', 'docs'),
    tool('wh__query', 'wh'),
  ],
} as unknown as CatalogSnapshot;

function servers(): VirtualServers {
  return new VirtualServers(
    {
      version: '1',
      bundles: [{ id: 'processing' }, { id: 'docs' }],
      upstreams: [{ id: 'wh' }],
      mcp: {
        identity: 'gw',
        toolTags: [{ source: 'docs', tools: 'docs.*', tags: ['reference'] }],
        virtualServers: [
          { id: 'claims', tools: ['processing.claims.*'], sources: ['docs'], tags: [] },
          { id: 'ref', tools: [], sources: [], tags: ['reference', 'claims'] },
        ],
      },
    } as unknown as GatewayConfig,
    { current: () => catalog } as unknown as RegistryService,
  );
}

const allowed = (access: CallerAccess | undefined): string[] =>
  catalog.tools
    .filter(
      (t) =>
        access === undefined ||
        access.all ||
        access.sources.has(t.sourceId) ||
        access.tools.has(t.name),
    )
    .map((t) => t.name);

describe('VirtualServers: a path names a view; a grant is narrowed to it (docs/operations.md §16)', () => {
  it('routes /mcp and configured /mcp/servers/{id} only', () => {
    const s = servers();
    expect(s.serverOfPath('/mcp')).toBeNull();
    expect(s.serverOfPath('/mcp/servers/claims')).toBe('claims');
    for (const path of ['/mcp/servers/nope', '/mcp/servers/', '/mcp/servers/claims/x', '/mcpx'])
      expect(s.serverOfPath(path)).toBeUndefined();
  });

  it('matches patterns literally but for *, and selects by manifest and config tags', () => {
    const s = servers();
    expect(allowed(s.narrow(undefined, 'claims'))).toEqual([
      'processing.claims.open',
      'docs.search',
    ]);
    expect(allowed(s.narrow(undefined, 'ref'))).toEqual(['processing.claims.open', 'docs.search']);
    expect(s.narrow(undefined, undefined)).toBeUndefined();
  });

  it('a caller no access rule matches gets nothing of the view, never the whole view cached under the same key', () => {
    const s = servers();
    // the whole view first: it is cached per catalog under its key
    expect(allowed(s.narrow(undefined, 'claims'))).toEqual([
      'processing.claims.open',
      'docs.search',
    ]);
    // the key of a grant that no rule matched is "" (AccessPolicy.accessFor)
    const none: CallerAccess = { all: false, key: '', sources: new Set(), tools: new Set() };
    const narrowed = s.narrow(none, 'claims');
    expect(allowed(narrowed)).toEqual([]);
    expect(narrowed).toMatchObject({ all: false, key: '@claims#config' });
    expect(s.narrow(undefined, 'claims')).toMatchObject({ key: '*@claims#config' });
  });

  it('a restricted caller keeps what both its grant and the view hold, under a key of both', () => {
    const s = servers();
    const grant: CallerAccess = {
      all: false,
      key: '0',
      sources: new Set(['docs', 'wh']),
      tools: new Set(['processing.admin.purge', 'processing.claims.open']),
    };
    const narrowed = s.narrow(grant, 'claims');
    expect(allowed(narrowed)).toEqual(['processing.claims.open', 'docs.search']);
    expect(narrowed).toMatchObject({ all: false, key: '0@claims#config', server: 'claims' });
    expect(VirtualServers.serverOf(narrowed)).toBe('claims');
    // built once per catalog and grant
    expect(s.narrow(grant, 'claims')).toBe(narrowed);
  });

  it("answers with each server's identity: name, title, instructions", () => {
    const s = servers();
    expect(s.identityOf('claims').serverInfo).toEqual({
      name: 'gw/claims',
      title: 'claims',
      version: '1',
    });
    expect(s.identityOf(undefined).serverInfo).toEqual({ name: 'gw', version: '1' });
    expect(JSON.parse(s.identityOf('ref').serverInfoMeta)).toEqual({
      'io.modelcontextprotocol/serverInfo': { name: 'gw/ref', title: 'ref', version: '1' },
    });
  });
});

describe('VirtualServers: servers registered at runtime (docs/operations.md §16 "Registered at runtime")', () => {
  const registered = (id: string, tools: string[], version: number) =>
    new Map([
      [
        id,
        {
          config: { id, tools, sources: [], tags: [], toolSearch: false, toolSelect: false },
          version,
        },
      ],
    ]) as Parameters<VirtualServers['applyRegistered']>[0];

  it('serves a registered server, replaces it by version, forgets it, and never replaces a configured one', () => {
    const s = servers();
    expect(s.serverOfPath('/mcp/servers/late')).toBeUndefined();
    s.applyRegistered(registered('late', ['docs.*'], 1));
    expect(s.serverOfPath('/mcp/servers/late')).toBe('late');
    expect(allowed(s.narrow(undefined, 'late'))).toEqual(['docs.search']);
    expect(s.statuses().map((x) => [x.id, x.origin, x.version])).toEqual([
      ['claims', 'config', undefined],
      ['ref', 'config', undefined],
      ['late', 'admin', 1],
    ]);
    // a new version: a new view, and a new key for the lists cached per grant
    const before = s.narrow(undefined, 'late');
    s.applyRegistered(registered('late', ['wh__*'], 2));
    const after = s.narrow(undefined, 'late');
    expect(allowed(after)).toEqual(['wh__query']);
    expect(after?.all === false && before?.all === false && after.key !== before.key).toBe(true);
    s.applyRegistered(new Map());
    expect(s.serverOfPath('/mcp/servers/late')).toBeUndefined();
    s.applyRegistered(registered('claims', ['wh__*'], 3));
    expect(allowed(s.narrow(undefined, 'claims'))).toEqual([
      'processing.claims.open',
      'docs.search',
    ]);
    expect(s.isConfigured('claims')).toBe(true);
  });

  it("a server's grant key reads the same whatever other servers were registered or deleted, and on any replica", () => {
    const grant = { all: false, key: '0', sources: new Set(['docs']), tools: new Set<string>() };
    const keyOf = (s: ReturnType<typeof servers>, server: string): string | undefined => {
      const narrowed = s.narrow(grant, server);
      return narrowed?.all === false ? narrowed.key : undefined;
    };
    const a = servers();
    const claims = keyOf(a, 'claims');
    a.applyRegistered(registered('other', ['docs.*'], 7));
    a.applyRegistered(new Map());
    // replica b never saw those registrations
    const b = servers();
    expect(keyOf(a, 'claims')).toBe(claims);
    expect(keyOf(b, 'claims')).toBe(claims);
    a.applyRegistered(registered('late', ['docs.*'], 4));
    b.applyRegistered(registered('late', ['docs.*'], 4));
    b.applyRegistered(registered('late', ['docs.*'], 4));
    expect(keyOf(a, 'late')).toBe(keyOf(b, 'late'));
  });
});

describe('ToolPattern: * is any run of characters, matched without backtracking', () => {
  it('matches as a glob would', () => {
    const cases: [string, string, boolean][] = [
      ['processing.*', 'processing.claims.open', true],
      ['processing.*', 'processingXclaims', false],
      ['*__search', 'wh__search', true],
      ['*__search', 'wh__searchX', false],
      ['a*b*c', 'abc', true],
      ['a*b*c', 'aXXbYYc', true],
      ['a*b*c', 'aXXbYY', false],
      ['*', '', true],
      ['exact.name', 'exact.name', true],
      ['exact.name', 'exactXname', false],
      ['**a', 'bba', true],
    ];
    for (const [pattern, name, expected] of cases)
      expect([pattern, name, new ToolPattern(pattern).test(name)]).toEqual([
        pattern,
        name,
        expected,
      ]);
  });

  it('answers a pattern that makes a backtracking RegExp run for minutes', () => {
    const pattern = new ToolPattern(`${'*a'.repeat(10)}*b`);
    expect(pattern.test(`claims.${'a'.repeat(120)}`)).toBe(false);
    expect(pattern.test(`claims.${'a'.repeat(120)}b`)).toBe(true);
  });
});
