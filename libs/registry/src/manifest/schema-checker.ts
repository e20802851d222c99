import { createHash } from 'node:crypto';
import { dialectOf, SchemaDialects, SUPPORTED_DIALECTS } from './schema-dialects';

/**
 * Why a schema was refused, in two parts: `rule` is the gateway's own words (safe for
 * /actuator/toolBundles, contract §9), `cause` what ajv said or the `$schema` declared, which
 * may quote a URL from the manifest and so goes to the log only.
 */
export interface SchemaProblem {
  readonly rule: string;
  readonly cause?: string;
}

/**
 * How much of a schema's checking may run on the event loop, for schemas of sources that may
 * be hostile (upstream MCP servers): ajv compiles a schema in one call that cannot be sliced,
 * and its time grows with the schema's members — each object member and array item, booleans
 * included (`patternProperties` of 3,000 `false` subschemas took 7.6 s) — about 0.04–0.15 ms
 * each, worse than linearly for patterns and wide objects (docs/benchmarks.md, "One schema's
 * compile"). A schema of more than `compileNodes` members is checked against its dialect's
 * meta-schema instead of compiled (as a schema too large for ajv's code generator is), which
 * is linear and about a hundred times cheaper; one of more than `maxNodes` is refused without
 * being read further.
 */
export interface SchemaBounds {
  readonly compileNodes: number;
  readonly maxNodes: number;
}

/**
 * The most members of a schema compiled on the event loop (at most about 40–60 ms of ajv for
 * the costliest kinds, docs/benchmarks.md "One schema's compile"): a larger one is checked by
 * its meta-schema (an upstream's) or compiled in a worker thread (a bundle's manifest,
 * contract §6), and its calls' arguments are left to its source.
 */
export const EVENT_LOOP_COMPILE_NODES = 300;

/** The bounds of an upstream's tool schemas (docs/operations.md §10 "Checks"). */
export const UPSTREAM_SCHEMA_BOUNDS: SchemaBounds = {
  compileNodes: EVENT_LOOP_COMPILE_NODES,
  maxNodes: 40_000,
};

/**
 * Whether a parsed manifest holds a tool schema of more than `limit` members: one the event
 * loop should not compile (the walk stops at the first).
 */
export function holdsLargeSchema(manifest: unknown, limit: number): boolean {
  const tools = (manifest as { tools?: unknown } | null)?.tools;
  if (!Array.isArray(tools)) return false;
  for (const tool of tools) {
    if (typeof tool !== 'object' || tool === null) continue;
    const { inputSchema, outputSchema } = tool as Record<string, unknown>;
    if (schemaNodes(inputSchema, limit) > limit || schemaNodes(outputSchema, limit) > limit)
      return true;
  }
  return false;
}

/**
 * The members of a JSON value — every object member and array item, of any type, and the
 * value itself — counted up to `limit + 1` (the walk stops there): what a schema costs ajv to
 * compile and the meta-schema to check grows with it.
 */
export function schemaNodes(value: unknown, limit: number): number {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && count <= limit) {
    const node = stack.pop();
    if (node === undefined) continue;
    count++;
    if (typeof node !== 'object' || node === null) continue;
    for (const item of Array.isArray(node) ? node : Object.values(node)) stack.push(item);
  }
  return count;
}

/**
 * Checks that a tool schema compiles with ajv in the dialect its `$schema` declares (MCP
 * 2025-11-25: none means 2020-12; see schema-dialects.ts). An unknown `$schema` is a problem
 * naming the declared URI. Remote `$ref`s are never fetched, so they fail as unresolved.
 *
 * Results are cached by a digest of the schema's JSON text, because a refresh revalidates the
 * same schemas every cycle; `retainOnlySeen` drops what the last round did not see, so the
 * cache never outgrows the catalog. Compiled schemas are removed from ajv at once: the gateway
 * does not validate arguments (the Tool Service does), it only refuses schemas that cannot
 * work. An outputSchema (`mustCompile`) must really compile, since the gateway validates
 * answers with it; an inputSchema too large for ajv's code generator is checked against its
 * meta-schema instead.
 */
export class SchemaChecker {
  private readonly dialects = new SchemaDialects();
  /**
   * An outputSchema is compiled as OutputValidators compiles it: its patterns matched by RE2, in
   * time linear in the answer, so a pattern that backtracks (`^(a|a)*$`, which no nesting check
   * catches) cannot hold the event loop on a Tool Service's answer.
   */
  private readonly linearDialects = new SchemaDialects({ linear: true });
  private cache = new Map<string, SchemaProblem | null>();
  private seen = new Set<string>();

  /** Marks schemas (by digest) as known to compile, so they are not compiled again. */
  seed(goodDigests: Iterable<string>): void {
    for (const digest of goodDigests) {
      this.cache.set(digest, null);
      // seen this round, so retainOnlySeen keeps what a worker checked
      this.seen.add(digest);
    }
  }

