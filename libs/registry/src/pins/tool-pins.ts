import { registeredAt } from '@app/config';
import type { CatalogTool } from '../catalog/catalog-tool';
import { definitionChanges, definitionDigest, type DefinitionChange } from './definition-digest';

/** An operator's approval of one tool of a pinned source (docs/operations.md §6). */
export interface ToolApproval {
  /** definitionDigest of what was approved (the cosmetic rule applied). */
  readonly digest: string;
  /** The published entry approved, moved along by cosmetic changes: what a diff compares with. */
  readonly definition: string;
  /** The tags approved with it (docs/operations.md §16). */
  readonly tags?: readonly string[];
  /** ms since the epoch. */
  readonly approvedAt: number;
  /** The admin who approved it (`admin-token`, a JWT subject). */
  readonly approvedBy: string;
}

/** A tool of a pinned source withheld from the catalog until an operator approves it. */
export interface HeldTool {
  readonly name: string;
  readonly sourceId: string;
  /** `new`: never approved; `changed`: its approved definition changed beyond the cosmetic rule. */
  readonly kind: 'new' | 'changed';
  /** What an approval of the pulled definition records; an approval names it. */
  readonly digest: string;
  /** The pulled entry (what would be published once approved), and its tags. */
  readonly definition: string;
  readonly tags?: readonly string[];
  readonly approved?: ToolApproval;
  /** ms since the epoch: when this definition was first held. */
  readonly since: number;
  /** The key an approval of it is kept under (approvalKeyOf). */
  readonly approvalKey: string;
}

/** One held tool as the status endpoints and the admin API show it. */
export interface HeldToolView {
  readonly name: string;
  readonly kind: 'new' | 'changed';
  readonly digest: string;
  readonly since: string;
  /** The members that changed, approved and pulled side by side (every member for a new tool). */
  readonly changes: readonly DefinitionChange[];
  readonly approvedAt?: string;
  readonly approvedBy?: string;
}

/** A pinned source's review state on the status endpoints. */
export interface SourceReviewView {
  readonly heldTools: number;
  readonly held: readonly HeldToolView[];
}

/** The catalog's tools after the pins: those served, those held, approvals moved along. */
export interface Screened {
  readonly tools: CatalogTool[];
  readonly held: ReadonlyMap<string, HeldTool>;
  /** Approvals whose definition a cosmetic change moved along: to be written back. */
  readonly moved: readonly (readonly [string, ToolApproval])[];
}

/** Why a tool was not approved: not held (now, or for that source), or changed again since shown. */
export interface ApprovalRefusal {
  readonly name: string;
  readonly code: 'not-held' | 'changed';
  readonly reason: string;
}

/** The approval key of a source's tool (published names are unique per catalog). */
export function approvalKey(sourceId: string, name: string): string {
  return `${sourceId}\n${name}`;
}

/**
 * The approval key of a tool as the catalog holds it: a runtime-registered upstream's approvals
 * belong to that registration, so a server registered again under the id (or the same one, by
 * another registration) has every tool reviewed again (docs/operations.md §15 "Deleted means
 * gone"); a configured source's are its id's.
 */
export function approvalKeyOf(tool: CatalogTool): string {
  const key = approvalKey(tool.sourceId, tool.name);
  const registration = tool.route.kind === 'bundle' ? undefined : tool.route.upstream.registration;
  return registration === undefined ? key : `${key}\n${registration}`;
}

/** Whether a tool's source is pinned (config or registration). */
export function isPinned(tool: CatalogTool): boolean {
  return tool.route.kind === 'bundle'
    ? tool.route.bundle.pinned === true
    : tool.route.upstream.pinned === true;
}

/**
 * Pinned tool definitions (docs/operations.md §6 "Pinned tool definitions"): a tool of a pinned
 * source is published only while its definition matches the one an operator approved, up to
 * the cosmetic rule (definitionDigest). Any other change, and any tool without an approval,
 * withholds that tool: it is served neither with the new definition nor with the old one until
 * its new digest is approved. Approvals are kept here and written through a store shared by the
 * replicas (RegistryService); this class holds no I/O.
 */
export class ToolPins {
  private approvals = new Map<string, ToolApproval>();
  private heldNow: ReadonlyMap<string, HeldTool> = new Map();
  /** Digests by tool fingerprint (the published entry), for the tools of the last screen. */
  private digests = new Map<string, string>();
  private changeCount = 0;

  /** Changes with every change of the approvals: part of the catalog's content key. */
  get version(): number {
    return this.changeCount;
  }

  /** The held tool of this published name in the catalog served now. */
  held(name: string): HeldTool | undefined {
    return this.heldNow.get(name);
  }

  /** Every held tool of the catalog served now. */
  heldTools(): readonly HeldTool[] {
    return [...this.heldNow.values()];
  }

  /** Every approval this replica holds, by key (what a store that lost its data gets back). */
  approvalEntries(): (readonly [string, ToolApproval])[] {
    return [...this.approvals];
  }

  /** Replaces every approval (read from the shared store); true when anything differed. */
  replaceApprovals(approvals: ReadonlyMap<string, ToolApproval>): boolean {
    let same = approvals.size === this.approvals.size;
    if (same)
      for (const [key, approval] of approvals)
        if (this.approvals.get(key)?.digest !== approval.digest) {
          same = false;
          break;
        }
    this.approvals = new Map(approvals);
    if (!same) this.changeCount += 1;
    return !same;
  }

