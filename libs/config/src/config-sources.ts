import { invalid, type ConfigProblem } from './config-problem';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';

/** The merged raw tree of the config files, before validation. */
export interface RawConfigSources {
  readonly raw: Record<string, unknown>;
  readonly sources: readonly string[];
  /** Unreadable or unparseable files, missing profile files: reported with the field problems. */
  readonly problems: readonly ConfigProblem[];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Objects merge key by key; arrays and scalars of `over` replace those of `base`. */
export function deepMerge(base: unknown, over: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(over)) return over === undefined ? base : over;
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) out[key] = deepMerge(base[key], value);
  return out;
}

function readYamlFile(
  path: string,
  problems: ConfigProblem[],
): Record<string, unknown> | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    problems.push(invalid(path, `cannot be read (${code})`));
    return undefined;
  }
  try {
    const parsed: unknown = parseYaml(text);
    if (parsed === null || parsed === undefined) return {};
    if (!isPlainObject(parsed)) {
      problems.push(invalid(path, 'must hold a YAML mapping with a top-level "mcp:" key'));
      return undefined;
    }
    try {
      JSON.stringify(parsed);
    } catch {
      // A YAML alias that refers to its own parent (&x { a: *x }) has no finite value.
      problems.push(invalid(path, 'holds a recursive YAML alias, which has no finite value'));
      return undefined;
    }
    return parsed;
  } catch (err) {
    const first = (err as Error).message.split('\n')[0] ?? '';
    problems.push(invalid(path, `is not valid YAML (${first.replace(/:\s*$/, '')})`));
    return undefined;
  }
}

/**
 * Reads the config files that apply: `MCP_CONFIG_FILE` alone when set, otherwise
 * `config/application.yaml` merged with `config/application-<profile>.yaml` (profile wins).
 */
export function readConfigSources(
  profile: string,
  configFile: string | undefined,
  cwd: string,
): RawConfigSources {
  const problems: ConfigProblem[] = [];
  if (configFile !== undefined && configFile !== '') {
    const path = resolve(cwd, configFile);
    const raw = readYamlFile(path, problems) ?? {};
    return { raw, sources: [path], problems };
  }
  const dir = join(cwd, 'config');
  const sources: string[] = [];
  let merged: unknown = {};
  const basePath = [join(dir, 'application.yaml'), join(dir, 'application.yml')].find(existsSync);
  if (basePath !== undefined) {
    merged = deepMerge(merged, readYamlFile(basePath, problems) ?? {});
    sources.push(basePath);
  }
  const profilePath = [`application-${profile}.yaml`, `application-${profile}.yml`]
    .map((name) => join(dir, name))
    .find(existsSync);
  if (profilePath === undefined) {
    problems.push(
      invalid(
        `APP_PROFILE=${profile}`,
        `no profile file config/application-${profile}.yaml (set MCP_CONFIG_FILE or add the file)`,
      ),
    );
  } else {
    merged = deepMerge(merged, readYamlFile(profilePath, problems) ?? {});
    sources.push(profilePath);
  }
  return { raw: merged as Record<string, unknown>, sources, problems };
}
