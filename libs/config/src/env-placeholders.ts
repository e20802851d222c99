import { invalid, type ConfigProblem } from './config-problem';

type Env = Readonly<Record<string, string | undefined>>;

/** `${NAME}` or `${NAME:default}`; NAME as environment variables are named. `$${` is a literal `${`. */
const PLACEHOLDER = /\$(\$)?\{([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}/g;

function expandString(value: string, env: Env, path: string, problems: ConfigProblem[]): string {
  return value.replace(
    PLACEHOLDER,
    (whole, escaped: string | undefined, name: string, fallback: string | undefined) => {
      if (escaped !== undefined) return whole.slice(1);
      const set = env[name];
      if (set !== undefined && set !== '') return set;
      if (fallback !== undefined) return fallback;
      problems.push(invalid(path, `\${${name}} names an environment variable that is not set`));
      return whole;
    },
  );
}

/**
 * Replaces `${NAME}` and `${NAME:default}` in every string value of the raw config tree with
 * the environment variable NAME (or the default when NAME is unset or empty), the way Spring
 * profiles read them; `$${` stays a literal `${`. Keys, numbers and booleans are left alone;
 * a numeric field that holds a placeholder stays a string and is refused like any string there.
 *
 * @param tree the parsed YAML tree (not modified)
 * @param problems receives one line per unset variable without a default, named by its path
 *   (e.g. `mcp.bundles[0].manifestUrl: ${SAMPLE_PORT} names an environment variable that is not set`)
 * @returns a new tree with every placeholder resolved
 */
export function expandEnvPlaceholders(
  tree: Record<string, unknown>,
  env: Env,
  problems: ConfigProblem[],
): Record<string, unknown> {
  const walk = (value: unknown, path: string): unknown => {
    if (typeof value === 'string') return expandString(value, env, path, problems);
    if (Array.isArray(value)) return value.map((item, i) => walk(item, `${path}[${i}]`));
    if (typeof value === 'object' && value !== null) {
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) {
        out[key] = walk(item, path === '' ? key : `${path}.${key}`);
      }
      return out;
    }
    return value;
  };
  return walk(tree, '') as Record<string, unknown>;
}
