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
  // the aggregate (contract §7.3, §7.6): the bundle's manifest was valid but could not be published
  'ToolNameCollisionError',
  'CatalogTooLargeError',
] as const;

export type PullErrorType = (typeof PULL_ERROR_TYPES)[number];

/** One reason a manifest was rejected; `detail` names the tool and rule for the log, never for clients. */
export interface ManifestProblem {
  readonly type: PullErrorType;
  readonly detail: string;
}
