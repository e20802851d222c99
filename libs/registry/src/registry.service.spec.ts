import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { McpConfig, type BundleDefinition, type GatewayConfig } from '@app/config';
import type { Clock } from './clock';
import type { AcceptedManifest } from './manifest/manifest.types';
import { SchemaChecker } from './manifest/schema-checker';
import { validateManifest } from './manifest/validate-manifest';
import type { PullErrorType } from './manifest/manifest-errors';
import type { BundlePullResult } from './pull-result';
import { sourceUrlDigest, type LastGoodStore, type StoredManifest } from './redis/last-good-store';
import { RegistryService } from './registry.service';
import type { Reviewed } from './source-views';
import type { BundleStatusView } from './state/bundle-record';

// The service logs every rejection and publish; keep the test output readable.
Logger.overrideLogger(false);

const T0 = Date.parse('2026-07-30T00:00:00.000Z');
const at = (seconds: number): Date => new Date(T0 + seconds * 1000);

function definition(id: string, namePrefix: string, enabled = true): BundleDefinition {
  return {
    id,
    manifestUrl: `http://${id}.internal:8080/tool-manifest`,
    baseEndpoint: `http://${id}.internal:8080/mcp`,
    namePrefix,
    enabled,
    authorization: { mode: 'none' },
    serverErrorBody: 'show',
  };
}

/**
 * A GatewayConfig built literally, so that tests can use bundle layouts that config validation
 * would refuse (prefixes that nest, to force a cross-bundle name collision).
 */
function gatewayConfig(
  bundles: BundleDefinition[],
  discovery: Partial<McpConfig['discovery']> = {},
): GatewayConfig {
  const mcp = new McpConfig();
  mcp.identity = 'gw-test';
  mcp.bundles = [];
  Object.assign(mcp.discovery, discovery);
  return {
    profile: 'local',
    sources: [],
    mcp,
    bundles,
    upstreams: [],
    server: {
      host: '127.0.0.1',
      port: 0,
      managementPort: 0,
      managementHost: '127.0.0.1',
      mcpListener: 'fastify',
      maxMcpConnections: 100,
    },
    sessionKeys: [{ kid: 'k', key: Buffer.alloc(32) }],
    sessionKeysEphemeral: false,
    logLevel: 'silent',
    version: '0.0.0-test',
  };
}

/** A clock the test moves by hand. */
class TestClock implements Clock {
  current = at(0);
  now(): Date {
    return this.current;
  }
}

function setup(bundles: BundleDefinition[], discovery: Partial<McpConfig['discovery']> = {}) {
  const clock = new TestClock();
  const config = gatewayConfig(bundles, discovery);
  const service = new RegistryService(config, clock);
  return { service, clock, config };
}

function toolJson(name: string, meta: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name,
    description: `Runs ${name}.`,
    inputSchema: { type: 'object', properties: {} },
    _meta: { version: '1', ...meta },
  };
}

function body(bundleId: string, revision: string, names: string[]): Record<string, unknown> {
  return { bundleId, revision, tools: names.map((n) => toolJson(n)) };
}

function pulled(
  bundleId: string,
  revision: string,
  names: string[],
  seconds = 0,
): BundlePullResult {
  return {
    bundleId,
    kind: 'manifest',
    raw: JSON.stringify(body(bundleId, revision, names)),
    attemptedAt: at(seconds),
  };
}

function failed(
  bundleId: string,
  errorType: PullErrorType,
  seconds = 0,
  fallbackBody?: unknown,
): BundlePullResult {
  return {
    bundleId,
    kind: 'failed',
    errorType,
    detail: `GET http://${bundleId}.internal:8080/tool-manifest: ${errorType} ECONNREFUSED 10.0.0.7`,
    attemptedAt: at(seconds),
    ...(fallbackBody === undefined ? {} : { fallbackRaw: JSON.stringify(fallbackBody) }),
  };
}

function names(service: RegistryService): string[] | undefined {
  return service.current()?.tools.map((t) => t.name);
}

function status(service: RegistryService, id: string): Reviewed<BundleStatusView> {
  const view = service.view().bundles.find((b) => b.id === id);
  if (!view) throw new Error(`no status for ${id}`);
  return view;
}

async function accepted(
  bundleId: string,
  namePrefix: string,
  revision: string,
  toolNames: string[],
) {
  const result = await validateManifest(
    body(bundleId, revision, toolNames),
    { bundleId, namePrefix, maxToolsPerBundle: 100 },
    new SchemaChecker(),
  );
  if (!result.ok) throw new Error('fixture manifest must be valid');
  return result.manifest;
}

const ALPHA = definition('alpha', 'alpha.');
const BETA = definition('beta', 'beta.');

