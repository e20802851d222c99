import type { BundleDefinition } from '@app/config';

/**
 * What a call to a Tool Service tool needs of the tool, resolved by the caller: ExecutionModule
 * runs one resolved call and never looks a tool up (docs/architecture.md). The registry's
 * catalog tools of a bundle have this shape.
 */
export interface BundleCallTarget {
  /** The published name: the last segment of the call's path (contract §10). */
  readonly name: string;
  readonly sourceId: string;
  /** Effective timeout in ms (contract §7.5). */
  readonly timeoutMillis: number;
  readonly route: { readonly kind: 'bundle'; readonly bundle: BundleDefinition };
}
