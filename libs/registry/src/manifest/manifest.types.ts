/** A tool as published on tools/list: exactly the manifest's fields, never `_meta` (contract §5). */
export interface PublishedTool {
  readonly name: string;
  readonly title?: string;
  readonly description: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
  readonly outputSchema?: Readonly<Record<string, unknown>>;
  readonly annotations?: Readonly<Record<string, unknown>>;
}

/** A manifest tool that passed validation (contract §5). */
export interface ManifestTool {
  readonly published: PublishedTool;
  /** `_meta.version`. */
  readonly version: string;
  /** `_meta.timeoutMillis` as declared (a positive integer), before the maxToolTimeoutMillis cap. */
  readonly timeoutMillis?: number;
  /** `_meta.enabled`, default true; false = kept but neither listed nor callable (contract §7.2). */
  readonly enabled: boolean;
}

/** A whole manifest that passed validation; the unit of last-good (contract §6, §11). */
export interface AcceptedManifest {
  readonly bundleId: string;
  readonly revision?: string;
  /** Every tool of the manifest in manifest order, disabled ones included. */
  readonly tools: readonly ManifestTool[];
  /** Fingerprint of the manifest's content: equal fingerprints mean nothing changed. */
  readonly fingerprint: string;
}
