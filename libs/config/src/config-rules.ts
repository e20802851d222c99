import { fieldPath, invalid, type ConfigProblem } from './config-problem';
import { shownUrl } from './shown-url';
import type { BundleConfig, McpConfig } from './mcp-config.model';
import type { UpstreamConfig } from './upstream-config.model';
import type { VirtualServerConfig } from './virtual-servers-config.model';

/** A mapping (not null, not a list): the rules across fields read only sections of this shape. */
export function isObject<T>(value: T | null | undefined): value is T & object {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** http(s) URL check shared by manifestUrl, baseEndpoint and localFixture.baseEndpoint. */
export function urlProblem(value: string, opts: { allowQuery: boolean }): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    // what was given, without what could be credentials (userinfo, query, fragment)
    return `must be an http(s) URL (got ${shownUrl(value)})`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `must be an http(s) URL (got scheme "${url.protocol.replace(':', '')}")`;
  }
  if (url.username !== '' || url.password !== '') return 'must not carry credentials in the URL';
  if (!opts.allowQuery && (url.search !== '' || url.hash !== '')) {
    return 'must not have a query or fragment (tool names are appended as a path segment)';
  }
  return undefined;
}

/**
 * The cross-field rules of contract §3 ("기동 시 검증") and the profile rules, each problem naming
 * the field and the reason. Field-level checks (types, ranges) come from the class-validator
 * decorators of `McpConfig`; the prefixes of every source are prefixProblems'.
 */