describe('readiness (contract §6: first attempt done and a usable snapshot)', () => {
  it('is not ready and publishes nothing before the first applyRound', () => {
    const { service } = setup([ALPHA]);
    expect(service.isReady()).toBe(false);
    expect(service.firstPullAttemptDone).toBe(false);
    expect(service.current()).toBeUndefined();
    expect(service.isFirstAttempt('alpha')).toBe(true);
    expect(service.hasNoCopy('alpha')).toBe(true);
    expect(service.view()).toEqual({
      identity: 'gw-test',
      ready: false,
      catalog: { published: false, toolCount: 0, publishedAt: null, lastRejectionReason: null },
      redis: { configured: false, available: null, lastFailureReason: null },
      bundles: [
        {
          id: 'alpha',
          status: 'unreachable',
          revision: null,
          toolCount: 0,
          lastSuccessAt: null,
          lastAttemptAt: null,
          consecutiveFailures: 0,
          lastFailureReason: null,
          source: null,
          ageSeconds: null,
        },
      ],
    });
  });

  it('stays not ready after a first round in which nothing could be adopted', async () => {
    const { service } = setup([ALPHA]);
    await service.applyRound([failed('alpha', 'ManifestConnectError')]);
    expect(service.firstPullAttemptDone).toBe(true);
    expect(service.isReady()).toBe(false);
    expect(service.current()).toBeUndefined();
  });

  it('is ready after a first round that publishes an empty but valid manifest', async () => {
    const { service } = setup([ALPHA]);
    await service.applyRound([pulled('alpha', '1', [])]);
    expect(service.isReady()).toBe(true);
    expect(service.current()?.toolsJson).toBe('[]');
  });
});

describe('last good copy per bundle (contract §6 failure table, §11 stale tools)', () => {
  it('publishes a catalog from a valid first manifest and marks the bundle healthy', async () => {
    const { service, clock } = setup([ALPHA]);
    clock.current = at(3);
    await service.applyRound([pulled('alpha', '1', ['alpha.search', 'alpha.get'], 1)]);
    expect(names(service)).toEqual(['alpha.get', 'alpha.search']);
    expect(service.isReady()).toBe(true);
    expect(service.current()?.publishedAt.toISOString()).toBe(at(3).toISOString());
    expect(status(service, 'alpha')).toEqual({
      id: 'alpha',
      status: 'healthy',
      revision: '1',
      toolCount: 2,
      lastSuccessAt: at(1).toISOString(),
      lastAttemptAt: at(1).toISOString(),
      consecutiveFailures: 0,
      lastFailureReason: null,
      source: 'remote',
      ageSeconds: 2,
    });
  });

  it('keeps the last good copy when a later pull fails: degraded, failures count up, reason is the error type', async () => {
    const { service } = setup([ALPHA]);
    await service.applyRound([pulled('alpha', '1', ['alpha.search'], 0)]);
    const published = service.current();

    await service.applyRound([failed('alpha', 'ManifestTimeoutError', 30)]);
    expect(service.current()).toBe(published);
    expect(status(service, 'alpha')).toMatchObject({
      status: 'degraded',
      revision: '1',
      toolCount: 1,
      consecutiveFailures: 1,
      lastFailureReason: 'ManifestTimeoutError',
      lastSuccessAt: at(0).toISOString(),
      lastAttemptAt: at(30).toISOString(),
      source: 'remote',
    });

    await service.applyRound([failed('alpha', 'ManifestHttpStatusError', 60)]);
    expect(service.current()).toBe(published);
    expect(status(service, 'alpha')).toMatchObject({
      status: 'degraded',
      consecutiveFailures: 2,
      lastFailureReason: 'ManifestHttpStatusError',
    });
    expect(service.isReady()).toBe(true);
  });

  it('keeps the old catalog when a manifest after a good one is invalid (the whole bundle is rejected)', async () => {
    const { service } = setup([ALPHA]);
    await service.applyRound([pulled('alpha', '1', ['alpha.search'], 0)]);
    const published = service.current();

    await service.applyRound([pulled('alpha', '2', ['alpha.search', 'beta.intruder'], 30)]);
    expect(service.current()).toBe(published);
    expect(names(service)).toEqual(['alpha.search']);
    expect(status(service, 'alpha')).toMatchObject({
      status: 'degraded',
      revision: '1',
      consecutiveFailures: 1,
      lastFailureReason: 'ToolNamePrefixError',
    });
  });

  it('removes a tool only when a successful manifest drops it, and a success resets the failure count', async () => {
    const { service } = setup([ALPHA]);
    await service.applyRound([pulled('alpha', '1', ['alpha.a', 'alpha.b'], 0)]);
    await service.applyRound([failed('alpha', 'ManifestConnectError', 30)]);
    expect(names(service)).toEqual(['alpha.a', 'alpha.b']);

    await service.applyRound([pulled('alpha', '2', ['alpha.a'], 60)]);
    expect(names(service)).toEqual(['alpha.a']);
    expect(service.current()?.get('alpha.b')).toBeUndefined();
    expect(status(service, 'alpha')).toMatchObject({
      status: 'healthy',
      revision: '2',
      toolCount: 1,
      consecutiveFailures: 0,
      lastFailureReason: null,
      lastSuccessAt: at(60).toISOString(),
    });
  });

  it('keeps the same catalog object when an unchanged manifest is pulled again', async () => {
    const { service } = setup([ALPHA]);
    await service.applyRound([pulled('alpha', '1', ['alpha.a'], 0)]);
    const published = service.current();
    await service.applyRound([pulled('alpha', '1', ['alpha.a'], 30)]);
    expect(service.current()).toBe(published);
    expect(status(service, 'alpha').lastSuccessAt).toBe(at(30).toISOString());
  });

  it('counts only listed tools in toolCount (enabled: false tools are kept but not listed)', async () => {
    const { service } = setup([ALPHA]);
    await service.applyRound([
      {
        bundleId: 'alpha',
        kind: 'manifest',
        raw: JSON.stringify({
          bundleId: 'alpha',
          tools: [toolJson('alpha.on'), toolJson('alpha.off', { enabled: false })],
        }),
        attemptedAt: at(0),
      },
    ]);
    expect(names(service)).toEqual(['alpha.on']);
    expect(status(service, 'alpha').toolCount).toBe(1);
    expect(status(service, 'alpha').revision).toBeNull();
  });

  it('ignores pull results for bundles that are not configured', async () => {
    const { service } = setup([ALPHA]);
    await service.applyRound([
      pulled('alpha', '1', ['alpha.a']),
      pulled('ghost', '1', ['ghost.a']),
    ]);
    expect(names(service)).toEqual(['alpha.a']);
    expect(service.view().bundles.map((b) => b.id)).toEqual(['alpha']);
  });
});

