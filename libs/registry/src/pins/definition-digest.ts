import { createHash } from 'node:crypto';

/**
 * What a pinned tool's approval covers (docs/operations.md §6 "Pinned tool definitions"): the
 * members of its published entry that tell a model what the tool does and takes. Icons and
 * `execution` are presentation and scheduling; `_meta` is never published.
 */
export const PINNED_MEMBERS = [
  'name',
  'title',
  'description',
  'inputSchema',
  'outputSchema',
  'annotations',
] as const;

export type PinnedMember = (typeof PINNED_MEMBERS)[number];

/** One member a pull changed: before (approved) and after (the pull's), as published. */
export interface DefinitionChange {
  readonly member: PinnedMember;
  readonly approved?: unknown;
  readonly pulled?: unknown;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Members whose string value is prose for a reader, wherever they sit (the tool, its schemas). */
const PROSE = new Set(['title', 'description']);

/**
 * The cosmetic rule: prose (a `title` or `description` string, of the tool, its annotations or
 * anywhere in its schemas) compared with every run of white space (spaces, tabs, line breaks)
 * as one space and none at either end, and object members in any order. Every other string
 * (a pattern, an enum value, a default) is compared exactly, and any other change, a single
 * letter of prose included, is a change.
 */
function canonical(value: unknown, prose = false): unknown {
  if (typeof value === 'string') return prose ? value.replace(/\s+/g, ' ').trim() : value;
  if (Array.isArray(value)) return value.map((item) => canonical(item));
  if (isRecord(value)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) out[key] = canonical(value[key], PROSE.has(key));
    return out;
  }
  return value;
}

function membersOf(publishedJson: string): Record<string, unknown> {
  const parsed: unknown = JSON.parse(publishedJson);
  return isRecord(parsed) ? parsed : {};
}

/**
 * The digest an approval records: SHA-256 (base64url) of the pinned members after the cosmetic
 * rule, so a pull that only re-wraps a description or reorders a schema's keys keeps it.
 */
export function definitionDigest(publishedJson: string): string {
  const members = membersOf(publishedJson);
  const pinned: Record<string, unknown> = {};
  for (const member of PINNED_MEMBERS)
    pinned[member] = canonical(members[member], PROSE.has(member)) ?? null;
  return createHash('sha256').update(JSON.stringify(pinned)).digest('base64url');
}

/**
 * The members that differ between an approved and a pulled definition beyond the cosmetic
 * rule, each with both values as published; every member of a tool with no approval yet.
 */
export function definitionChanges(
  approvedJson: string | undefined,
  pulledJson: string,
): DefinitionChange[] {
  const pulled = membersOf(pulledJson);
  const approved = approvedJson === undefined ? undefined : membersOf(approvedJson);
  const changes: DefinitionChange[] = [];
  for (const member of PINNED_MEMBERS) {
    const before = approved?.[member];
    const after = pulled[member];
    if (before === undefined && after === undefined) continue;
    if (
      approved !== undefined &&
      JSON.stringify(canonical(before, PROSE.has(member))) ===
        JSON.stringify(canonical(after, PROSE.has(member)))
    )
      continue;
    changes.push({
      member,
      ...(before === undefined ? {} : { approved: before }),
      ...(after === undefined ? {} : { pulled: after }),
    });
  }
  return changes;
}
