import { Validator, type SchemaDraft } from '@cfworker/json-schema';
import { EVENT_LOOP_COMPILE_NODES, schemaNodes } from '../manifest/schema-checker';
import { dialectOf, SchemaDialects, type SchemaDialect } from '../manifest/schema-dialects';
import type { ManifestTool } from '../manifest/manifest.types';
import { longArray, MAX_UNIQUE_CHECKED_ITEMS, saysUniqueItems } from './argument-validators';
import type { OutputValidator } from './catalog-tool';

/** A published entry that names an outputSchema somewhere; the parse below decides. */
const MAY_HAVE_OUTPUT_SCHEMA = '"outputSchema":';

/**
 * Compiles the validators of the tools' outputSchemas when a catalog is merged (MCP
 * 2025-11-25: a tool with an outputSchema must answer conforming `structuredContent`), so
 * that tools/call compiles nothing (DESIGN "The request path stays lean"). Each validator is
 * compiled in the dialect its `$schema` declares, then every schema leaves ajv again: the
 * compiled function keeps what it needs, and no state carries over to the next manifest.
 *
 * A schema of more than EVENT_LOOP_COMPILE_NODES members is not compiled here: one ajv compile
 * cannot be sliced and costs seconds for a few thousand members (docs/benchmarks.md "One
 * schema's compile"; the manifest itself was checked in the validation worker, contract §6 and
 * docs/operations.md §2 "Large manifests"). Its answers are checked by an interpreting
 * validator (@cfworker/json-schema), which reads the schema as it validates: no compile, at the
 * price of a slower check per answer of such a tool. Patterns are matched by RE2 (linear time,
 * an answer cannot make one backtrack), so a large schema that holds `pattern` or
 * `patternProperties` is compiled after all (the interpreter would match them with RegExp).
 *
 * Validators are cached by the tool's fingerprint (which covers its published entry), so an
 * unchanged tool is not compiled again for the next catalog; `retainUsed` drops what the
 * last merge did not ask for.
 */
export class OutputValidators {
  /** Patterns matched by RE2, in linear time: an answer cannot make one backtrack. */
  private readonly dialects = new SchemaDialects({ linear: true });
  private cache = new Map<string, OutputValidator | null>();
  private used = new Set<string>();

  /** The validator of this tool's outputSchema; undefined when it declares none. */
  validatorFor(tool: ManifestTool): OutputValidator | undefined {
    if (!tool.publishedJson.includes(MAY_HAVE_OUTPUT_SCHEMA)) return undefined;
    this.used.add(tool.fingerprint);
    let validator = this.cache.get(tool.fingerprint);
    if (validator === undefined) {
      validator = this.compile(tool.publishedJson);
      this.cache.set(tool.fingerprint, validator);
    }
    return validator ?? undefined;
  }

  /** Forget validators the merges since the previous call did not use. */
  retainUsed(): void {
    const next = new Map<string, OutputValidator | null>();
    for (const key of this.used) {
      const value = this.cache.get(key);
      if (value !== undefined) next.set(key, value);
    }
    this.cache = next;
    this.used = new Set();
  }

  get size(): number {
    return this.cache.size;
  }

  /** null: the entry has no outputSchema (the text only mentioned one). */
  private compile(publishedJson: string): OutputValidator | null {
    const schema = (JSON.parse(publishedJson) as { outputSchema?: Record<string, unknown> })
      .outputSchema;
    if (schema === undefined) return null;
    const dialect = dialectOf(schema);
    try {
      // validateManifest accepted only outputSchemas that compile in a known dialect.
      if (!dialect.ok) throw new Error('unknown dialect');
      // the interpreter matches patterns with RegExp, which may backtrack: a large schema with
      // patterns is compiled (RE2) instead
      if (
        schemaNodes(schema, EVENT_LOOP_COMPILE_NODES) > EVENT_LOOP_COMPILE_NODES &&
        !holdsPatterns(schema)
      )
        return boundedUnique(schema, interpreted(schema, dialect.dialect));
      const ajv = this.dialects.instanceFor(dialect.dialect);
      const validate = ajv.compile(schema);
      return boundedUnique(
        schema,
        guarded((value) =>
          validate(value) === true
            ? undefined
            : ajv.errorsText(validate.errors, { dataVar: 'structuredContent' }),
        ),
      );
    } catch {
      // Not reached for an accepted manifest; were it, every answer is refused, never passed unchecked.
      return () => "the gateway could not compile the tool's outputSchema";
    } finally {
      this.dialects.clear();
    }
  }
}

