import { dialectOf, SchemaDialects } from '../manifest/schema-dialects';
import type { ManifestTool } from '../manifest/manifest.types';
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
 * Validators are cached by the tool's fingerprint (which covers its published entry), so an
 * unchanged tool is not compiled again for the next catalog; `retainUsed` drops what the
 * last merge did not ask for.
 */
export class OutputValidators {
  private readonly dialects = new SchemaDialects();
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
      const ajv = this.dialects.instanceFor(dialect.dialect);
      const validate = ajv.compile(schema);
      return (value) =>
        validate(value) === true
          ? undefined
          : ajv.errorsText(validate.errors, { dataVar: 'structuredContent' });
    } catch {
      // Not reached for an accepted manifest; were it, every answer is refused, never passed unchecked.
      return () => "the gateway could not compile the tool's outputSchema";
    } finally {
      this.dialects.clear();
    }
  }
}
