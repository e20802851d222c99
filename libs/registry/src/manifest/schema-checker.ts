import { createHash } from 'node:crypto';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

/**
 * Checks that a schema compiles as JSON Schema 2020-12 with ajv (contract §5 "inputSchema:
 * JSON Schema 2020-12"). Remote `$ref`s are never fetched, so they fail as unresolved.
 *
 * Results are cached by the schema's JSON text, because a refresh revalidates the same
 * schemas every cycle; `retainOnly` drops what the last round did not see, so the cache
 * never outgrows the catalog. Compiled schemas are removed from ajv at once: the gateway
 * does not validate arguments (the Tool Service does), it only refuses schemas that cannot
 * work.
 */
export class SchemaChecker {
  private ajvInstance?: Ajv2020;
  private cache = new Map<string, string | null>();
  private seen = new Set<string>();

  /** Created on first use: compiling the 2020-12 meta-schemas is not free, and not needed at boot. */
  private get ajv(): Ajv2020 {
    if (this.ajvInstance === undefined) {
      this.ajvInstance = new Ajv2020({
        strict: false,
        allErrors: false,
        validateFormats: true,
        logger: false,
        code: { optimize: false },
      });
      addFormats(this.ajvInstance);
    }
    return this.ajvInstance;
  }

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

  /** undefined when the schema compiles; otherwise ajv's reason (for logs). */
  check(schema: Readonly<Record<string, unknown>>): string | undefined {
    // A digest, not the text: the cache of a 10,000-tool catalog stays small.
    const key = createHash('sha1').update(JSON.stringify(schema)).digest('base64url');
    this.seen.add(key);
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached ?? undefined;
    let problem: string | null = null;
    try {
      this.ajv.compile(schema);
    } catch (err) {
      problem = err instanceof Error ? err.message : String(err);
      if (err instanceof RangeError) {
        // Too large for ajv's code generator (thousands of properties): it is no less a
        // schema, so fall back to checking it against the 2020-12 meta-schema.
        try {
          problem =
            this.ajv.validateSchema(schema) === true ? null : this.ajv.errorsText(this.ajv.errors);
        } catch {
          problem = 'the schema is too large or too deep to check';
        }
      }
    } finally {
      // Every schema, nested $id's included, leaves ajv: one manifest's ids must not clash
      // with the next one's, or replicas with different histories would disagree.
      this.ajv.removeSchema();
    }
    this.cache.set(key, problem);
    return problem ?? undefined;
  }

  /** Forget results for schemas not checked since the previous call (bounds the cache). */
  retainOnlySeen(): void {
    const next = new Map<string, string | null>();
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
}
