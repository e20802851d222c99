import type { SourceContribution } from './catalog/source-contribution';
import type { PullErrorType } from './manifest/manifest-errors';
import type { BundlePullResult } from './pull-result';
import type { UpstreamPullResult } from './upstream/upstream-pull-result';

/**
 * The kinds of source the catalog is merged from (docs/architecture.md "The house"): Tool Service
 * bundles (contract §5–§7) and upstream MCP servers, configured or registered at runtime
 * (docs/operations.md §10, §15).
 */
export type SourceKind = 'bundle' | 'upstream';

/**
 * What a refresh round pulled of one kind of source (discovery's pullers each give one): the
 * registry hands each intake the results of its kind.
 */
export type SourcePulls =
  | { readonly kind: 'bundle'; readonly results: readonly BundlePullResult[] }
  | { readonly kind: 'upstream'; readonly results: readonly UpstreamPullResult[] };

/** The result of one source's pull, by kind. */
interface PullResultOf {
  readonly bundle: BundlePullResult;
  readonly upstream: UpstreamPullResult;
}

/** The results of one kind among a round's pulls, in the order they were pulled. */
export function resultsOf<K extends SourceKind>(
  pulls: readonly SourcePulls[],
  kind: K,
): PullResultOf[K][] {
  const results: PullResultOf[K][] = [];
  for (const pulled of pulls)
    if (pulled.kind === kind)
      for (const result of pulled.results as readonly PullResultOf[K][]) results.push(result);
  return results;
}

/** Why a merge did not adopt a source's copy (contract §7.3, §7.6). */
export type MergeRejectionType = Extract<
  PullErrorType,
  'ToolNameCollisionError' | 'CatalogTooLargeError'
>;

/** A source the catalog serves incompletely: from a last good copy, or not at all. */
export interface PartialSource {
  readonly id: string;
  readonly kind: SourceKind;
  /** `last-good`: served from the copy of an earlier pull; `missing`: nothing of it is served. */
  readonly state: 'last-good' | 'missing';
}

/**
 * One round of one intake, before the catalog decides: the copies it may adopt (candidates, by
 * source id) and the sources that failed. RegistryService merges the candidates of every
 * intake's round, tells each round which candidates the merge did not adopt (`reject`), then
 * has each intake commit its round.
 */
export interface SourceRound {
  /** The ids of the sources with a candidate copy, in the order the round found them. */
  candidateIds(): string[];
  hasCandidate(id: string): boolean;
  /** The content fingerprint of the source's candidate copy; undefined when it has none. */
  candidateFingerprint(id: string): string | undefined;
  /** true when the source's candidate differs in content from the copy it serves now. */
  isChanged(id: string): boolean;
  /**
   * The merge did not adopt the source's candidate: it becomes this round's failure of the
   * source, with the merge's detail when the merge blamed this copy. false when the round had
   * no candidate of it.
   */
  reject(id: string, errorType: MergeRejectionType, detail?: string): boolean;
}

/**
 * What the registry asks of every kind of source (docs/architecture.md "The house"): its rounds,
 * its last good copies shared through Redis, its statuses. A new kind of source is one more
 * intake (and one more puller in discovery).
 */
export interface SourceIntake<R extends SourceRound> {
  readonly kind: SourceKind;
  /** A round in which nothing of this kind was pulled (a publication of the copies held). */
  emptyRound(): R;
  /**
   * Checks this kind's results among a round's pulls (contract §5, §7.1; docs/operations.md §10
   * "Checks"); nothing is adopted until `commit`.
   */
  intakePulls(pulls: readonly SourcePulls[]): Promise<R>;
  /**
   * A round of the copies the shared store holds (warm start, contract §11) for sources that
   * hold nothing newer, each checked like a pull; empty without a store. Never throws.
   */
  storedRound(): Promise<R>;
  /**
   * What the catalog would serve of this kind with the round's candidates (the copies held
   * otherwise); undefined when the kind holds the catalog back (an enabled bundle without a copy
   * yet: contract §1, all or nothing).
   */
  contributions(round: R): readonly SourceContribution[] | undefined;
  /** Adopts the candidates the merge accepted and records every outcome of the round. */
  commit(round: R): void;
  /** Writes every shared last good copy held here to the store again; how many. */
  writeBack(): number;
  /** Each source's id and status, for the status gauge. */
  statuses(): readonly { readonly id: string; readonly status: string }[];
  /** A source's namePrefix (its published tool names start with it); undefined when unknown. */
  namePrefixOf(id: string): string | undefined;
  /** Enabled sources served from a last good copy, or not at all. */
  partialSources(): PartialSource[];
}

/**
 * A round's candidates and failures by source id, and what `SourceRound` asks of them; the
 * kind says how a candidate's fingerprint is read and how a rejection is recorded.
 */
export abstract class MapRound<Candidate, Failure> implements SourceRound {
  readonly candidates = new Map<string, Candidate>();
  readonly failures = new Map<string, Failure>();

  /**
   * @param servedFingerprint the content fingerprint of the copy a source serves now
   */
  constructor(private readonly servedFingerprint: (id: string) => string | undefined) {}

  protected abstract fingerprintOf(candidate: Candidate): string;
  protected abstract failureOf(id: string, errorType: MergeRejectionType, detail?: string): Failure;

  candidateIds(): string[] {
    return [...this.candidates.keys()];
  }

  hasCandidate(id: string): boolean {
    return this.candidates.has(id);
  }

  candidateFingerprint(id: string): string | undefined {
    const candidate = this.candidates.get(id);
    return candidate === undefined ? undefined : this.fingerprintOf(candidate);
  }

  isChanged(id: string): boolean {
    const candidate = this.candidates.get(id);
    return candidate !== undefined && this.fingerprintOf(candidate) !== this.servedFingerprint(id);
  }

  reject(id: string, errorType: MergeRejectionType, detail?: string): boolean {
    if (!this.candidates.delete(id)) return false;
    this.failures.set(id, this.failureOf(id, errorType, detail));
    return true;
  }
}
