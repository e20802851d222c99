/**
 * A broken rule of the configuration, as data: where (`path`, e.g. `mcp.upstreams[2].namePrefix`),
 * which kind of rule (`code`) and why (`message`). The boot renders each one as the line it
 * prints (`renderProblem`); a runtime registration is checked by the same rules and picks its
 * answer by `code` and `path` (docs/operations.md §15 "Routes": a clash with another source is
 * 409, any other problem 400), never by reading the text.
 */
export interface ConfigProblem {
  readonly path: string;
  readonly code: ConfigProblemCode;
  readonly message: string;
  /**
   * What was given, described (`"abc"`, `a number`), for a field's own checks: rendered as
   * ` (got …)` after the message, and left out where the value could be a secret.
   */
  readonly got?: string;
  /** The other source a clash names (`mcp.bundles[0]`, `mcp.upstreams[1]`). */
  readonly other?: string;
}

/**
 * - `invalid`: a field's own check, or a rule across fields of one source or section;
 * - `duplicate-id`: the id of another source (bundles and upstreams share one id space);
 * - `duplicate-prefix`, `overlapping-prefix`: the published-name prefix of another source, or
 *   one that starts with it or that it starts with (a published name could belong to both);
 * - `reserved-prefix`: overlaps the prefix of the gateway's own tools;
 * - `shared-empty-prefix`: `""` while other sources are enabled;
 * - `duplicate-audience`: a registration's tokenExchange audience is another registered
 *   upstream's (registration-credentials.ts).
 */
export type ConfigProblemCode =
  | 'invalid'
  | 'duplicate-id'
  | 'duplicate-prefix'
  | 'overlapping-prefix'
  | 'reserved-prefix'
  | 'shared-empty-prefix'
  | 'duplicate-audience';

/** The codes of a clash with another source: what another source holds, not what is wrong here. */
const CLASHES: ReadonlySet<ConfigProblemCode> = new Set<ConfigProblemCode>([
  'duplicate-id',
  'duplicate-prefix',
  'overlapping-prefix',
  'duplicate-audience',
]);

/** Whether the problem is a clash with another source (a registration's 409). */
export function isClash(problem: ConfigProblem): boolean {
  return CLASHES.has(problem.code);
}

/** A problem of a field's own check or of a rule across fields. */
export function invalid(path: string, message: string, got?: string): ConfigProblem {
  return got === undefined
    ? { path, code: 'invalid', message }
    : { path, code: 'invalid', message, got };
}

/**
 * The line the boot prints for a problem: `path: message (got …)`; a problem of the whole
 * configuration (path '') is its message alone.
 */
export function renderProblem(problem: ConfigProblem): string {
  const line = problem.path === '' ? problem.message : `${problem.path}: ${problem.message}`;
  return problem.got === undefined ? line : `${line} (got ${problem.got})`;
}

/** `at.field`, or `field` alone at the top (a registration's body). */
export function fieldPath(at: string, field: string): string {
  return at === '' ? field : `${at}.${field}`;
}