/**
 * A validator of a schema that says `uniqueItems` somewhere refuses an answer with an array of
 * more than MAX_UNIQUE_CHECKED_ITEMS items before checking it: both validators compare such an
 * array's items pairwise, and 20,000 objects held the event loop for seconds (every other
 * call with it), as arguments would (argument-validators.ts).
 */
function boundedUnique(
  schema: Record<string, unknown>,
  validate: OutputValidator,
): OutputValidator {
  if (!saysUniqueItems(schema)) return validate;
  return (value) => {
    const long = longArray(value, MAX_UNIQUE_CHECKED_ITEMS);
    return long === undefined
      ? validate(value)
      : `structuredContent${long === '/' ? '' : long}: has more than ${MAX_UNIQUE_CHECKED_ITEMS} items, too many to check against an outputSchema with uniqueItems`;
  };
}

/** Whether a schema uses `pattern` or `patternProperties` anywhere (an iterative walk). */
function holdsPatterns(schema: unknown): boolean {
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null) continue;
    if (
      !Array.isArray(node) &&
      (typeof (node as Record<string, unknown>).pattern === 'string' || 'patternProperties' in node)
    )
      return true;
    for (const item of Array.isArray(node) ? node : Object.values(node)) stack.push(item);
  }
  return false;
}

/** cfworker's drafts: draft-06 is read by draft-07's rules (a superset of its keywords). */
const INTERPRETER_DRAFT: Readonly<Record<SchemaDialect, SchemaDraft>> = {
  'draft-06': '7',
  'draft-07': '7',
  '2019-09': '2019-09',
  '2020-12': '2020-12',
};

/**
 * An interpreting validator of a large outputSchema, its reasons worded as ajv's are
 * (`structuredContent/total: …`): the deepest violation it reports.
 */
function interpreted(schema: Record<string, unknown>, dialect: SchemaDialect): OutputValidator {
  const validator = new Validator(schema, INTERPRETER_DRAFT[dialect], true);
  return guarded((value) => {
    const { valid, errors } = validator.validate(value);
    if (valid) return undefined;
    // cfworker reports each failing keyword and every one above it: the deepest is the reason
    let deepest = errors[0];
    for (const error of errors)
      if (error.keywordLocation.length > (deepest?.keywordLocation.length ?? 0)) deepest = error;
    if (deepest === undefined) return 'structuredContent does not match the outputSchema';
    const at = deepest.instanceLocation.replace(/^#/, '');
    return `structuredContent${at}: ${deepest.error.replace(/\.$/, '')}`;
  });
}

/**
 * A validator that refuses, with the reason, an answer it cannot check: an outputSchema that
 * refers to itself without reading deeper into the answer (`{"$ref": "#"}`) recurses without
 * end (a RangeError), and the interpreter may fail on a reference ajv resolved; an answer is
 * never passed unchecked, and never turns into a -32603.
 */
function guarded(validate: OutputValidator): OutputValidator {
  return (value) => {
    try {
      return validate(value);
    } catch (err) {
      return err instanceof RangeError
        ? "the tool's outputSchema refers to itself without end, so no answer can be checked against it"
        : "the gateway could not check the answer against the tool's outputSchema";
    }
  };
}
