import { invalid, type ConfigProblem } from './config-problem';
import { shownUrl } from './shown-url';
import type { AccessConfig, AccessMatchConfig, AuthConfig } from './auth-config.model';

type Env = Readonly<Record<string, string | undefined>>;

function isObject<T>(value: T | null | undefined): value is T {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An absolute http(s) URL without a fragment, or undefined. */
function httpUrl(value: string): URL | undefined {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hash === ''
      ? url
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The cross-field rules of `mcp.auth` (docs/operations.md §13): `jwt` needs `issuer`, `audience`
 * (an absolute URI without fragment, RFC 8707 §2) and a way to check tokens (`jwksUrl` and/or
 * `introspectionUrl`); introspection needs its client id and secret (the secret read from the
 * environment variable named). Returns the problems, each naming its field, and the secret.
 */
export function authProblems(
  auth: AuthConfig | undefined,
  env: Env,
): { problems: ConfigProblem[]; introspectionClientSecret?: string } {
  const problems: ConfigProblem[] = [];
  if (!isObject(auth) || auth.mode !== 'jwt') return { problems };
  if (auth.issuer === undefined)
    problems.push(invalid('mcp.auth.issuer', 'is required with mode jwt (the tokens\u2019 "iss")'));
  if (auth.audience === undefined)
    problems.push(
      invalid(
        'mcp.auth.audience',
        'is required with mode jwt (the canonical resource URI, e.g. https://gw.example.com/mcp)',
      ),
    );
  else if (typeof auth.audience === 'string' && httpUrl(auth.audience) === undefined)
    problems.push(
      invalid(
        'mcp.auth.audience',
        `must be an absolute http(s) URI without a fragment (RFC 8707) (got ${shownUrl(auth.audience)})`,
      ),
    );
  if (auth.jwksUrl === undefined && auth.introspectionUrl === undefined)
    problems.push(
      invalid(
        'mcp.auth.jwksUrl',
        'is required with mode jwt unless mcp.auth.introspectionUrl is set',
      ),
    );
  for (const key of ['jwksUrl', 'introspectionUrl'] as const) {
    const value = auth[key];
    if (typeof value === 'string' && httpUrl(value) === undefined)
      problems.push(invalid(`mcp.auth.${key}`, `must be an http(s) URL (got ${shownUrl(value)})`));
  }
  let introspectionClientSecret: string | undefined;
  if (auth.introspectionUrl !== undefined) {
    if (auth.introspectionClientId === undefined)
      problems.push(
        invalid(
          'mcp.auth.introspectionClientId',
          'is required with introspectionUrl (RFC 7662 §2.1)',
        ),
      );
    const name = auth.introspectionClientSecretEnv;
    if (name === undefined)
      problems.push(
        invalid(
          'mcp.auth.introspectionClientSecretEnv',
          'is required with introspectionUrl (the environment variable holding the client secret)',
        ),
      );
    else if (typeof name === 'string') {
      introspectionClientSecret = env[name];
      // The value is a secret: name the variable, never the value.
      if (introspectionClientSecret === undefined || introspectionClientSecret === '')
        problems.push(
          invalid(
            'mcp.auth.introspectionClientSecretEnv',
            `environment variable ${name} is not set or empty`,
          ),
        );
    }
  }
  if (Array.isArray(auth.algorithms) && auth.algorithms.length === 0)
    problems.push(invalid('mcp.auth.algorithms', 'must name at least one algorithm'));
  return { problems, introspectionClientSecret };
}

function matchProblem(match: AccessMatchConfig): string | undefined {
  const kinds = [
    match.claim !== undefined || match.value !== undefined,
    match.subject !== undefined,
    match.scope !== undefined,
  ].filter(Boolean).length;
  if (kinds !== 1) return 'must be exactly one of {claim, value}, {subject} or {scope}';
  if ((match.claim === undefined) !== (match.value === undefined))
    return '{claim, value} needs both the claim name and the value';
  return undefined;
}

/**
 * The rules of `mcp.access` (docs/operations.md §13 "Access"): each match is one kind; access needs
 * auth.
 */
export function accessProblems(
  access: AccessConfig | undefined,
  auth: AuthConfig | undefined,
): ConfigProblem[] {
  if (!isObject(access)) return [];
  const problems: ConfigProblem[] = [];
  if (isObject(auth) && auth.mode !== 'jwt')
    problems.push(
      invalid(
        'mcp.access',
        'needs mcp.auth.mode jwt (rules match on the caller\u2019s token; without one nobody would be granted anything)',
      ),
    );
  const rules = Array.isArray(access.rules) ? access.rules : [];
  rules.forEach((rule, i) => {
    if (!isObject(rule) || !isObject(rule.match)) return; // reported field by field already
    const problem = matchProblem(rule.match);
    if (problem !== undefined) problems.push(invalid(`mcp.access.rules[${i}].match`, problem));
    const sources = Array.isArray(rule.sources) ? rule.sources : [];
    const tools = Array.isArray(rule.tools) ? rule.tools : [];
    if (sources.length === 0 && tools.length === 0)
      problems.push(invalid(`mcp.access.rules[${i}]`, 'grants nothing; list sources and/or tools'));
  });
  return problems;
}