describe('all or nothing (contract §1: no catalog while a bundle has never succeeded)', () => {
  it('publishes no catalog while one bundle never succeeded, yet shows the other bundle healthy', async () => {
    const { service } = setup([ALPHA, BETA]);
    await service.applyRound([
      pulled('alpha', 'a1', ['alpha.search', 'alpha.get'], 0),
      failed('beta', 'ManifestConnectError', 0),
    ]);
    expect(service.current()).toBeUndefined();
    expect(service.isReady()).toBe(false);
    expect(service.view().catalog.published).toBe(false);
    expect(status(service, 'alpha')).toMatchObject({
      status: 'healthy',
      revision: 'a1',
      toolCount: 2,
      consecutiveFailures: 0,
    });
    expect(status(service, 'beta')).toMatchObject({
      status: 'unreachable',
      revision: null,
      consecutiveFailures: 1,
      lastFailureReason: 'ManifestConnectError',
      source: null,
    });

    await service.applyRound([
      failed('alpha', 'ManifestTimeoutError', 30),
      pulled('beta', 'b1', ['beta.pay'], 30),
    ]);
    expect(names(service)).toEqual(['alpha.get', 'alpha.search', 'beta.pay']);
    expect(service.isReady()).toBe(true);
    expect(status(service, 'alpha').status).toBe('degraded');
    expect(status(service, 'beta').status).toBe('healthy');
  });

  it('publishes the catalog sorted by (bundleId, name) whatever the order of the results', async () => {
    const { service } = setup([BETA, ALPHA]);
    await service.applyRound([
      pulled('beta', '1', ['beta.z', 'beta.a']),
      pulled('alpha', '1', ['alpha.z', 'alpha.a']),
    ]);
    expect(names(service)).toEqual(['alpha.a', 'alpha.z', 'beta.a', 'beta.z']);
  });
});

describe('disabled bundles (contract §3: never pulled, status "disabled")', () => {
  it('shows a disabled bundle as disabled, leaves it out of enabledBundles() and ignores results for it', async () => {
    const { service } = setup([ALPHA, definition('beta', 'beta.', false)]);
    expect(service.enabledBundles().map((b) => b.id)).toEqual(['alpha']);

    await service.applyRound([pulled('alpha', '1', ['alpha.a']), pulled('beta', '1', ['beta.a'])]);
    expect(names(service)).toEqual(['alpha.a']);
    expect(status(service, 'beta')).toEqual({
      id: 'beta',
      status: 'disabled',
      revision: null,
      toolCount: 0,
      lastSuccessAt: null,
      lastAttemptAt: null,
      consecutiveFailures: 0,
      lastFailureReason: null,
      source: null,
      ageSeconds: null,
    });
    expect(service.isReady()).toBe(true);
  });
});

