import type { ErrorObject, ValidateFunction } from 'ajv';
import { dialectOf, SchemaDialects } from '../manifest/schema-dialects';
import type { CatalogTool } from './catalog-tool';

/**
 * Compiled inputSchema validators kept at once. A validator costs about 1 ms to compile and
 * 20-25 KB of memory (most of it V8 code), so a 10,000-tool catalog cannot have them all:
 * compiled eagerly they took 12 s and 284 MB (docs/benchmarks.md, "Argument validation").
 * The tools an agent fleet calls are a small part of a large catalog; this many cover them.
 */
export const ARGUMENT_VALIDATORS_KEPT = 500;
/**
 * Arguments up to this many characters (the request body's length, an upper bound) get every
 * violation listed; larger ones get the first only. With every violation collected, a 4 MiB
 * array of wrong items would make millions of error objects.
 */
export const LIST_ALL_VIOLATIONS_UP_TO = 64 * 1024;
/** Violations named in one answer at most; the rest are counted. */
const VIOLATIONS_SHOWN = 20;

/** What a tool's arguments break: one line per violated path, `/limit: must be <= 100`. */
export type ArgumentViolations = readonly string[];

interface Compiled {
  /** Every violation (ajv allErrors). */
  readonly all: ValidateFunction;
  /** The first violation only, compiled when an oversized call first needs it. */
  first?: ValidateFunction;
  readonly schema: Record<string, unknown>;
  readonly dialect: Parameters<SchemaDialects['instanceFor']>[0];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JSON Pointer of one violation, naming the property a `required` or `additionalProperties` names. */
function pathOf(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  const named =
    error.keyword === 'required'
      ? params.missingProperty
      : error.keyword === 'additionalProperties'
        ? params.additionalProperty
        : undefined;
  const base = error.instancePath;
  if (typeof named === 'string') return `${base}/${named.replace(/~/g, '~0').replace(/\//g, '~1')}`;
  return base === '' ? '/' : base;
}

function lineOf(error: ErrorObject): string {
  const what =
    error.keyword === 'required'
      ? 'is required'
      : error.keyword === 'additionalProperties'
        ? 'is not allowed'
        : (error.message ?? 'is invalid');
  return `${pathOf(error)}: ${what}`;
}

function violationsOf(errors: readonly ErrorObject[] | null | undefined): ArgumentViolations {
  const lines = [...new Set((errors ?? []).map(lineOf))];
  if (lines.length <= VIOLATIONS_SHOWN) return lines;
  return [
    ...lines.slice(0, VIOLATIONS_SHOWN),
    `… and ${lines.length - VIOLATIONS_SHOWN} more violation(s)`,
  ];
}

/**
 * Whether a tool's calls are checked: per source (`validateArguments`; a bundle's default is on,
 * an upstream's off: MCP servers validate their own), and only for a tool whose listed JSON is
 * known (a live tool the caller could not list is not).
 */
export function validatesArguments(tool: CatalogTool): boolean {
  if (tool.publishedJson === '') return false;
  return tool.route.kind === 'bundle'
    ? tool.route.bundle.validateArguments !== false
    : tool.route.upstream.validateArguments === true;
}

/**
 * Checks a call's arguments against the tool's inputSchema before anything is sent
 * (docs/operations.md §6 "Argument validation"; MCP 2025-11-25: invalid arguments are a tool
 * execution error, which the model can correct). Compiled in the dialect the schema's `$schema`
 * declares, as manifests are (SchemaDialects), on a tool's first checked call, and kept by the
 * tool's fingerprint (its published entry) among the ARGUMENT_VALIDATORS_KEPT used last. A schema
 * that does not compile, or of an unknown dialect, checks nothing: the source judges its own
 * arguments then (a manifest with one was refused already; an upstream's is the upstream's).
 */
export class ArgumentValidators {
  // patterns matched in linear time: the input is a caller's (SchemaDialects `linear`)
  private readonly listing = new SchemaDialects({ allErrors: true, linear: true });
  private readonly stopping = new SchemaDialects({ linear: true });
  /** By tool fingerprint, least recently used first; null: nothing to check. */
  private readonly kept = new Map<string, Compiled | null>();

  constructor(private readonly capacity = ARGUMENT_VALIDATORS_KEPT) {}

  /**
   * undefined when the arguments conform (or the tool's calls are not checked); otherwise what
   * they violate. `size`: the length of the text they came in (an upper bound will do).
   */
  check(tool: CatalogTool, args: unknown, size: number): ArgumentViolations | undefined {
    if (!validatesArguments(tool)) return undefined;
    const compiled = this.compiledFor(tool);
    if (compiled === null) return undefined;
    if (size <= LIST_ALL_VIOLATIONS_UP_TO)
      return compiled.all(args) ? undefined : violationsOf(compiled.all.errors);
    compiled.first ??= this.compile(this.stopping, compiled.schema, compiled.dialect);
    const first = compiled.first;
    if (first === undefined || first(args)) return undefined;
    return [
      ...violationsOf(first.errors),
      `(arguments over ${LIST_ALL_VIOLATIONS_UP_TO / 1024} KiB: only the first violation is named)`,
    ];
  }

  /** Validators compiled and kept now. */
  get size(): number {
    return this.kept.size;
  }

  private compiledFor(tool: CatalogTool): Compiled | null {
    const key = tool.fingerprint;
    const found = this.kept.get(key);
    if (found !== undefined) {
      // the most recently used go last; moved only when an eviction could reach them
      if (this.kept.size >= this.capacity) {
        this.kept.delete(key);
        this.kept.set(key, found);
      }
      return found;
    }
    const compiled = this.compiledOf(tool.publishedJson);
    if (this.kept.size >= this.capacity) {
      const oldest = this.kept.keys().next();
      if (oldest.done !== true) this.kept.delete(oldest.value);
    }
    this.kept.set(key, compiled);
    return compiled;
  }

  private compiledOf(publishedJson: string): Compiled | null {
    let schema: unknown;
    try {
      schema = (JSON.parse(publishedJson) as { inputSchema?: unknown }).inputSchema;
    } catch {
      return null;
    }
    if (!isRecord(schema)) return null;
    const dialect = dialectOf(schema);
    if (!dialect.ok) return null;
    const all = this.compile(this.listing, schema, dialect.dialect);
    return all === undefined ? null : { all, schema, dialect: dialect.dialect };
  }

  private compile(
    dialects: SchemaDialects,
    schema: Record<string, unknown>,
    dialect: Compiled['dialect'],
  ): ValidateFunction | undefined {
    try {
      return dialects.instanceFor(dialect).compile(schema);
    } catch {
      return undefined;
    } finally {
      // no schema or $id outlives its compilation (as for manifests)
      dialects.clear();
    }
  }
}
