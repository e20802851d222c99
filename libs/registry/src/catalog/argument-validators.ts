import type { ErrorObject, ValidateFunction } from 'ajv';
import { EVENT_LOOP_COMPILE_NODES, schemaNodes } from '../manifest/schema-checker';
import { dialectOf, SchemaDialects } from '../manifest/schema-dialects';
import type { CatalogTool } from './catalog-tool';
import { type ImpreciseNumber, impreciseNumbers, neighbours } from './imprecise-numbers';

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
  /** The schema says `uniqueItems` somewhere: ajv compares an array's items pairwise. */
  readonly uniqueItems: boolean;
}

/**
 * Items an array may have where a schema says `uniqueItems`: ajv checks them pairwise (a
 * deep comparison of every two), so 26,000 objects take seconds of the event loop.
 */
export const MAX_UNIQUE_CHECKED_ITEMS = 1000;

/**
 * Numbers a double does not hold exactly that one call may carry and still be checked: each is
 * checked again at the doubles beside it (a few validations each).
 */
export const MAX_PROBED_NUMBERS = 16;

/** JSON Pointer of a path of member names and array indices. */
function pointerOf(path: readonly (string | number)[]): string {
  if (path.length === 0) return '/';
  return path.map((p) => `/${String(p).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

/** Whether a schema says `uniqueItems: true` anywhere (arguments and answers alike). */
export function saysUniqueItems(schema: Record<string, unknown>): boolean {
  return JSON.stringify(schema).includes('"uniqueItems":true');
}

/** The path of the first array longer than `limit` in a value (depth-first), if any. */
export function longArray(value: unknown, limit: number): string | undefined {
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length > 0) {
    const [node, path] = stack.pop() as [unknown, string];
    if (Array.isArray(node)) {
      if (node.length > limit) return path === '' ? '/' : path;
      node.forEach((item, i) => stack.push([item, `${path}/${i}`]));
    } else if (typeof node === 'object' && node !== null)
      for (const [key, item] of Object.entries(node))
        stack.push([item, `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`]);
  }
  return undefined;
}

/**
 * The first member name given twice in one object of a JSON text, as a JSON Pointer; undefined
 * when none is. A scan of the text (strings skipped, escapes honoured), never recursive.
 */
export function duplicateMember(json: string): { readonly path: string } | undefined {
  const objects: ({ keys: Set<string>; name: string } | null)[] = [];
  let expectKey = false;
  let lastKey = '';
  const pointer = (key: string): string =>
    `${objects
      .filter((o): o is { keys: Set<string>; name: string } => o !== null)
      .map((o) => o.name)
      .join('')}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === 0x22) {
      let j = i + 1;
      let escaped = false;
      for (; j < json.length; j++) {
        const d = json.charCodeAt(j);
        if (escaped) escaped = false;
        else if (d === 0x5c) escaped = true;
        else if (d === 0x22) break;
      }
      const top = objects[objects.length - 1];
      if (top !== undefined && top !== null && expectKey) {
        const quoted = json.slice(i, j + 1);
        const key = quoted.includes('\\') ? (JSON.parse(quoted) as string) : quoted.slice(1, -1);
        if (top.keys.has(key)) return { path: pointer(key) };
        top.keys.add(key);
        lastKey = key;
        expectKey = false;
      }
      i = j;
    } else if (c === 0x7b) {
      const parent = objects[objects.length - 1];
      objects.push({
        keys: new Set(),
        name: parent === undefined || parent === null ? '' : `/${lastKey}`,
      });
      expectKey = true;
    } else if (c === 0x5b) {
      objects.push(null);
    } else if (c === 0x7d || c === 0x5d) {
      objects.pop();
      expectKey = false;
    } else if (c === 0x2c) {
      const top = objects[objects.length - 1];
      expectKey = top !== undefined && top !== null;
    }
  }
  return undefined;
}

type Container = Record<string | number, unknown>;

/**
 * `args` with the numbers at these paths replaced: each container on a path is copied
 * (shallowly, once), the arguments themselves are left as parsed.
 */
