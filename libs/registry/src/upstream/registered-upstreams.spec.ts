import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { McpConfig, type GatewayConfig, type UpstreamDefinition } from '@app/config';
import { SchemaChecker } from '../manifest/schema-checker';
import { RegistryService } from '../registry.service';
import type { UpstreamPullResult } from './upstream-pull-result';

Logger.overrideLogger(false);

function upstream(id: string): UpstreamDefinition {
  return {
    id,
    url: `http://${id}.internal:3000/mcp`,
    namePrefix: `${id}__`,
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

function registry(maxToolsTotal = 100, tune?: (mcp: McpConfig) => void): RegistryService {
  const mcp = new McpConfig();
  mcp.identity = 'gw-test';
  mcp.discovery.maxToolsTotal = maxToolsTotal;
  tune?.(mcp);
  const config = {
    profile: 'local',
    sources: [],
    mcp,
    bundles: [],
    upstreams: [upstream('calc')],
    sessionKeys: [],
    sessionKeysEphemeral: false,
    logLevel: 'silent',
    version: '0.0.0-test',
  } as unknown as GatewayConfig;
  return new RegistryService(config, { now: () => new Date() });
}

/** A pull of `id` that answered these tool names, attempted `offsetMs` from now. */
function pulled(id: string, names: string[], offsetMs = 0): UpstreamPullResult {
  return {
    upstreamId: id,
    kind: 'lists',
    attemptedAt: new Date(Date.now() + offsetMs),
    lists: {
      era: '2026',
      capabilities: { tools: {} },
      tools: names.map((name) => ({ name, inputSchema: { type: 'object' } })),
      resources: [],
      resourceTemplates: [],
      prompts: [],
    },
  };
}

const names = (r: RegistryService): string[] => r.current()?.tools.map((t) => t.name) ?? [];

describe('upstreams registered at runtime (docs/operations.md §15 "Shared and durable")', () => {
  it('a put upstream is pulled from the next round on and joins the catalog through its merge; removed, it leaves', async () => {
    const r = registry();
    await r.applyRound([], [pulled('calc', ['add'])]);
    expect(names(r)).toEqual(['calc__add']);

    expect(r.putUpstream(upstream('more'))).toBe(true);
    expect(r.enabledUpstreams().map((u) => u.id)).toEqual(['calc', 'more']);
    expect(r.upstreamState('more')).toMatchObject({ attempted: false, status: 'unreachable' });
    await r.applyRound([], [pulled('calc', ['add']), pulled('more', ['echo'])]);
    expect(names(r)).toEqual(['calc__add', 'more__echo']);
    expect(r.upstreamState('more')).toMatchObject({
      attempted: true,
      status: 'healthy',
      era: '2026',
      toolCount: 1,
    });

    expect(r.removeUpstream('more')).toBe(true);
    expect(r.upstreamState('more')).toBeUndefined();
    await r.applyRound([], [pulled('calc', ['add'])]);
    expect(names(r)).toEqual(['calc__add']);
  });

  it('forwardedHeaders: every enabled upstream forwards them, one set until an upstream is put or removed', () => {
    const r = registry();
    const before = r.forwardedHeaders();
    expect([...before]).toEqual([]);
    expect(r.forwardedHeaders()).toBe(before);
    r.putUpstream({ ...upstream('tenant'), forwardHeaders: ['x-tenant'] });
    expect([...r.forwardedHeaders()]).toEqual(['x-tenant']);
    r.putUpstream({ ...upstream('off'), enabled: false, forwardHeaders: ['x-off'] });
    expect([...r.forwardedHeaders()]).toEqual(['x-tenant']);
    r.removeUpstream('tenant');
    expect([...r.forwardedHeaders()]).toEqual([]);
  });

  it('a configured upstream can be neither replaced nor removed', () => {
    const r = registry();
    expect(r.putUpstream({ ...upstream('calc'), url: 'http://elsewhere/mcp' })).toBe(false);
    expect(r.removeUpstream('calc')).toBe(false);
    expect(r.enabledUpstreams()).toEqual([upstream('calc')]);
  });

  it('a pull attempted before the upstream was put (of the definition it replaced) is ignored', async () => {
    const r = registry();
    r.putUpstream(upstream('more'));
    await r.applyRound([], [pulled('calc', ['add']), pulled('more', ['old'], -60_000)]);
    expect(names(r)).toEqual(['calc__add']);
    expect(r.upstreamState('more')).toMatchObject({ attempted: false });
  });

  it('a registration the merge rejects leaves the catalog as it was and says why', async () => {
    const r = registry(2);
    await r.applyRound([], [pulled('calc', ['add', 'shout'])]);
    r.putUpstream(upstream('more'));
    await r.applyRound([], [pulled('calc', ['add', 'shout']), pulled('more', ['echo'])]);
    expect(names(r)).toEqual(['calc__add', 'calc__shout']);
    const state = r.upstreamState('more');
    expect(state).toMatchObject({ attempted: true, lastErrorType: 'CatalogTooLargeError' });
    expect(state?.lastErrorDetail).toEqual(expect.any(String));
    expect(state?.lastErrorDetail).not.toBe('');
  });

  describe('blame of a rejected merge (a rejected registration never takes a newcomer down)', () => {
    const tools = (prefix: string, n: number): string[] =>
      Array.from({ length: n }, (_, i) => `${prefix}${i}`);

    it('keeps blaming the copy rejected before and publishes the innocent registration next to it', async () => {
      const r = registry(10);
      await r.applyRound([], [pulled('calc', ['add'])]);
      r.putUpstream(upstream('huge'));
      await r.applyRound([], [pulled('calc', ['add']), pulled('huge', tools('t', 12))]);
      // 12 tools cannot fit maxToolsTotal 10 whatever the others list: refused before any of
      // its schemas is compiled, never merged
      expect(r.upstreamState('huge')).toMatchObject({
        lastErrorType: 'UpstreamTooManyToolsError',
      });
      expect(r.upstreamState('huge')?.lastErrorDetail).toContain('mcp.discovery.maxToolsTotal 10');

      r.putUpstream(upstream('small'));
      await r.applyRound(
        [],
        [pulled('calc', ['add']), pulled('huge', tools('t', 12)), pulled('small', ['echo'])],
      );
      expect(names(r)).toEqual(['calc__add', 'small__echo']);
      expect(r.upstreamState('small')).toMatchObject({ status: 'healthy', toolCount: 1 });
      expect(r.upstreamState('small')?.lastErrorType).toBeUndefined();
      expect(r.upstreamState('huge')).toMatchObject({
        status: 'unreachable',
        lastErrorType: 'UpstreamTooManyToolsError',
      });
    });

    it('blames the repeat offender first, then the newcomer that still does not fit', async () => {
      const r = registry(10);
      await r.applyRound([], [pulled('calc', ['add'])]);
      r.putUpstream(upstream('huge'));
      await r.applyRound([], [pulled('calc', ['add']), pulled('huge', tools('t', 12))]);
      r.putUpstream(upstream('big'));
      await r.applyRound(
        [],
        [pulled('calc', ['add']), pulled('huge', tools('t', 12)), pulled('big', tools('b', 10))],
      );
      expect(names(r)).toEqual(['calc__add']);
      expect(r.upstreamState('big')).toMatchObject({ lastErrorType: 'CatalogTooLargeError' });
      expect(r.upstreamState('huge')).toMatchObject({
        lastErrorType: 'UpstreamTooManyToolsError',
      });
      expect(r.upstreamState('calc')).toMatchObject({ status: 'healthy' });
    });

    it('adopts a rejected copy once it fits: after its own change, and after the others shrank', async () => {
      const r = registry(10);
      await r.applyRound([], [pulled('calc', tools('c', 5))]);
      r.putUpstream(upstream('more'));
      await r.applyRound([], [pulled('calc', tools('c', 5)), pulled('more', tools('m', 6))]);
      expect(r.upstreamState('more')).toMatchObject({ lastErrorType: 'CatalogTooLargeError' });

      // The same copy, unchanged, joins once calc has shrunk.
      await r.applyRound([], [pulled('calc', tools('c', 4)), pulled('more', tools('m', 6))]);
      expect(names(r)).toHaveLength(10);
      expect(r.upstreamState('more')).toMatchObject({ status: 'healthy', toolCount: 6 });

      // A changed copy that fits is adopted even though its previous one was rejected.
      r.putUpstream(upstream('third'));
      await r.applyRound(
        [],
        [pulled('calc', tools('c', 4)), pulled('more', tools('m', 6)), pulled('third', ['x'])],
      );
      expect(r.upstreamState('third')).toMatchObject({ lastErrorType: 'CatalogTooLargeError' });
      await r.applyRound(
        [],
        [pulled('calc', tools('c', 3)), pulled('more', tools('m', 6)), pulled('third', ['y'])],
      );
      expect(names(r)).toContain('third__y');
      expect(r.upstreamState('third')).toMatchObject({ status: 'healthy' });
    });

    it('does not re-merge an unchanged registered upstream as if it were new', async () => {
      const r = registry(3);
      r.putUpstream(upstream('more'));
      await r.applyRound([], [pulled('calc', ['add']), pulled('more', ['echo'])]);
      expect(names(r)).toEqual(['calc__add', 'more__echo']);
      // A newcomer that overflows the catalog is blamed alone: calc and more are unchanged.
      r.putUpstream(upstream('late'));
      await r.applyRound(
        [],
        [pulled('calc', ['add']), pulled('more', ['echo']), pulled('late', ['a', 'b'])],
      );
      expect(names(r)).toEqual(['calc__add', 'more__echo']);
      expect(r.upstreamState('more')).toMatchObject({ status: 'healthy' });
      expect(r.upstreamState('more')?.lastErrorType).toBeUndefined();
      expect(r.upstreamState('late')).toMatchObject({ lastErrorType: 'CatalogTooLargeError' });
    });
  });

  it('registered upstreams follow the configured ones in order of registration time, however a replica learnt them; the earlier one keeps a shared resource URI', async () => {
    const r = registry();
    const withResource = (id: string, offsetMs = 0): UpstreamPullResult => {
      const p = pulled(id, [], offsetMs);
      return {
        ...p,
        lists: {
          ...(p as Extract<UpstreamPullResult, { kind: 'lists' }>).lists,
          capabilities: { resources: {} },
          resources: [{ uri: 'shared://r', name: id }],
        },
      } as UpstreamPullResult;
    };
    // learnt late first (as a replica reading the store may), registered second
    r.putUpstream(upstream('late'), 2_000);
    r.putUpstream(upstream('early'), 1_000);
    expect(r.enabledUpstreams().map((u) => u.id)).toEqual(['calc', 'early', 'late']);
    await r.applyRound([], [pulled('calc', ['add']), withResource('late'), withResource('early')]);
    expect(r.current()?.extras.resourceOwner('shared://r')?.id).toBe('early');
    expect(r.current()?.extras.conflicts.map((c) => [c.droppedFrom, c.keptBy])).toEqual([
      ['late', 'early'],
    ]);
    // replaced (a PATCH keeps createdAt): its place stays
    r.putUpstream({ ...upstream('early'), url: 'http://moved.internal/mcp' }, 1_000);
    expect(r.enabledUpstreams().map((u) => u.id)).toEqual(['calc', 'early', 'late']);
    r.removeUpstream('calc'); // configured: stays
    expect(r.enabledUpstreams().map((u) => u.id)).toEqual(['calc', 'early', 'late']);
  });
});

describe('tools caps of one upstream, applied before any schema is compiled', () => {
  const tools = (n: number): string[] => Array.from({ length: n }, (_, i) => `t${i}`);

  it('a list over maxToolsPerUpstream (default maxToolsPerBundle) is refused with the cap named; the last good lists stay and no schema is compiled', async () => {
    const r = registry(1000);
    await r.applyRound([], [pulled('calc', ['add'])]);
    const check = jest.spyOn(SchemaChecker.prototype, 'check');
    try {
      await r.applyRound([], [pulled('calc', tools(101))]);
      expect(check).not.toHaveBeenCalled();
    } finally {
      check.mockRestore();
    }
    expect(names(r)).toEqual(['calc__add']);
    expect(r.upstreamState('calc')).toMatchObject({
      status: 'degraded',
      toolCount: 1,
      lastErrorType: 'UpstreamTooManyToolsError',
      lastErrorDetail:
        'tools/list lists 101 tools, more than mcp.discovery.maxToolsPerUpstream 100',
    });
    await r.applyRound([], [pulled('calc', tools(100))]);
    expect(names(r)).toHaveLength(100);
  });

  it('maxToolsPerUpstream set on its own is the cap, whatever maxToolsPerBundle says', async () => {
    const r = registry(1000, (mcp) => (mcp.discovery.maxToolsPerUpstream = 3));
    await r.applyRound([], [pulled('calc', tools(4))]);
    expect(r.upstreamState('calc')).toMatchObject({ lastErrorType: 'UpstreamTooManyToolsError' });
    await r.applyRound([], [pulled('calc', tools(3))]);
    expect(names(r)).toEqual(['calc__t0', 'calc__t1', 'calc__t2']);
  });
});