describe('local fallbackManifestFile (contract §3: read only when the first remote pull fails)', () => {
  it('serves a fallback manifest given with a first failed pull: status fallback, and a catalog', async () => {
    const { service } = setup([ALPHA]);
    await service.applyRound([
      failed('alpha', 'ManifestConnectError', 0, body('alpha', 'sample-v1', ['alpha.sample'])),
    ]);
    expect(names(service)).toEqual(['alpha.sample']);
    expect(service.isReady()).toBe(true);
    expect(status(service, 'alpha')).toMatchObject({
      status: 'fallback',
      source: 'fallback',
      revision: 'sample-v1',
      consecutiveFailures: 1,
      lastFailureReason: 'ManifestConnectError',
      lastSuccessAt: null,
    });
  });

  it('replaces the fallback copy with the first remote success: status healthy, source remote', async () => {
    const { service } = setup([ALPHA]);
    await service.applyRound([
      failed('alpha', 'ManifestConnectError', 0, body('alpha', 'sample-v1', ['alpha.sample'])),
    ]);
    await service.applyRound([pulled('alpha', 'r7', ['alpha.remote'], 30)]);
    expect(names(service)).toEqual(['alpha.remote']);
    expect(status(service, 'alpha')).toMatchObject({
      status: 'healthy',
      source: 'remote',
      revision: 'r7',
      consecutiveFailures: 0,
    });
  });

  it('keeps the fallback copy while remote pulls keep failing', async () => {
    const { service } = setup([ALPHA]);
    await service.applyRound([
      failed('alpha', 'ManifestConnectError', 0, body('alpha', 'sample-v1', ['alpha.sample'])),
    ]);
    await service.applyRound([failed('alpha', 'ManifestConnectError', 30)]);
    expect(names(service)).toEqual(['alpha.sample']);
    expect(status(service, 'alpha')).toMatchObject({ status: 'fallback', consecutiveFailures: 2 });
  });

  it('ignores a fallback manifest when the bundle already has a copy', async () => {
    const { service } = setup([ALPHA]);
    await service.applyRound([pulled('alpha', '1', ['alpha.remote'], 0)]);
    const published = service.current();
    await service.applyRound([
      failed('alpha', 'ManifestConnectError', 30, body('alpha', 'sample-v1', ['alpha.sample'])),
    ]);
    expect(service.current()).toBe(published);
    expect(names(service)).toEqual(['alpha.remote']);
    expect(status(service, 'alpha')).toMatchObject({
      status: 'degraded',
      source: 'remote',
      revision: '1',
    });
  });

  it('does not adopt an invalid fallback manifest', async () => {
    const { service } = setup([ALPHA]);
    await service.applyRound([
      failed('alpha', 'ManifestConnectError', 0, body('other', 'x', ['alpha.sample'])),
    ]);
    expect(service.current()).toBeUndefined();
    expect(status(service, 'alpha')).toMatchObject({
      status: 'unreachable',
      lastFailureReason: 'ManifestConnectError',
    });
  });
});

describe('status view (contract §9: no manifestUrl, no namePrefix, no message)', () => {
  it('never contains a URL, the manifestUrl, the namePrefix or a failure message', async () => {
    const { service } = setup([ALPHA, BETA]);
    await service.applyRound([
      pulled('alpha', '1', ['alpha.search'], 0),
      failed('beta', 'ManifestConnectError', 0),
    ]);
    await service.applyRound([
      pulled('alpha', '2', ['alpha.search', 'gamma.x'], 30),
      pulled('beta', '1', ['beta.pay'], 30),
    ]);
    // The validation failure's detail names the manifest path and the rule, never the tool's
    // name, which holds a prefix (docs/operations.md §2 "detail"); nothing else in the view
    // quotes the manifest.
    expect(status(service, 'alpha').detail).toBe(
      "tools[1]: name must start with the bundle's namePrefix",
    );
    const text = JSON.stringify(service.view()).replace(
      JSON.stringify(status(service, 'alpha').detail),
      '""',
    );
    for (const forbidden of [
      'http',
      '://',
      'internal',
      'tool-manifest',
      'manifestUrl',
      'baseEndpoint',
      'namePrefix',
      'alpha.',
      'beta.',
      'ECONNREFUSED',
      '10.0.0.7',
      'gamma',
    ]) {
      expect(text).not.toContain(forbidden);
    }
    // not even the configured prefix in the detail (contract §9)
    expect(status(service, 'alpha').detail).not.toContain('"alpha."');
    expect(service.view().bundles.map((b) => [b.id, b.lastFailureReason])).toEqual([
      ['alpha', 'ToolNamePrefixError'],
      ['beta', null],
    ]);
    expect(Object.keys(status(service, 'alpha')).sort()).toEqual([
      'ageSeconds',
      'consecutiveFailures',
      'detail',
      'id',
      'lastAttemptAt',
      'lastFailureReason',
      'lastSuccessAt',
      'revision',
      'source',
      'status',
      'toolCount',
    ]);
  });
});