  /** Digests of every schema known to compile. */
  goodDigests(): string[] {
    return [...this.cache].filter(([, problem]) => problem === null).map(([digest]) => digest);
  }

  /** undefined when the schema compiles in its dialect; otherwise the problem. */
  check(
    schema: Readonly<Record<string, unknown>>,
    options: { readonly mustCompile?: boolean; readonly bounds?: SchemaBounds } = {},
  ): SchemaProblem | undefined {
    const { bounds } = options;
    const nodes = bounds === undefined ? 0 : schemaNodes(schema, bounds.maxNodes);
    if (bounds !== undefined && nodes > bounds.maxNodes)
      return {
        rule: `it is too large to check (more than ${bounds.maxNodes} schema members)`,
      };
    const metaOnly = bounds !== undefined && nodes > bounds.compileNodes;
    // A digest, not the text: the cache of a 10,000-tool catalog stays small. Output schemas
    // have keys of their own: the same schema may pass as input and fail as output; so have
    // schemas checked against the meta-schema only.
    const key = createHash('sha1')
      .update(options.mustCompile === true ? '\u0000out\u0000' : '')
      .update(metaOnly ? '\u0000meta\u0000' : '')
      .update(JSON.stringify(schema))
      .digest('base64url');
    this.seen.add(key);
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached ?? undefined;
    const problem = metaOnly
      ? this.largeSchemaProblem(schema, options.mustCompile === true)
      : this.compile(schema, options.mustCompile === true);
    this.cache.set(key, problem);
    return problem ?? undefined;
  }

  /** Forget results for schemas not checked since the previous call (bounds the cache). */
  retainOnlySeen(): void {
    const next = new Map<string, SchemaProblem | null>();
    for (const key of this.seen) {
      const value = this.cache.get(key);
      if (value !== undefined) next.set(key, value);
    }
    this.cache = next;
    this.seen = new Set();
  }

  get size(): number {
    return this.cache.size;
  }

  /** A schema over SchemaBounds.compileNodes: checked against its meta-schema, not compiled. */
  private largeSchemaProblem(
    schema: Readonly<Record<string, unknown>>,
    mustCompile: boolean,
  ): SchemaProblem | null {
    const declared = dialectOf(schema);
    if (!declared.ok) return this.compile(schema, mustCompile);
    const notCompiling = `does not compile as JSON Schema ${declared.dialect}`;
    if (mustCompile) return { rule: `${notCompiling}: it is too large to compile` };
    try {
      return metaSchemaProblem(this.dialects.instanceFor(declared.dialect), schema, notCompiling);
    } finally {
      this.dialects.clear();
    }
  }

  private compile(
    schema: Readonly<Record<string, unknown>>,
    mustCompile: boolean,
  ): SchemaProblem | null {
    const declared = dialectOf(schema);
    if (!declared.ok) {
      return {
        rule: `$schema is not a supported JSON Schema dialect (${SUPPORTED_DIALECTS.join(', ')}; none means 2020-12)`,
        cause: `$schema ${declared.declared}`,
      };
    }
    const notCompiling = `does not compile as JSON Schema ${declared.dialect}`;
    const ajv = (mustCompile ? this.linearDialects : this.dialects).instanceFor(declared.dialect);
    try {
      ajv.compile(schema);
      return null;
    } catch (err) {
      const cause = err instanceof Error ? err.message : String(err);
      if (err instanceof Error && err.name === 'RE2JSSyntaxException')
        return {
          rule: `${notCompiling}: a pattern is not one RE2 matches in linear time (no look-around or back-references)`,
          cause,
        };
      if (!(err instanceof RangeError)) return { rule: notCompiling, cause };
      if (mustCompile) return { rule: `${notCompiling}: it is too large to compile`, cause };
      // Too large for ajv's code generator (thousands of properties): it is no less a
      // schema, so fall back to checking it against its dialect's meta-schema.
      return metaSchemaProblem(ajv, schema, notCompiling);
    } finally {
      // Every schema, nested $id's included, leaves ajv: one manifest's ids must not clash
      // with the next one's, or replicas with different histories would disagree.
      this.dialects.clear();
      this.linearDialects.clear();
    }
  }
}

/** A schema checked against its dialect's meta-schema (linear; nothing is compiled). */
function metaSchemaProblem(
  ajv: ReturnType<SchemaDialects['instanceFor']>,
  schema: Readonly<Record<string, unknown>>,
  notCompiling: string,
): SchemaProblem | null {
  try {
    return ajv.validateSchema(schema) === true
      ? null
      : { rule: notCompiling, cause: ajv.errorsText(ajv.errors) };
  } catch {
    return { rule: `${notCompiling}: it is too large or too deep to check` };
  }
}
