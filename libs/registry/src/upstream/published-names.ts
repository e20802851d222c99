import { createHash } from 'node:crypto';

/** Longest published tool or prompt name: what every known client accepts (wire notes §6). */
export const MAX_PUBLISHED_NAME = 64;
/** The characters every known client accepts in a tool name (wire notes §6). */
const OUTSIDE_SAFE = /[^A-Za-z0-9_-]/g;

function shortHash(original: string): string {
  return createHash('sha256').update(original, 'utf8').digest('hex').slice(0, 8);
}

/**
 * Published names for one upstream's tool (or prompt) names (docs/operations.md §10 "Names"):
 * `prefix` + name with every character outside [A-Za-z0-9_-] written `_`, at most 64 characters. A
 * name that had to be cut, or whose rewrite equals another's, ends in `_` + 8 hex digits of the
 * SHA-256 of its original name instead (stable across replicas and restarts); a name already safe
 * keeps its plain form. Returns original → published, for every name given (duplicates collapse).
 */
/**
 * The name an upstream's entry is published under before collisions and the length bound are
 * settled (publishNames): the prefix, then the name with every character outside
 * `[A-Za-z0-9_-]` as `_`. What a published name starts with is this one's start.
 */
export function publishedForm(prefix: string, original: string): string {
  return prefix + original.replace(OUTSIDE_SAFE, '_');
}

export function publishNames(prefix: string, originals: readonly string[]): Map<string, string> {
  const rewritten = new Map<string, string>();
  for (const original of originals) {
    if (!rewritten.has(original)) rewritten.set(original, publishedForm(prefix, original));
  }
  const claimants = new Map<string, string[]>();
  for (const [original, name] of rewritten) {
    const list = claimants.get(name);
    if (list === undefined) claimants.set(name, [original]);
    else list.push(original);
  }
  const published = new Map<string, string>();
  for (const [original, name] of rewritten) {
    const shared = (claimants.get(name)?.length ?? 0) > 1;
    // The original that needed no rewrite keeps the plain name when others collide with it.
    const keepsPlain = !shared || prefix + original === name;
    if (keepsPlain && name.length <= MAX_PUBLISHED_NAME) {
      published.set(original, name);
    } else {
      const suffix = `_${shortHash(original)}`;
      published.set(original, name.slice(0, MAX_PUBLISHED_NAME - suffix.length) + suffix);
    }
  }
  return published;
}