export function crossFieldProblems(mcp: McpConfig, profile: string): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const isLocal = profile === 'local';
  // Sections of the wrong type (null, a string…) were already reported field by field; the
  // cross-field rules look only at what has the right shape.
  const bundles: BundleConfig[] = Array.isArray(mcp.bundles) ? mcp.bundles.filter(isObject) : [];
  // A discovery.enabled that is not a boolean was reported already; judge the rest as if on.
  const discoveryEnabled = isObject(mcp.discovery) ? mcp.discovery.enabled !== false : true;
  const localFixture = isObject(mcp.localFixture) ? mcp.localFixture : undefined;

  // A budget smaller than one allowed answer would answer every big call "busy, try again".
  const execution = isObject(mcp.execution) ? mcp.execution : undefined;
  if (
    execution !== undefined &&
    Number.isInteger(execution.maxInFlightAnswerBytes) &&
    Number.isInteger(execution.maxResponseBytes) &&
    execution.maxInFlightAnswerBytes < execution.maxResponseBytes
  ) {
    problems.push(
      invalid(
        'mcp.execution.maxInFlightAnswerBytes',
        `${execution.maxInFlightAnswerBytes} is smaller than ` +
          `execution.maxResponseBytes (${execution.maxResponseBytes}); one answer within the size ` +
          'limit could never be held',
      ),
    );
  }

  // Upstream MCP servers are sources too: with one configured, no bundle is needed
  // (docs/operations.md §10 "Configuration").
  const upstreams: UpstreamConfig[] = Array.isArray(mcp.upstreams)
    ? mcp.upstreams.filter(isObject)
    : [];
  if (discoveryEnabled) {
    if (!Array.isArray(mcp.bundles)) {
      // not a list: reported as such by the field checks
    } else if (bundles.length === 0 && upstreams.length === 0) {
      problems.push(
        invalid(
          'mcp.bundles',
          'discovery.enabled is true but no bundle is configured; tools/list would stay empty forever (contract §3)',
        ),
      );
    } else if (!bundles.some((b) => b.enabled) && !upstreams.some((u) => u.enabled !== false)) {
      problems.push(
        invalid(
          'mcp.bundles',
          'discovery.enabled is true but every bundle has enabled: false; tools/list would stay empty forever (contract §3)',
        ),
      );
    }
  } else if (!isLocal) {
    problems.push(
      invalid(
        'mcp.discovery.enabled',
        `is false under profile "${profile}"; only the local profile may run without bundle discovery ` +
          '(the legacy local fixture is for local checks; a deployed gateway needs Tool Service bundles, contract §3)',
      ),
    );
  } else if (localFixture === undefined) {
    problems.push(
      invalid(
        'mcp.localFixture',
        'is required when discovery.enabled is false (the legacy local JSON fixture: file and baseEndpoint)',
      ),
    );
  }

  const firstById = new Map<string, number>();
  const indexOf = new Map(
    (Array.isArray(mcp.bundles) ? mcp.bundles : []).map((b, i) => [b, i] as const),
  );
  bundles.forEach((bundle) => {
    const i = indexOf.get(bundle) ?? -1;
    const at = `mcp.bundles[${i}]`;
    if (typeof bundle.id === 'string') {
      const first = firstById.get(bundle.id);
      if (first !== undefined) {
        problems.push({
          path: `${at}.id`,
          code: 'duplicate-id',
          other: `mcp.bundles[${first}]`,
          message: `"${bundle.id}" duplicates mcp.bundles[${first}].id (contract §3)`,
        });
      } else {
        firstById.set(bundle.id, i);
      }
    }
    if (typeof bundle.manifestUrl === 'string') {
      const p = urlProblem(bundle.manifestUrl, { allowQuery: true });
      if (p) problems.push(invalid(`${at}.manifestUrl`, p));
    }
    if (typeof bundle.baseEndpoint === 'string') {
      const p = urlProblem(bundle.baseEndpoint, { allowQuery: false });
      if (p) problems.push(invalid(`${at}.baseEndpoint`, p));
    }
    if (bundle.fallbackManifestFile !== undefined && !isLocal) {
      problems.push(
        invalid(
          `${at}.fallbackManifestFile`,
          `is only allowed in the local profile (profile is "${profile}"; contract §3)`,
        ),
      );
    }
    if (typeof bundle.namePrefix === 'string') {
      // Tool names become the call path below baseEndpoint; such a prefix could never pass.
      const segments = bundle.namePrefix.split('/');
      if (segments.slice(0, -1).some((seg) => seg === '' || seg === '.' || seg === '..')) {
        problems.push(
          invalid(
            `${at}.namePrefix`,
            `"${bundle.namePrefix}" has an empty, "." or ".." path segment; no tool name could use it`,
          ),
        );
      }
    }
    const auth = isObject(bundle.authorization) ? bundle.authorization : undefined;
    if (auth?.mode === 'static' && (auth.valueEnv === undefined || auth.valueEnv === '')) {
      problems.push(invalid(`${at}.authorization.valueEnv`, 'is required with mode static'));
    }
  });

  if (localFixture !== undefined) {
    if (discoveryEnabled) {
      problems.push(
        invalid('mcp.localFixture', 'is only used when discovery.enabled is false; remove it'),
      );
    }
    if (!isLocal) {
      problems.push(
        invalid(
          'mcp.localFixture',
          `is only allowed in the local profile (profile is "${profile}")`,
        ),
      );
    }
    if (typeof localFixture.baseEndpoint === 'string') {
      const p = urlProblem(localFixture.baseEndpoint, { allowQuery: false });
      if (p) problems.push(invalid('mcp.localFixture.baseEndpoint', p));
    }
  }

  if (isObject(mcp.toolSearch) && mcp.toolSearch.select === true && mcp.toolSearch.enabled !== true)
    problems.push(
      invalid(
        'mcp.toolSearch.select',
        'needs mcp.toolSearch.enabled: true (selection is a part of tool search)',
      ),
    );

  // Virtual servers (docs/operations.md §16): one path each, and a view that can hold a tool.
  const servers = Array.isArray(mcp.virtualServers) ? mcp.virtualServers : [];
  const serverIds = new Map<string, number>();
  servers.forEach((server, i) => {
    if (!isObject(server)) return;
    const at = `mcp.virtualServers[${i}]`;
    if (typeof server.id === 'string') {
      const first = serverIds.get(server.id);
      if (first !== undefined)
        problems.push({
          path: `${at}.id`,
          code: 'duplicate-id',
          other: `mcp.virtualServers[${first}]`,
          message: `"${server.id}" duplicates mcp.virtualServers[${first}].id`,
        });
      else serverIds.set(server.id, i);
    }
    problems.push(...virtualServerProblems(server, at));
  });
  return problems;
}

/**
 * A virtual server's own rules beyond its field decorators (docs/operations.md §16), for the
 * boot (`at`: `mcp.virtualServers[i]`) and for a registration (`at`: '', the body) alike.
 */
export function virtualServerProblems(
  server: Partial<VirtualServerConfig>,
  at: string,
): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if (server.toolSelect === true && server.toolSearch !== true)
    problems.push(
      invalid(
        fieldPath(at, 'toolSelect'),
        'needs toolSearch: true (selection is a part of tool search)',
      ),
    );
  const empty = (list: unknown): boolean => !Array.isArray(list) || list.length === 0;
  if (empty(server.sources) && empty(server.tools) && empty(server.tags))
    problems.push(
      invalid(
        at === '' ? 'body' : at,
        'names no sources, tools or tags, so it would serve nothing; give at least one',
      ),
    );
  return problems;
}