describe('aggregate rejections (contract §7.3, §7.6) keep the previous catalog', () => {
  // Nested prefixes are refused by config validation (contract §3); built literally here so
  // that names can collide across bundles.
  const ONE = definition('one', 'a.');
  const TWO = definition('two', 'a.b.');

  it('keeps the previous catalog on a collision and marks the changed bundle with ToolNameCollisionError', async () => {
    const { service } = setup([ONE, TWO]);
    await service.applyRound([pulled('one', '1', ['a.x'], 0), pulled('two', '1', ['a.b.y'], 0)]);
    const published = service.current();
    expect(names(service)).toEqual(['a.x', 'a.b.y']);

    await service.applyRound([
      pulled('one', '2', ['a.x', 'a.b.y'], 30),
      pulled('two', '1', ['a.b.y'], 30),
    ]);
    expect(service.current()).toBe(published);
    expect(status(service, 'one')).toMatchObject({
      status: 'degraded',
      revision: '1',
      consecutiveFailures: 1,
      lastFailureReason: 'ToolNameCollisionError',
    });
    expect(status(service, 'two')).toMatchObject({
      status: 'healthy',
      revision: '1',
      consecutiveFailures: 0,
      lastFailureReason: null,
    });
  });

  it("still publishes the other bundle's new valid manifest by the retry", async () => {
    const GAMMA = definition('gamma', 'g.');
    const { service } = setup([ONE, TWO, GAMMA]);
    await service.applyRound([
      pulled('one', '1', ['a.x']),
      pulled('two', '1', ['a.b.y']),
      pulled('gamma', '1', ['g.old']),
    ]);

    await service.applyRound([
      pulled('one', '2', ['a.x', 'a.b.y'], 30),
      pulled('two', '1', ['a.b.y'], 30),
      pulled('gamma', '2', ['g.old', 'g.new'], 30),
    ]);
    // Sorted by bundleId first: gamma, one, two.
    expect(names(service)).toEqual(['g.new', 'g.old', 'a.x', 'a.b.y']);
    expect(status(service, 'one')).toMatchObject({
      status: 'degraded',
      revision: '1',
      lastFailureReason: 'ToolNameCollisionError',
    });
    expect(status(service, 'gamma')).toMatchObject({ status: 'healthy', revision: '2' });
    // the rejection stays visible although the retry published gamma's change
    expect(service.view().catalog.lastRejectionReason).toBe('ToolNameCollisionError');
  });

  it('adopts neither new manifest when both colliding bundles changed (no winner is picked)', async () => {
    const { service } = setup([ONE, TWO]);
    await service.applyRound([pulled('one', '1', ['a.x']), pulled('two', '1', ['a.b.y'])]);
    const published = service.current();

    await service.applyRound([
      pulled('one', '2', ['a.x', 'a.b.z'], 30),
      pulled('two', '2', ['a.b.y', 'a.b.z'], 30),
    ]);
    expect(service.current()).toBe(published);
    for (const id of ['one', 'two']) {
      expect(status(service, id)).toMatchObject({
        status: 'degraded',
        revision: '1',
        lastFailureReason: 'ToolNameCollisionError',
      });
    }
  });

  it('publishes nothing when the first round already collides, and names both bundles', async () => {
    const { service } = setup([ONE, TWO]);
    await service.applyRound([pulled('one', '1', ['a.b.y']), pulled('two', '1', ['a.b.y'])]);
    expect(service.current()).toBeUndefined();
    expect(service.isReady()).toBe(false);
    expect(service.view().catalog.lastRejectionReason).toBe('ToolNameCollisionError');
    expect(service.view().bundles.map((b) => [b.id, b.status, b.lastFailureReason])).toEqual([
      ['one', 'unreachable', 'ToolNameCollisionError'],
      ['two', 'unreachable', 'ToolNameCollisionError'],
    ]);

    await service.applyRound([pulled('one', '2', ['a.x']), pulled('two', '1', ['a.b.y'])]);
    expect(names(service)).toEqual(['a.x', 'a.b.y']);
    expect(service.view().catalog.lastRejectionReason).toBeNull();
  });

  it('keeps the previous catalog when the total exceeds maxToolsTotal, blaming the bundle that grew', async () => {
    const { service } = setup([ALPHA, BETA], { maxToolsTotal: 2 });
    await service.applyRound([pulled('alpha', '1', ['alpha.a']), pulled('beta', '1', ['beta.a'])]);
    const published = service.current();

    await service.applyRound([
      pulled('alpha', '2', ['alpha.a', 'alpha.b'], 30),
      pulled('beta', '1', ['beta.a'], 30),
    ]);
    expect(service.current()).toBe(published);
    expect(status(service, 'alpha')).toMatchObject({
      status: 'degraded',
      revision: '1',
      lastFailureReason: 'CatalogTooLargeError',
    });
    expect(status(service, 'beta')).toMatchObject({ status: 'healthy', lastFailureReason: null });
  });
});

