import type { McpConfig } from './mcp-config.model';

/** http(s) URL check shared by manifestUrl, baseEndpoint and localFixture.baseEndpoint. */
export function urlProblem(value: string, opts: { allowQuery: boolean }): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `must be an http(s) URL (got "${value}")`;
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
 * The cross-field rules of contract §3 ("기동 시 검증") and the profile rules. Each returned
 * string names the field and the reason. Field-level checks (types, ranges) come from the
 * class-validator decorators of `McpConfig`.
 */
export function crossFieldProblems(mcp: McpConfig, profile: string): string[] {
  const problems: string[] = [];
  const isLocal = profile === 'local';
  const bundles = Array.isArray(mcp.bundles) ? mcp.bundles : [];

  if (mcp.discovery.enabled) {
    if (bundles.length === 0) {
      problems.push(
        'mcp.bundles: discovery.enabled is true but no bundle is configured; tools/list would stay empty forever (contract §3)',
      );
    } else if (!bundles.some((b) => b.enabled)) {
      problems.push(
        'mcp.bundles: discovery.enabled is true but every bundle has enabled: false; tools/list would stay empty forever (contract §3)',
      );
    }
  } else if (!isLocal) {
    problems.push(
      `mcp.discovery.enabled: is false under profile "${profile}"; only the local profile may run without bundle discovery ` +
        '(the legacy local fixture is for local checks; a deployed gateway needs Tool Service bundles, contract §3)',
    );
  } else if (mcp.localFixture === undefined) {
    problems.push(
      'mcp.localFixture: is required when discovery.enabled is false (the legacy local JSON fixture: file and baseEndpoint)',
    );
  }

  const firstById = new Map<string, number>();
  bundles.forEach((bundle, i) => {
    const at = `mcp.bundles[${i}]`;
    if (typeof bundle.id === 'string') {
      const first = firstById.get(bundle.id);
      if (first !== undefined) {
        problems.push(`${at}.id: "${bundle.id}" duplicates mcp.bundles[${first}].id (contract §3)`);
      } else {
        firstById.set(bundle.id, i);
      }
    }
    if (typeof bundle.manifestUrl === 'string') {
      const p = urlProblem(bundle.manifestUrl, { allowQuery: true });
      if (p) problems.push(`${at}.manifestUrl: ${p}`);
    }
    if (typeof bundle.baseEndpoint === 'string') {
      const p = urlProblem(bundle.baseEndpoint, { allowQuery: false });
      if (p) problems.push(`${at}.baseEndpoint: ${p}`);
    }
    if (bundle.fallbackManifestFile !== undefined && !isLocal) {
      problems.push(
        `${at}.fallbackManifestFile: is only allowed in the local profile (profile is "${profile}"; contract §3)`,
      );
    }
    const auth = bundle.authorization;
    if (auth?.mode === 'static' && (auth.valueEnv === undefined || auth.valueEnv === '')) {
      problems.push(`${at}.authorization.valueEnv: is required with mode static`);
    }
  });

  for (let i = 0; i < bundles.length; i++) {
    for (let j = i + 1; j < bundles.length; j++) {
      const a = bundles[i]?.namePrefix;
      const b = bundles[j]?.namePrefix;
      if (typeof a !== 'string' || typeof b !== 'string') continue;
      if (a === b) {
        problems.push(
          `mcp.bundles[${j}].namePrefix: "${b}" duplicates mcp.bundles[${i}].namePrefix (contract §3)`,
        );
      } else if (b.startsWith(a) || a.startsWith(b)) {
        const [short, long] = b.startsWith(a) ? [i, j] : [j, i];
        problems.push(
          `mcp.bundles[${long}].namePrefix: "${bundles[long]?.namePrefix}" starts with mcp.bundles[${short}].namePrefix ` +
            `"${bundles[short]?.namePrefix}", so a tool name could belong to both (contract §3)`,
        );
      }
    }
  }

  if (mcp.localFixture !== undefined) {
    if (mcp.discovery.enabled) {
      problems.push('mcp.localFixture: is only used when discovery.enabled is false; remove it');
    }
    if (!isLocal) {
      problems.push(
        `mcp.localFixture: is only allowed in the local profile (profile is "${profile}")`,
      );
    }
    if (typeof mcp.localFixture.baseEndpoint === 'string') {
      const p = urlProblem(mcp.localFixture.baseEndpoint, { allowQuery: false });
      if (p) problems.push(`mcp.localFixture.baseEndpoint: ${p}`);
    }
  }
  return problems;
}
