import Ajv, { type Options } from 'ajv';
import type { RegExpEngine } from 'ajv/dist/types';
import { RE2JS } from 're2js';
import Ajv2019 from 'ajv/dist/2019';
import Ajv2020 from 'ajv/dist/2020';
import draft06MetaSchema from 'ajv/dist/refs/json-schema-draft-06.json';
import addFormats from 'ajv-formats';
import { ecmaPatternForRe2 } from './ecma-pattern';

/**
 * The JSON Schema dialects a tool schema may declare with `$schema`. MCP 2025-11-25: a schema
 * without `$schema` is 2020-12; with one, it is compiled by that dialect's rules (the v1
 * TypeScript SDK emits draft-07). draft-04 is not here: ajv 8 needs the separate
 * `ajv-draft-04` package for it, which the gateway does not ship, so it is an unknown dialect.
 */
export type SchemaDialect = 'draft-06' | 'draft-07' | '2019-09' | '2020-12';

export const SUPPORTED_DIALECTS: readonly SchemaDialect[] = [
  'draft-06',
  'draft-07',
  '2019-09',
  '2020-12',
];

/** The official meta-schema URIs, without their (optional) empty fragment `#`. */
const DIALECT_BY_URI: ReadonlyMap<string, SchemaDialect> = new Map([
  ['http://json-schema.org/draft-06/schema', 'draft-06'],
  ['http://json-schema.org/draft-07/schema', 'draft-07'],
  ['https://json-schema.org/draft/2019-09/schema', '2019-09'],
  ['https://json-schema.org/draft/2020-12/schema', '2020-12'],
]);

/** What a root `$schema` declares: a known dialect, or why it is not one. */
export type DialectOf =
  | { readonly ok: true; readonly dialect: SchemaDialect }
  | {
      readonly ok: false;
      /** The declared value, for the log only (it may be any URL). */
      readonly declared: string;
    };

/**
 * The dialect of a root schema: absent `$schema` → 2020-12; one of the official URIs, with or
 * without the trailing `#` → that dialect; anything else (draft-04, draft-03, a private
 * meta-schema, a non-string) → unknown.
 */
export function dialectOf(schema: Readonly<Record<string, unknown>>): DialectOf {
  const declared = schema.$schema;
  if (declared === undefined) return { ok: true, dialect: '2020-12' };
  if (typeof declared !== 'string') return { ok: false, declared: JSON.stringify(declared) };
  const dialect = DIALECT_BY_URI.get(declared.endsWith('#') ? declared.slice(0, -1) : declared);
  return dialect === undefined ? { ok: false, declared } : { ok: true, dialect };
}

/** ajv 8's classes share one API; draft-06 and draft-07 share the default class. */
export type AjvInstance = Ajv | Ajv2019 | Ajv2020;

const OPTIONS: Options = {
  strict: false,
  allErrors: false,
  validateFormats: true,
  logger: false,
  code: { optimize: false },
  // a decimal multipleOf (0.01: cents) divides in binary floating point with a remainder of
  // ~1e-13 (19.99 / 0.01 = 1998.9999999999998): JSON Schema counts 19.99 a multiple of 0.01
  multipleOfPrecision: 9,
};

/**
 * draft-06 and draft-07 patterns are ECMA-262 without the `u` flag (ajv adds it by default):
 * under it an identity escape such as `\-` outside a class, valid in those drafts and common in
 * schemas generated from Java or Python, fails to compile.
 */
const DRAFT07_OPTIONS: Partial<Options> = { unicodeRegExp: false };

/**
 * ajv's regular expression engine for `linear` instances: linear time, with the pattern's ECMA-262
 * meaning (ecma-pattern.ts: `.`, `\s`, `\S` and `\u` as ECMA reads them).
 */
const linearRegExp: RegExpEngine = Object.assign(
  (pattern: string) => {
    const compiled = RE2JS.compile(ecmaPatternForRe2(pattern));
    return {
      test: (text: string) => compiled.matcher(text).find(),
      // ajv keys its compiled patterns by this text: each pattern its own
      toString: () => `re2:${pattern}`,
    };
  },
  { code: 'require("re2js").RE2JS' },
);

/**
 * One ajv instance per dialect family, each created on first use (compiling meta-schemas is not
 * free and most catalogs need only one dialect). Callers compile one schema, then call
 * `clear()`: no schema or `$id` outlives the compilation, so replicas with different histories
 * compile the same manifest the same way.
 */
export class SchemaDialects {
  private draft07?: Ajv;
  private v2019?: Ajv2019;
  private v2020?: Ajv2020;
  private readonly options: Options;

  /**
   * @param allErrors report every violation, not the first: for checks whose errors are shown
   *   to an agent to correct its call (argument validation); manifests stop at the first
   * @param linear `pattern` and `patternProperties` matched by RE2 (re2js), in time linear in
   *   the input: for checks of what a caller sends (argument validation), where a backtracking
   *   pattern such as `^([a-z0-9]+[.-]?)*[a-z0-9]$` would let a 30-character argument stall
   *   the event loop for seconds. A pattern RE2 cannot take (a back-reference, a lookaround)
   *   makes the schema fail to compile, and the caller decides what then.
   */
  constructor({
    allErrors = false,
    linear = false,
  }: { readonly allErrors?: boolean; readonly linear?: boolean } = {}) {
    this.options =
      allErrors || linear
        ? {
            ...OPTIONS,
            allErrors,
            ...(linear ? { code: { ...OPTIONS.code, regExp: linearRegExp } } : {}),
          }
        : OPTIONS;
  }

  /** The instance that compiles schemas of this dialect. */
  instanceFor(dialect: SchemaDialect): AjvInstance {
    switch (dialect) {
      case 'draft-06':
      case 'draft-07':
        if (this.draft07 === undefined) {
          this.draft07 = new Ajv({ ...this.options, ...DRAFT07_OPTIONS });
          this.draft07.addMetaSchema(draft06MetaSchema);
          addFormats(this.draft07);
        }
        return this.draft07;
      case '2019-09':
        if (this.v2019 === undefined) {
          this.v2019 = new Ajv2019(this.options);
          addFormats(this.v2019);
        }
        return this.v2019;
      case '2020-12':
        if (this.v2020 === undefined) {
          this.v2020 = new Ajv2020(this.options);
          addFormats(this.v2020);
        }
        return this.v2020;
    }
  }

  /** Removes every compiled schema (meta-schemas stay) from every instance. */
  clear(): void {
    this.draft07?.removeSchema();
    this.v2019?.removeSchema();
    this.v2020?.removeSchema();
  }
}