describe('stored copies (Redis last-good warm start, contract §11)', () => {
  it('publishes from stored copies with source redis and status degraded', async () => {
    const { service, clock } = setup([ALPHA, BETA]);
    clock.current = at(100);
    await service.adoptStoredCopies(
      new Map([
        [
          'alpha',
          { manifest: await accepted('alpha', 'alpha.', 'a9', ['alpha.a']), fetchedAt: at(40) },
        ],
        [
          'beta',
          { manifest: await accepted('beta', 'beta.', 'b9', ['beta.a']), fetchedAt: at(50) },
        ],
      ]),
    );
    expect(names(service)).toEqual(['alpha.a', 'beta.a']);
    expect(status(service, 'alpha')).toMatchObject({
      status: 'degraded',
      source: 'redis',
      revision: 'a9',
      lastSuccessAt: null,
      consecutiveFailures: 0,
      ageSeconds: 60,
    });
    // contract §6: readiness also needs the first pull attempt.
    expect(service.isReady()).toBe(false);
    await service.applyRound([
      failed('alpha', 'ManifestConnectError', 101),
      failed('beta', 'ManifestConnectError', 101),
    ]);
    expect(service.isReady()).toBe(true);
    expect(names(service)).toEqual(['alpha.a', 'beta.a']);
  });

  it('never replaces a copy this replica pulled itself, older or newer', async () => {
    const { service } = setup([ALPHA]);
    await service.applyRound([pulled('alpha', 'mine', ['alpha.mine'], 100)]);
    const published = service.current();
    for (const fetchedAt of [at(50), at(500)]) {
      await service.adoptStoredCopies(
        new Map([
          [
            'alpha',
            { manifest: await accepted('alpha', 'alpha.', 'stored', ['alpha.stored']), fetchedAt },
          ],
        ]),
      );
    }
    expect(service.current()).toBe(published);
    expect(status(service, 'alpha')).toMatchObject({
      status: 'healthy',
      source: 'remote',
      revision: 'mine',
    });
  });

  it('replaces an older stored copy with a newer one, but not with an older one', async () => {
    const { service } = setup([ALPHA]);
    const copy = async (revision: string, seconds: number) =>
      new Map([
        [
          'alpha',
          {
            manifest: await accepted('alpha', 'alpha.', revision, [`alpha.${revision}`]),
            fetchedAt: at(seconds),
          },
        ],
      ]);
    await service.adoptStoredCopies(await copy('r2', 20));
    await service.adoptStoredCopies(await copy('r1', 10));
    expect(names(service)).toEqual(['alpha.r2']);
    await service.adoptStoredCopies(await copy('r3', 30));
    expect(names(service)).toEqual(['alpha.r3']);
  });

  it('ignores stored copies of disabled or unknown bundles', async () => {
    const { service } = setup([ALPHA, definition('beta', 'beta.', false)]);
    const manifest: AcceptedManifest = await accepted('beta', 'beta.', '1', ['beta.a']);
    await service.adoptStoredCopies(
      new Map([
        ['beta', { manifest, fetchedAt: at(0) }],
        ['ghost', { manifest, fetchedAt: at(0) }],
      ]),
    );
    expect(service.current()).toBeUndefined();
    expect(status(service, 'beta').status).toBe('disabled');
  });

  it('writes remote copies to the last-good store, never fallback or stored ones', async () => {
    const seen: string[] = [];
    const store: LastGoodStore = {
      load: () => Promise.resolve(new Map()),
      save: (id, _url, copy) => {
        seen.push(`${id}:${copy.source}:${copy.manifest.revision}`);
      },
      status: () => ({ configured: true, available: true, lastFailureReason: null }),
    };
    const { config, clock } = setup([ALPHA]);
    const service = new RegistryService(config, clock, store);
    await service.applyRound([
      failed('alpha', 'ManifestConnectError', 0, body('alpha', 'fb', ['alpha.fb'])),
    ]);
    await service.adoptStoredCopies(
      new Map([
        [
          'alpha',
          { manifest: await accepted('alpha', 'alpha.', 'st', ['alpha.st']), fetchedAt: at(5) },
        ],
      ]),
    );
    await service.applyRound([pulled('alpha', 'r1', ['alpha.r1'], 10)]);
    await service.applyRound([failed('alpha', 'ManifestConnectError', 20)]);
    expect(seen).toEqual(['alpha:remote:r1']);
  });

  it('records where a copy was pulled from, and takes no stored copy of another manifestUrl at warm start', async () => {
    const urls: string[] = [];
    const storeOf = (entry: StoredManifest): LastGoodStore => ({
      load: () => Promise.resolve(new Map([['alpha', entry]])),
      save: (_id, url) => {
        urls.push(url);
      },
      status: () => ({ configured: true, available: true, lastFailureReason: null }),
    });
    const stored = (urlDigest?: string): StoredManifest => ({
      body: body('alpha', 'st', ['alpha.st']),
      fetchedAt: at(0),
      writtenBy: 'other',
      ...(urlDigest !== undefined && { urlDigest }),
    });
    const { config, clock } = setup([ALPHA]);
    const elsewhere = new RegistryService(
      config,
      clock,
      storeOf(stored(sourceUrlDigest('http://old.internal:8080/tool-manifest'))),
    );
    await elsewhere.warmStart();
    expect(elsewhere.current()).toBeUndefined();
    expect(status(elsewhere, 'alpha').status).toBe('unreachable');
    for (const digest of [sourceUrlDigest(ALPHA.manifestUrl), undefined]) {
      const same = new RegistryService(config, clock, storeOf(stored(digest)));
      await same.warmStart();
      expect(names(same)).toEqual(['alpha.st']);
    }
    const puller = new RegistryService(config, clock, storeOf(stored()));
    await puller.applyRound([pulled('alpha', 'r1', ['alpha.r1'], 10)]);
    expect(urls).toEqual([ALPHA.manifestUrl]);
  });
});

