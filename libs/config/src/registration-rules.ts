import { plainToInstance } from 'class-transformer';
import { validateSync } from './class-validator';
import type { GatewayConfig, UpstreamDefinition } from './gateway-config';
import {
  flattenValidationErrors,
  resolveAuthorization,
  upstreamDefinitionFrom,
} from './load-config';
import type { McpConfig } from './mcp-config.model';
import { registrationCredentialProblems } from './registration-credentials';
import { UpstreamConfig } from './upstream-config.model';
import { PERSONAL_CALLER_HEADERS, UNFORWARDABLE_HEADERS } from '@app/wire';
import { isRegistrationUnforwardableHeader, upstreamProblems } from './upstream-rules';
import { isClash, renderProblem, type ConfigProblem } from './config-problem';
import { prefixProblems } from './prefix-rules';

/**
 * An upstream registered at runtime, as stored: the fields of `mcp.upstreams[]`
 * (docs/operations.md §15 "Routes").
 */
export type RegisteredUpstreamConfig = UpstreamConfig;

/**
 * The outcome of checking a registration: the upstream and its definition, or the problems,
 * each naming the body field (`namePrefix: …`) and, for a conflict, the other source.
 * `conflict` is true when the only problems are clashes with other sources (409,
 * docs/operations.md §15 "Routes").
 */
export type RegistrationCheck =
  | {
      readonly ok: true;
      readonly upstream: RegisteredUpstreamConfig;
      readonly definition: UpstreamDefinition;
    }
  | { readonly ok: false; readonly conflict: boolean; readonly problems: readonly string[] };

/**
 * The `authorization` members a registration may carry: the mode and references (env variable
 * names, the token endpoint and audience of tokenExchange), never a secret value.
 */
const AUTHORIZATION_KEYS = new Set([
  'mode',
  'valueEnv',
  'tokenEndpoint',
  'clientId',
  'clientSecretEnv',
  'audience',
  'scope',
]);

/** The personal caller headers, for the problem that names why one is refused. */
const PERSONAL_HEADERS: ReadonlySet<string> = new Set(PERSONAL_CALLER_HEADERS);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Checks an upstream to register at runtime with the boot rules (docs/operations.md §15 "Routes"):
 * the field decorators of UpstreamConfig, `upstreamProblems` and `prefixProblems` over every configured source, the
 * upstreams registered already (`registered`) and this one, as if all were in one config file
 * (ids unique, prefixes disjoint, http(s) URL without credentials, forwardable headers); a
 * static authorization's env variable must be set; no `passthrough`, and a tokenExchange
 * endpoint the configuration trusts, for an audience and scope no configured party accepts
 * (registration-credentials.ts). Never throws.
 */