function withNumbersAt(
  args: unknown,
  changes: readonly (readonly [readonly (string | number)[], number])[],
): unknown {
  const copies = new Map<object, Container>();
  const copyOf = (node: object): Container => {
    let copy = copies.get(node);
    if (copy === undefined) {
      // a spread defines each own member, __proto__ included (a parsed object's own property)
      copy = (Array.isArray(node) ? [...(node as unknown[])] : { ...node }) as Container;
      copies.set(node, copy);
    }
    return copy;
  };
  const put = (target: Container, key: string | number, value: unknown): void => {
    Object.defineProperty(target, key, {
      value,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  };
  let result = args;
  for (const [path, value] of changes) {
    if (path.length === 0 || typeof args !== 'object' || args === null) {
      result = value;
      continue;
    }
    let original = args as Container;
    let target = copyOf(original);
    result = target;
    for (const key of path.slice(0, -1)) {
      original = original[key] as Container;
      const child = copyOf(original);
      put(target, key, child);
      target = child;
    }
    put(target, path[path.length - 1] as string | number, value);
  }
  return result;
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

/** The values an `enum` allows, as a model can copy them (at most 20, each cut at 40). */
function allowedOf(error: ErrorObject): string {
  const values = (error.params as { allowedValues?: unknown }).allowedValues;
  if (!Array.isArray(values)) return error.message ?? 'is invalid';
  const shown = values.slice(0, 20).map((v) => JSON.stringify(v)?.slice(0, 40) ?? 'null');
  return `must be one of ${shown.join(', ')}${values.length > 20 ? ', …' : ''}`;
}

function lineOf(error: ErrorObject): string {
  const what =
    error.keyword === 'required'
      ? 'is required'
      : error.keyword === 'additionalProperties'
        ? 'is not allowed'
        : error.keyword === 'enum'
          ? allowedOf(error)
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
 * arguments then (a manifest with one was refused already; an upstream's is the upstream's), and
 * so does a schema of more than EVENT_LOOP_COMPILE_NODES members: one compile cannot be sliced
 * (docs/operations.md §6 "Argument validation").
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
   * they violate. `text`: the arguments as the client wrote them, the bytes the source gets.
   */
  check(tool: CatalogTool, args: unknown, text: string): ArgumentViolations | undefined {
    if (!validatesArguments(tool)) return undefined;
    return this.checkEntry(tool.fingerprint, tool.publishedJson, args, text);
  }

  /**
   * The same check against a tool entry of the gateway's own (its search tools, whose
   * definitions are fixed): `key` names the entry among the validators kept.
   */
  checkEntry(
    key: string,
    entryJson: string,
    args: unknown,
    text: string,
  ): ArgumentViolations | undefined {
    const compiled = this.compiledFor(key, entryJson);
    if (compiled === null) return undefined;
    // what is checked is what JSON.parse kept (the last of two equal names); a source that keeps
    // the first would get what was never checked
    const duplicate = duplicateMember(text);
    if (duplicate !== undefined)
      return [`${duplicate.path}: is given more than once; give each member once`];
    if (compiled.uniqueItems) {
      const long = longArray(args, MAX_UNIQUE_CHECKED_ITEMS);
      if (long !== undefined)
        return [
          `${long}: has more than ${MAX_UNIQUE_CHECKED_ITEMS} items, too many to check against a schema with uniqueItems; send fewer`,
        ];
    }
    const size = text.length;
    try {
      if (size <= LIST_ALL_VIOLATIONS_UP_TO) {
        if (!compiled.all(args)) return violationsOf(compiled.all.errors);
      } else {
        compiled.first ??= this.compile(this.stopping, compiled.schema, compiled.dialect);
        if (compiled.first !== undefined && !compiled.first(args))
          return [
            ...violationsOf(compiled.first.errors),
            `(arguments over ${LIST_ALL_VIOLATIONS_UP_TO / 1024} KiB: only the first violation is named)`,
          ];
      }
      // conforming as parsed: conforming as written too, unless digits a double drops matter
      const imprecise = impreciseNumbers(text, MAX_PROBED_NUMBERS);
      if (imprecise.length === 0) return undefined;
      const refused = this.dependsOnDroppedDigits(compiled, args, imprecise, size);
      return refused === undefined ? undefined : [refused];
    } catch (err) {
      if (!(err instanceof RangeError)) throw err;
      // a schema that refers to itself without reading deeper into the arguments
      // (`{"$ref": "#"}`) recurses without end: like one that does not compile, it checks
      // nothing, and the source judges its own arguments
      this.kept.set(key, null);
      return undefined;
    }
  }

  /**
   * A number the text writes with digits a double drops is checked as JSON.parse read it, but
   * the source gets the text: it is refused when the schema's verdict could differ for the
   * written value, that is when the arguments fail with that number set to either double beside
   * the one read (the written value lies between them), or, for a written fraction the doubles
   * there cannot hold, to a fraction. A number the schema does not constrain (a 19-digit id)
   * passes as written.
   */
  private dependsOnDroppedDigits(
    compiled: Compiled,
    args: unknown,
    imprecise: readonly ImpreciseNumber[],
    size: number,
  ): string | undefined {
    if (imprecise.length > MAX_PROBED_NUMBERS)
      return `/: has more than ${MAX_PROBED_NUMBERS} numbers with more digits than a double holds, too many to check; send at most 15 significant digits`;
    const beyond = imprecise.find((n) => !Number.isFinite(n.value));
    if (beyond !== undefined)
      return `${pointerOf(beyond.path)}: ${beyond.text} is beyond the range of a double, so it cannot be checked; send a smaller number`;
    const small = size <= LIST_ALL_VIOLATIONS_UP_TO;
    const validate = small
      ? compiled.all
      : (compiled.first ??= this.compile(this.stopping, compiled.schema, compiled.dialect));
    if (validate === undefined) return undefined;
    const probesOf = (n: ImpreciseNumber): number[] => {
      const probes: number[] = neighbours(n.value);
      if (n.fractional && probes.every(Number.isInteger)) probes.push(0.5);
      return probes;
    };
    // every number at once, to the double below, above, and a fraction where one is written:
    // at most three checks of the arguments whatever their size
    const fails = (numbers: readonly ImpreciseNumber[], probe: number): boolean =>
      !validate(
        withNumbersAt(
          args,
          numbers.map((n) => [n.path, probesOf(n)[probe] ?? n.value] as const),
        ),
      );
    if (![0, 1, 2].some((probe) => fails(imprecise, probe))) return undefined;
    // which one: each alone, for arguments small enough to check a few times more
    const named =
      imprecise.length === 1
        ? imprecise[0]
        : small
          ? imprecise.find((n) => [0, 1, 2].some((probe) => fails([n], probe)))
          : undefined;
    if (named === undefined)
      return `${imprecise.map((n) => pointerOf(n.path)).join(', ')}: have more digits than a double holds and the schema's check depends on at least one of them; send at most 15 significant digits`;
    return `${pointerOf(named.path)}: ${named.text} has more digits than a double holds and the schema's check depends on them (it reads as ${named.value}); send at most 15 significant digits`;
  }

  /** Validators compiled and kept now. */
  get size(): number {
    return this.kept.size;
  }

  private compiledFor(key: string, entryJson: string): Compiled | null {
    const found = this.kept.get(key);
    if (found !== undefined) {
      // the most recently used go last; moved only when an eviction could reach them
      if (this.kept.size >= this.capacity) {
        this.kept.delete(key);
        this.kept.set(key, found);
      }
      return found;
    }
    const compiled = this.compiledOf(entryJson);
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
    // a schema too large to compile on the event loop checks nothing, as one too large for
    // ajv's code generator: the source judges its own arguments (SchemaBounds)
    if (schemaNodes(schema, EVENT_LOOP_COMPILE_NODES) > EVENT_LOOP_COMPILE_NODES) return null;
    const dialect = dialectOf(schema);
    if (!dialect.ok) return null;
    const all = this.compile(this.listing, schema, dialect.dialect);
    return all === undefined
      ? null
      : {
          all,
          schema,
          dialect: dialect.dialect,
          uniqueItems: saysUniqueItems(schema),
        };
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