describe('hostile manifests (adversarial findings)', () => {
  const deep = (levels: number): unknown => {
    let value: unknown = 1;
    for (let i = 0; i < levels; i++) value = [value];
    return value;
  };

  it('rejects a manifest nested 10,000 levels deep by name and still applies the other bundles', async () => {
    const { service } = setup([ALPHA, BETA]);
    await service.applyRound([
      pulled('alpha', 'a1', ['alpha.one'], 0),
      {
        bundleId: 'beta',
        kind: 'manifest',
        raw: `{"bundleId":${'['.repeat(10_000)}1${']'.repeat(10_000)},"tools":[]}`,
        attemptedAt: at(0),
      },
    ]);
    expect(status(service, 'beta')).toMatchObject({
      status: 'unreachable',
      lastFailureReason: 'BundleIdMismatchError',
    });
    expect(status(service, 'alpha')).toMatchObject({ status: 'healthy' });
    expect(service.firstPullAttemptDone).toBe(true);
  });

  it('rejects a tool schema nested deeper than 64 levels, keeping the last good copy', async () => {
    const { service } = setup([ALPHA]);
    await service.applyRound([pulled('alpha', 'a1', ['alpha.one'], 0)]);
    const tool = {
      ...toolJson('alpha.deep'),
      inputSchema: { type: 'object', properties: { x: { default: deep(80) } } },
    };
    await service.applyRound([
      {
        bundleId: 'alpha',
        kind: 'manifest',
        raw: JSON.stringify({ bundleId: 'alpha', revision: 'a2', tools: [tool] }),
        attemptedAt: at(5),
      },
    ]);
    expect(status(service, 'alpha')).toMatchObject({
      status: 'degraded',
      revision: 'a1',
      lastFailureReason: 'ManifestShapeError',
    });
  });
});

describe('validation failures: a detail in /actuator/toolBundles and the log (docs/operations.md §2 "detail")', () => {
  function raw(bundleId: string, tools: unknown[], seconds = 0): BundlePullResult {
    return {
      bundleId,
      kind: 'manifest',
      raw: JSON.stringify({ bundleId, revision: 'r', tools }),
      attemptedAt: at(seconds),
    };
  }
  const noVersion = { ...toolJson('alpha.echo'), _meta: {} };

  it('shows `tools[0]: _meta.version is required` for a first manifest without it (the log names the tool); the status stays unreachable (§9: never succeeded)', async () => {
    const MY = definition('my', 'my.');
    const { service } = setup([MY]);
    const warn = jest.spyOn(Logger.prototype, 'warn');
    try {
      await service.applyRound([raw('my', [{ ...toolJson('my.echo'), _meta: {} }])]);
      expect(status(service, 'my')).toMatchObject({
        status: 'unreachable',
        lastFailureReason: 'ToolVersionError',
        detail: 'tools[0]: _meta.version is required',
      });
      const line = warn.mock.calls.map((c) => String(c[0])).find((m) => m.includes('rejected'));
      expect(line).toContain(
        'rejected (ToolVersionError): tools[0] "my.echo": _meta.version is required; the last good copy stays',
      );
    } finally {
      warn.mockRestore();
    }
  });

  it('counts further problems without quoting them, and shows degraded over a last good copy', async () => {
    const { service } = setup([ALPHA]);
    await service.applyRound([pulled('alpha', '1', ['alpha.search'], 0)]);
    await service.applyRound([raw('alpha', [noVersion, { ...noVersion, name: 'alpha.b' }], 30)]);
    expect(status(service, 'alpha')).toMatchObject({
      status: 'degraded',
      lastFailureReason: 'ToolVersionError',
      detail: 'tools[0]: _meta.version is required (and 1 more problem in the log)',
    });
  });

  it('keeps an unknown $schema URI and ajv messages out of the detail but writes them to the log', async () => {
    const { service } = setup([ALPHA]);
    const warn = jest.spyOn(Logger.prototype, 'warn');
    try {
      const schema = { $schema: 'http://schemas.internal.example/meta#', type: 'object' };
      await service.applyRound([raw('alpha', [{ ...toolJson('alpha.a'), inputSchema: schema }])]);
      const { detail } = status(service, 'alpha');
      expect(detail).toBe(
        'tools[0]: inputSchema $schema is not a supported JSON Schema dialect (draft-06, draft-07, 2019-09, 2020-12; none means 2020-12)',
      );
      const line = warn.mock.calls.map((c) => String(c[0])).find((m) => m.includes('rejected'));
      expect(line).toContain(
        `${detail?.replace('tools[0]', 'tools[0] "alpha.a"')} ($schema http://schemas.internal.example/meta#)`,
      );
    } finally {
      warn.mockRestore();
    }
  });

  it('has no detail for a failure that is not a validation failure, and none after a success', async () => {
    const { service } = setup([ALPHA]);
    await service.applyRound([raw('alpha', [noVersion])]);
    expect(status(service, 'alpha').detail).toBeDefined();
    await service.applyRound([failed('alpha', 'ManifestConnectError', 30)]);
    expect('detail' in status(service, 'alpha')).toBe(false);
    await service.applyRound([raw('alpha', [noVersion], 60)]);
    await service.applyRound([pulled('alpha', '2', ['alpha.search'], 90)]);
    expect('detail' in status(service, 'alpha')).toBe(false);
  });
});

