/** The manifest broke a rule of contract §5 or §7.1: the Tool Service answered, its manifest is wrong. */
const MANIFEST_RULE_ERROR_TYPES = [
  'ManifestShapeError',
  'BundleIdMismatchError',
  'ToolNamePatternError',
  'ToolNamePrefixError',
  'DuplicateToolNameError',
  'ToolDescriptionError',
  'InputSchemaError',
  'OutputSchemaError',
  'ToolVersionError',
  'ToolMetaError',
  'TooManyToolsError',
] as const;

/**
 * Why a bundle's pull or manifest was not adopted. These names are what
 * /actuator/toolBundles shows as `lastFailureReason` (contract §9: a type name, never a
 * message), so they are part of the operator-facing interface: keep them stable.
 */
export const PULL_ERROR_TYPES = [
  // the pull itself (libs/discovery)
  'ManifestConnectError',
  'ManifestTimeoutError',
  'ManifestHttpStatusError',
  'ManifestTooLargeError',
  'ManifestNotJsonError',
  'ManifestFileError',
  'UnexpectedPullError',
  // the manifest (contract §5, §7.1)
  ...MANIFEST_RULE_ERROR_TYPES,
  // the aggregate (contract §7.3, §7.6): the bundle's manifest was valid but could not be published
  'ToolNameCollisionError',
  'CatalogTooLargeError',
] as const;

export type PullErrorType = (typeof PULL_ERROR_TYPES)[number];

/**
 * One reason a manifest was rejected. `detail` names the manifest path and the rule broken in
 * the gateway's own words (`tools[0] "my.echo": _meta.version is required`): it quotes no URL,
 * header or fragment of the answer beyond a tool name that passed the name pattern, so
 * /actuator/toolBundles may show it (contract §9). `cause` is what only the log may carry
 * (ajv's message, a declared `$schema` URI). Neither ever reaches an agent.
 */
export interface ManifestProblem {
  readonly type: PullErrorType;
  readonly detail: string;
  readonly cause?: string;
}

/** The pull error types that mean "the Tool Service answered, and its manifest broke a rule". */
export const VALIDATION_ERROR_TYPES: ReadonlySet<PullErrorType> = new Set<PullErrorType>(
  MANIFEST_RULE_ERROR_TYPES,
);

/**
 * The most characters of a cause the log writes. A cause quotes the Tool Service's answer (a
 * declared `$schema`, a `$ref` in ajv's message) and the line comes back every round while the
 * service serves that manifest: the service must not set its size (docs/security.md "Hostile
 * sources: bounded work"), as a broken name or pattern is quoted at most 80 characters.
 */
export const MAX_LOGGED_CAUSE_CHARS = 200;

/** A problem as the log writes it: the detail, then the log-only cause, cut to its first 200 characters. */
export function problemText(problem: ManifestProblem): string {
  const { cause } = problem;
  if (cause === undefined) return problem.detail;
  const shown =
    cause.length <= MAX_LOGGED_CAUSE_CHARS
      ? cause
      : `${cause.slice(0, MAX_LOGGED_CAUSE_CHARS)}… (${cause.length} characters)`;
  return `${problem.detail} (${shown})`;
}
