import type { PullErrorType } from './manifest/manifest-errors';
import type { SourceReviewView } from './pins/tool-pins';
import type { StoreStatus } from './redis/last-good-store';
import type { BundleStatusView } from './state/bundle-record';
import type { UpstreamStatusView } from './upstream/upstream-record';

/** What /actuator/toolBundles returns. */
export interface ToolBundlesView {
  readonly identity: string;
  readonly ready: boolean;
  readonly catalog: {
    readonly published: boolean;
    readonly toolCount: number;
    readonly publishedAt: string | null;
    /** Why the last merge kept the previous catalog (an error type name), null after a good merge. */
    readonly lastRejectionReason: PullErrorType | null;
  };
  /** The shared last-good store: configured, reachable, last failure type. */
  readonly redis: StoreStatus;
  readonly bundles: readonly Reviewed<BundleStatusView>[];
}

/**
 * A source's status view with its review state when it is pinned (docs/operations.md §6
 * "Pinned tool definitions"): `status` reads `review` while a healthy source has tools held.
 */
export type Reviewed<V extends { readonly id: string; readonly status: string }> = Omit<
  V,
  'status'
> & {
  readonly status: V['status'] | 'review';
  readonly pinned?: true;
  readonly review?: SourceReviewView;
};

/** What /actuator/upstreams returns (docs/operations.md §10 "GET /actuator/upstreams"). */
export interface UpstreamsView {
  readonly identity: string;
  readonly ready: boolean;
  readonly upstreams: readonly Reviewed<UpstreamStatusView>[];
}

/**
 * Each source's status view with its review state where it is pinned (docs/operations.md §6
 * "Pinned tool definitions"): a healthy source with tools held for review reads `review`.
 * @param pinned whether the source of this id is pinned
 * @param reviews the review state of each pinned source with tools held
 */
export function reviewed<V extends { readonly id: string; readonly status: string }>(
  views: readonly V[],
  pinned: (id: string) => boolean,
  reviews: ReadonlyMap<string, SourceReviewView>,
): Reviewed<V>[] {
  return views.map((view) => {
    if (!pinned(view.id)) return view;
    const review = reviews.get(view.id);
    if (review === undefined) return { ...view, pinned: true };
    return {
      ...view,
      status: view.status === 'healthy' ? 'review' : view.status,
      pinned: true,
      review,
    };
  });
}