  /**
   * Splits a merged catalog: tools of unpinned sources and approved ones are served (an approval
   * whose definition changed only cosmetically moves along to it), the rest held. `now`: ms.
   */
  screen(tools: readonly CatalogTool[], now: number): Screened {
    const kept: CatalogTool[] = [];
    const held = new Map<string, HeldTool>();
    const moved: (readonly [string, ToolApproval])[] = [];
    const digests = new Map<string, string>();
    for (const tool of tools) {
      if (!isPinned(tool)) {
        kept.push(tool);
        continue;
      }
      const digest =
        this.digests.get(tool.fingerprint) ??
        definitionDigest({ publishedJson: tool.publishedJson, tags: tool.tags });
      digests.set(tool.fingerprint, digest);
      const key = approvalKeyOf(tool);
      const approval = this.approvals.get(key) ?? this.earlierApproval(tool, key);
      if (approval?.digest === digest) {
        kept.push(tool);
        if (approval.definition !== tool.publishedJson) {
          const along = {
            ...approval,
            definition: tool.publishedJson,
            ...(tool.tags === undefined ? {} : { tags: tool.tags }),
          };
          this.approvals.set(key, along);
          moved.push([key, along]);
        }
        continue;
      }
      const before = this.heldNow.get(tool.name);
      held.set(tool.name, {
        name: tool.name,
        sourceId: tool.sourceId,
        kind: approval === undefined ? 'new' : 'changed',
        digest,
        definition: tool.publishedJson,
        ...(tool.tags === undefined ? {} : { tags: tool.tags }),
        ...(approval === undefined ? {} : { approved: approval }),
        since: before?.digest === digest ? before.since : now,
        approvalKey: key,
      });
    }
    this.digests = digests;
    return { tools: kept, held, moved };
  }

  /**
   * An approval of a registered upstream's tool kept under its id alone (written before
   * approvals were a registration's): it is this registration's when it was made after the
   * registration was created (an id holds one registration at a time), an earlier one's
   * otherwise, and then not taken.
   */
  private earlierApproval(tool: CatalogTool, key: string): ToolApproval | undefined {
    const plain = approvalKey(tool.sourceId, tool.name);
    if (plain === key || tool.route.kind === 'bundle') return undefined;
    const approval = this.approvals.get(plain);
    const since = registeredAt(tool.route.upstream);
    return approval !== undefined && since !== undefined && approval.approvedAt >= since
      ? approval
      : undefined;
  }

  /** The held tools of the catalog just published. */
  commit(held: ReadonlyMap<string, HeldTool>): void {
    this.heldNow = held;
  }

  /**
   * Approves held tools of one source, each by the digest the operator reviewed (a definition
   * that changed again since is not approved). Returns the approvals made, keyed.
   */
  approve(
    sourceId: string,
    tools: readonly { readonly name: string; readonly digest: string }[],
    actor: string,
    now: number,
  ): { approved: [string, ToolApproval][]; names: string[]; refused: ApprovalRefusal[] } {
    const approved: [string, ToolApproval][] = [];
    const names: string[] = [];
    const refused: ApprovalRefusal[] = [];
    const seen = new Set<string>();
    for (const { name, digest } of tools) {
      // a name given twice is approved once: the repeat is no new request
      if (seen.has(name)) continue;
      seen.add(name);
      const held = this.heldNow.get(name);
      if (held === undefined || held.sourceId !== sourceId) {
        refused.push({
          name,
          code: 'not-held',
          reason: `no tool "${name}" of "${sourceId}" is held for review`,
        });
        continue;
      }
      if (held.digest !== digest) {
        refused.push({
          name,
          code: 'changed',
          reason: `the digest given is not the one of the definition of "${name}" held now (${held.digest}): it changed since it was shown, or the digest was mistyped; review it again`,
        });
        continue;
      }
      const key = held.approvalKey;
      const approval = {
        digest,
        definition: held.definition,
        ...(held.tags === undefined ? {} : { tags: held.tags }),
        approvedAt: now,
        approvedBy: actor,
      };
      this.approvals.set(key, approval);
      approved.push([key, approval]);
      names.push(name);
    }
    if (approved.length > 0) this.changeCount += 1;
    return { approved, names, refused };
  }

  /** Review state of each pinned source with held tools, by source id. */
  reviews(): ReadonlyMap<string, SourceReviewView> {
    const bySource = new Map<string, HeldToolView[]>();
    for (const tool of this.heldNow.values()) {
      const views = bySource.get(tool.sourceId) ?? [];
      views.push(heldToolView(tool));
      bySource.set(tool.sourceId, views);
    }
    return new Map(
      [...bySource].map(([id, held]) => [
        id,
        { heldTools: held.length, held: held.sort((a, b) => (a.name < b.name ? -1 : 1)) },
      ]),
    );
  }
}

export function heldToolView(tool: HeldTool): HeldToolView {
  return {
    name: tool.name,
    kind: tool.kind,
    digest: tool.digest,
    since: new Date(tool.since).toISOString(),
    changes: definitionChanges(
      tool.approved === undefined
        ? undefined
        : { publishedJson: tool.approved.definition, tags: tool.approved.tags },
      { publishedJson: tool.definition, tags: tool.tags },
    ),
    ...(tool.approved === undefined
      ? {}
      : {
          approvedAt: new Date(tool.approved.approvedAt).toISOString(),
          approvedBy: tool.approved.approvedBy,
        }),
  };
}