describe('structured output: the catalog carries each outputSchema compiled (docs/operations.md §6 "Structured output")', () => {
  it('gives a listed tool with an outputSchema its validator, and none to a tool without', async () => {
    const { service } = setup([ALPHA]);
    const outputSchema = {
      type: 'object',
      properties: { total: { type: 'number' } },
      required: ['total'],
    };
    await service.applyRound([
      {
        bundleId: 'alpha',
        kind: 'manifest',
        raw: JSON.stringify({
          bundleId: 'alpha',
          tools: [{ ...toolJson('alpha.sum'), outputSchema }, toolJson('alpha.plain')],
        }),
        attemptedAt: at(0),
      },
    ]);
    const sum = service.current()?.get('alpha.sum');
    expect(sum?.validateOutput?.({ total: 42.5 })).toBeUndefined();
    expect(sum?.validateOutput?.({ total: 'x' })).toBe('structuredContent/total must be number');
    expect(service.current()?.get('alpha.plain')?.validateOutput).toBeUndefined();
  });
});

describe('catalog history: added, removed, changed names; revisions; rejections (docs/console.md "Catalog history")', () => {
  const ONE = definition('one', 'a.');
  const TWO = definition('two', 'a.b.');

  it('records each publication with its names and revisions, newest first, and nothing for an unchanged round', async () => {
    const { service, clock } = setup([ALPHA, BETA]);
    await service.applyRound([
      pulled('alpha', '1', ['alpha.x', 'alpha.y']),
      pulled('beta', '1', ['beta.z']),
    ]);
    clock.current = at(30);
    await service.applyRound([
      pulled('alpha', '2', ['alpha.x', 'alpha.w'], 30),
      pulled('beta', '1', ['beta.z'], 30),
    ]);
    clock.current = at(60);
    await service.applyRound([
      pulled('alpha', '2', ['alpha.x', 'alpha.w'], 60),
      pulled('beta', '1', ['beta.z'], 60),
    ]);
    const { entries } = service.history();
    expect(entries).toHaveLength(2);
    expect(entries[0]).toMatchObject({
      kind: 'published',
      seq: 2,
      at: at(30).toISOString(),
      toolCount: 3,
      added: ['alpha.w'],
      removed: ['alpha.y'],
      changed: [],
      counts: { added: 1, removed: 1, changed: 0 },
      revisions: { alpha: { from: '1', to: '2' }, beta: { from: '1', to: '1' } },
    });
    expect(entries[1]).toMatchObject({
      kind: 'published',
      seq: 1,
      added: ['alpha.x', 'alpha.y', 'beta.z'],
      revisions: { alpha: { from: null, to: '1' } },
    });
  });

  it('records a rejection with its reason, detail and sources, and counts repeats of the same one', async () => {
    const { service, clock } = setup([ONE, TWO]);
    await service.applyRound([pulled('one', '1', ['a.x']), pulled('two', '1', ['a.b.y'])]);
    for (const seconds of [30, 60]) {
      clock.current = at(seconds);
      await service.applyRound([
        pulled('one', '2', ['a.x', 'a.b.y'], seconds),
        pulled('two', '1', ['a.b.y'], seconds),
      ]);
    }
    const [latest, first] = service.history().entries;
    expect(latest).toMatchObject({
      kind: 'rejected',
      reason: 'ToolNameCollisionError',
      sources: ['one', 'two'],
      repeats: 2,
      at: at(30).toISOString(),
      lastAt: at(60).toISOString(),
    });
    expect(latest?.kind === 'rejected' && latest.detail).toContain('a.b.y');
    expect(first).toMatchObject({ kind: 'published', seq: 1 });
  });
});

describe('onPublished: list changes pushed to clients (docs/operations.md §11 "Notification streams")', () => {
  it('tells each listener of every swap with the catalog it replaced; nothing when the content is unchanged; a throwing listener is ignored', async () => {
    const { service } = setup([definition('a', 'a.')]);
    const seen: [string[] | undefined, string[]][] = [];
    service.onPublished(() => {
      throw new Error('a broken listener');
    });
    const unsubscribe = service.onPublished((previous, next) =>
      seen.push([previous?.tools.map((t) => t.name), next.tools.map((t) => t.name)]),
    );
    await service.applyRound([pulled('a', 'r1', ['a.one'])]);
    await service.applyRound([pulled('a', 'r1', ['a.one'], 30)]);
    await service.applyRound([pulled('a', 'r2', ['a.one', 'a.two'], 60)]);
    expect(seen).toEqual([
      [undefined, ['a.one']],
      [['a.one'], ['a.one', 'a.two']],
    ]);
    unsubscribe();
    await service.applyRound([pulled('a', 'r3', ['a.two'], 90)]);
    expect(seen).toHaveLength(2);
    expect(names(service)).toEqual(['a.two']);
  });
});
