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
  /** What the schema says of numbers' values (imprecise numbers are probed against it). */
  readonly numeric: SchemaNumerics;
}

/**
 * What a schema can say about a number's value: nothing at all (no keyword that reads a value:
 * a number's digits cannot change its verdict), `multipleOf` somewhere, and every number it
 * holds (bounds, consts, enums).
 */
interface SchemaNumerics {
  readonly readsValues: boolean;
  readonly multipleOf: boolean;
  readonly numbers: ReadonlySet<number>;
}

/** Keywords whose verdict can depend on a number's value (and `format`: int32, float, …). */
const VALUE_KEYWORDS =
  /"(?:minimum|maximum|exclusiveMinimum|exclusiveMaximum|multipleOf|const|enum|format)"|"integer"/;

function numericsOf(schema: Record<string, unknown>): SchemaNumerics {
  const text = JSON.stringify(schema);
  const numbers = new Set<number>();
  JSON.parse(text, (_key, value: unknown) => {
    if (typeof value === 'number') numbers.add(value);
    return value;
  });
  return {
    readsValues: VALUE_KEYWORDS.test(text),
    multipleOf: text.includes('"multipleOf"'),
    numbers,
  };
}

/**
 * Items an array may have where a schema says `uniqueItems`: ajv checks them pairwise (a
 * deep comparison of every two), so 26,000 objects take seconds of the event loop.
 */
export const MAX_UNIQUE_CHECKED_ITEMS = 1000;

/**
 * Numbers a double does not hold exactly that one call may carry where the schema reads values;
 * how many are probed together is bounded by MAX_PROBES_SMALL and MAX_PROBES_LARGE.
 */
export const MAX_PROBED_NUMBERS = 16;
/**
 * Checks of the arguments the probes of imprecise numbers may make: every combination of their
 * neighbours (2, or 3 with a fraction, each): four numbers for arguments up to 64 KiB, two above.
 */
const MAX_PROBES_SMALL = 16;
const MAX_PROBES_LARGE = 4;
/**
 * Where the schema says `uniqueItems` one check of 1,000 items compares them pairwise (about
 * 0.1 s): the probes of one number only.
 */
const MAX_PROBES_UNIQUE = 3;

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
 * The first member name given twice in one object of a JSON text, as a JSON Pointer, or a member
 * named `__proto__` (`proto`: ajv leaves that name out of `properties` and `required`, so no
 * schema checks it, while the source gets it); undefined when there is neither. A scan of the
 * text (strings skipped, escapes honoured), never recursive.
 */
export function duplicateMember(
  json: string,
): { readonly path: string; readonly proto?: true } | undefined {
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
        if (key === '__proto__') return { path: pointer(key), proto: true };
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
    if (duplicate?.proto === true)
      return [`${duplicate.path}: a member named __proto__ cannot be checked; rename it`];
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
   * the source gets the text. The written value lies between the double read and one beside
   * it, and compares with every other double as one of the two neighbours does: with a bound
   * (or const, enum value) at the double read, as the neighbour on its side; at that neighbour,
   * as the double read, and so as the other neighbour. So the arguments are checked with each
   * such number set to each of its two neighbours, in every combination (and to a fraction where
   * the written value has one and the doubles there have none); a failure in any refuses the
   * call. What those probes cannot see is refused outright: a schema holding two of the three
   * doubles (a gap narrower than one double, where the written value may fall), and `multipleOf`
   * on a number past 2^53 (its neighbours are even). A schema with no keyword that reads a value
   * passes every such number as written (a 19-digit id).
   */
  private dependsOnDroppedDigits(
    compiled: Compiled,
    args: unknown,
    imprecise: readonly ImpreciseNumber[],
    size: number,
  ): string | undefined {
    const { numeric } = compiled;
    if (!numeric.readsValues) return undefined;
    const advice = 'send at most 15 significant digits';
    const named = (n: ImpreciseNumber): string =>
      `${pointerOf(n.path)}: ${n.text} has more digits than a double holds and the schema's check depends on them (it reads as ${n.value}); ${advice}`;
    if (imprecise.length > MAX_PROBED_NUMBERS)
      return `/: has more than ${MAX_PROBED_NUMBERS} numbers with more digits than a double holds, too many to check; ${advice}`;
    const probeSets: number[][] = [];
    for (const n of imprecise) {
      if (!Number.isFinite(n.value))
        return `${pointerOf(n.path)}: ${n.text} is beyond the range of a double, so it cannot be checked; send a smaller number`;
      const [below, above] = neighbours(n.value);
      const coarse = Number.isInteger(below) && Number.isInteger(above);
      if (
        [below, n.value, above].filter((x) => numeric.numbers.has(x)).length >= 2 ||
        (coarse && numeric.multipleOf)
      )
        return named(n);
      probeSets.push(n.fractional && coarse ? [below, above, 0.5] : [below, above]);
    }
    const combinations = probeSets.reduce((product, set) => product * set.length, 1);
    const small = size <= LIST_ALL_VIOLATIONS_UP_TO;
    const budget = compiled.uniqueItems
      ? MAX_PROBES_UNIQUE
      : small
        ? MAX_PROBES_SMALL
        : MAX_PROBES_LARGE;
    if (combinations > budget)
      return `${imprecise.map((n) => pointerOf(n.path)).join(', ')}: have more digits than a double holds, too many to check together against this schema; ${advice}`;
    const validate = small
      ? compiled.all
      : (compiled.first ??= this.compile(this.stopping, compiled.schema, compiled.dialect));
    if (validate === undefined) return undefined;
    for (let combination = 0; combination < combinations; combination++) {
      let rest = combination;
      const changes = imprecise.map((n, i) => {
        const set = probeSets[i] as number[];
        const probe = set[rest % set.length] as number;
        rest = Math.floor(rest / set.length);
        return [n.path, probe] as const;
      });
      if (!validate(withNumbersAt(args, changes)))
        return imprecise.length === 1
          ? named(imprecise[0] as ImpreciseNumber)
          : `${imprecise.map((n) => pointerOf(n.path)).join(', ')}: have more digits than a double holds and the schema's check depends on at least one of them; ${advice}`;
    }
    return undefined;
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
          numeric: numericsOf(schema),
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