export function checkRegistration(
  body: unknown,
  config: Pick<GatewayConfig, 'mcp' | 'admin'>,
  registered: readonly RegisteredUpstreamConfig[],
): RegistrationCheck {
  if (!isRecord(body))
    return {
      ok: false,
      conflict: false,
      problems: ['body: must be a JSON object with the fields of an mcp.upstreams[] entry'],
    };
  const problems: string[] = [];
  const auth = body.authorization;
  if (isRecord(auth))
    for (const key of Object.keys(auth))
      if (!AUTHORIZATION_KEYS.has(key))
        problems.push(
          `authorization.${key}: secret values are never accepted; put the value in an environment ` +
            'variable of the gateway and name it in authorization.valueEnv (mode static)',
        );
  if (problems.length > 0) return { ok: false, conflict: false, problems };

  const upstream = plainToInstance(UpstreamConfig, body, { exposeDefaultValues: true });
  const fieldProblems = flattenValidationErrors(
    validateSync(upstream, { whitelist: true, forbidNonWhitelisted: true }),
    '',
  );
  // the checks that read authorization's values run only on well-formed ones: a misplaced secret
  // in valueEnv must not be quoted back by them
  const authorizationWellFormed = !fieldProblems.some((p) => p.path.startsWith('authorization'));
  problems.push(
    ...fieldProblems.map((problem) =>
      // a misplaced secret must not come back in the answer or the audit line
      renderProblem(
        problem.path.startsWith('authorization')
          ? { path: problem.path, code: problem.code, message: problem.message }
          : problem,
      ),
    ),
  );
  // A live upstream is fanned out from the boot configuration only
  // (docs/operations.md §11 "Live lists")
  if (upstream.lists === 'live')
    problems.push(
      'lists: "live" is available for upstreams in mcp.upstreams[] only; register it with ' +
        'lists "snapshot" (the default) or configure it',
    );
  // an earlier registration's audience is a clash (409), like its id or prefix
  const audienceClashes: string[] = [];
  for (const problem of registrationCredentialProblems(
    upstream,
    config.mcp,
    config.admin?.scope ?? config.mcp.admin?.scope,
    registered,
  ))
    (isClash(problem) ? audienceClashes : problems).push(renderProblem(problem));
  // the caller's credentials never go to a URL the registrant chose (docs/security.md)
  for (const name of Array.isArray(upstream.forwardHeaders) ? upstream.forwardHeaders : [])
    if (
      typeof name === 'string' &&
      !UNFORWARDABLE_HEADERS.has(name.toLowerCase()) &&
      isRegistrationUnforwardableHeader(name)
    )
      problems.push(
        (PERSONAL_HEADERS.has(name.toLowerCase())
          ? `forwardHeaders: "${name}" identifies the caller (a personal caller header, ` +
            'redacted like Authorization)'
          : `forwardHeaders: "${name}" may carry a caller's credentials (a token, secret, cookie, ` +
            'session or API key, as auth proxies set them)') +
          ' and is never forwarded to a registered upstream; configure the upstream in ' +
          'mcp.upstreams[] to forward it',
      );
  // Every rule runs on what was sent, as the boot's checks do (load-config.ts): the answer names
  // every broken field at once, not the first stage's.
  const configured = config.mcp.upstreams;
  const all = [...configured, ...registered, upstream];
  const at = `mcp.upstreams[${all.length - 1}]`;
  const nameOf = (path: string): string => {
    const m = /^mcp\.(bundles|upstreams)\[(\d+)\]$/.exec(path);
    if (m === null) return path;
    const i = Number(m[2]);
    if (m[1] === 'bundles') return `bundle "${config.mcp.bundles[i]?.id ?? i}"`;
    const other = all[i];
    return `${i < configured.length ? 'configured' : 'registered'} upstream "${other?.id ?? i}"`;
  };
  const conflicts: string[] = [...audienceClashes];
  const mcp: McpConfig = { ...config.mcp, upstreams: all };
  for (const problem of [...upstreamProblems(mcp), ...prefixProblems(mcp)]) {
    // Only this upstream's problems, a clash another source reports against it, or a source
    // with the prefix "" that this one would stop being the sole enabled source: every other
    // source passed these rules already, so a problem on its path comes from this one
    // (docs/operations.md §10 "Configuration": "" only for the only enabled source).
    const own = problem.path.startsWith(`${at}.`);
    if (!own && problem.code === 'shared-empty-prefix') {
      const holder = /^(mcp\.upstreams\[\d+\])\./.exec(problem.path)?.[1] ?? problem.path;
      problems.push(
        `enabled: ${nameOf(holder)} publishes its names without a prefix (namePrefix ""), ` +
          'which is allowed only while it is the only enabled source; beside it the names of ' +
          'two sources could collide (register this upstream disabled, or give that one a prefix)',
      );
      continue;
    }
    if (!own && problem.other !== at) continue;
    // the answer names sources, not paths the registrant never wrote
    const text = (
      own ? renderProblem(problem).slice(at.length + 1) : `namePrefix: ${renderProblem(problem)}`
    ).replace(
      /(mcp\.(?:bundles|upstreams)\[\d+\])\.(id|namePrefix)/g,
      (_m, path: string, field: string) =>
        `the ${field} of ${path === at ? 'this upstream' : nameOf(path)}`,
    );
    (isClash(problem) ? conflicts : problems).push(text);
  }
  // Only the variables the allow-list names may be sent to an upstream (never the gateway's own)
  const authorizationSent: Partial<UpstreamConfig['authorization']> =
    authorizationWellFormed && isRecord(upstream.authorization) ? upstream.authorization : {};
  for (const key of ['valueEnv', 'clientSecretEnv'] as const) {
    const name = authorizationSent[key];
    if (
      typeof name === 'string' &&
      config.admin !== undefined &&
      !config.admin.secretEnvAllowed(name)
    )
      problems.push(
        `authorization.${key}: ${name} is not a variable registrations may name ` +
          "(mcp.admin.allowedSecretEnv; the gateway's own secrets never)",
      );
  }
  // the variables this registration names (static valueEnv, tokenExchange clientSecretEnv)
  const env: Record<string, string | undefined> = {};
  for (const name of [authorizationSent.valueEnv, authorizationSent.clientSecretEnv])
    if (typeof name === 'string') env[name] = config.admin?.secretEnv(name);
  const authorizationProblems: ConfigProblem[] = [];
  const authorization = authorizationWellFormed
    ? resolveAuthorization(upstream, env, '', authorizationProblems)
    : undefined;
  problems.push(...authorizationProblems.map(renderProblem));
  if (problems.length > 0 || conflicts.length > 0 || authorization === undefined)
    return {
      ok: false,
      conflict: problems.length === 0,
      problems: [...conflicts, ...problems],
    };
  return {
    ok: true,
    upstream,
    definition: upstreamDefinitionFrom(upstream, authorization, config.mcp),
  };
}
