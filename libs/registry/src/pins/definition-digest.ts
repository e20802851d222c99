import { createHash } from 'node:crypto';

/**
 * What a pinned tool's approval covers (docs/operations.md §6 "Pinned tool definitions"): the
 * members of its published entry that tell a model what the tool does and takes, and its tags
 * (which decide the virtual servers it is offered on, docs/operations.md §16). Icons and
 * `execution` are presentation and scheduling.
 */
export const PINNED_MEMBERS = [
  'name',
  'title',
  'description',
  'inputSchema',
  'outputSchema',
  'annotations',
  'tags',
] as const;

export type PinnedMember = (typeof PINNED_MEMBERS)[number];

/** One member a pull changed: before (approved) and after (the pull's), as published. */
export interface DefinitionChange {
  readonly member: PinnedMember;
  readonly approved?: unknown;
  readonly pulled?: unknown;
}

/** A tool as pinned: its published entry and its tags (a manifest's `_meta.tags` are not published). */
export interface PinnedDefinition {
  readonly publishedJson: string;
  readonly tags?: readonly string[];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Members whose string value is prose for a reader, where a schema keyword stands. */
const PROSE = new Set(['title', 'description']);
/** Schema keywords whose value is data (compared exactly, prose rule or not). */
const DATA = new Set(['default', 'const', 'enum', 'examples']);
/** The white space the cosmetic rule forgives: spaces, tabs and line breaks, nothing else. */
const WHITE_SPACE = /[ \t\r\n]+/g;

/**
 * The cosmetic rule: prose (a `title` or `description` string where a keyword stands: of the
 * tool, its annotations, anywhere in its schemas but inside `default`, `const`, `enum` and
 * `examples`) compared with every run of spaces, tabs and line breaks as one space and none at
 * either end, and object members in any order. Every other string is compared exactly, and
 * any other change, a single letter of prose or another space character included, is a
 * change. Objects are built without a prototype: a member named `__proto__` counts like any.
 */
function canonical(value: unknown, prose: boolean, data: boolean): unknown {
  if (typeof value === 'string') return prose ? value.replace(WHITE_SPACE, ' ').trim() : value;
  if (Array.isArray(value)) return value.map((item) => canonical(item, false, data));
  if (isRecord(value)) {
    const out = Object.create(null) as Record<string, unknown>;
    for (const key of Object.keys(value).sort()) {
      const inData = data || DATA.has(key);
      out[key] = canonical(value[key], !inData && PROSE.has(key), inData);
    }
    return out;
  }
  return value;
}

function membersOf(definition: PinnedDefinition): Record<string, unknown> {
  const parsed: unknown = JSON.parse(definition.publishedJson);
  const members = isRecord(parsed) ? parsed : {};
  // the gateway's tags, beside the published members (an upstream's own `_meta` stays where it is)
  return { ...members, tags: definition.tags === undefined ? undefined : [...definition.tags] };
}

function memberText(member: PinnedMember, value: unknown): string {
  return JSON.stringify(canonical(value, PROSE.has(member), false) ?? null);
}

/**
 * The digest an approval records: SHA-256 (base64url) of the pinned members after the cosmetic
 * rule, so a pull that only re-wraps a description or reorders a schema's keys keeps it.
 */
export function definitionDigest(definition: PinnedDefinition): string {
  const members = membersOf(definition);
  const hash = createHash('sha256');
  for (const member of PINNED_MEMBERS)
    hash.update(`${member}\u0000${memberText(member, members[member])}\u0000`);
  return hash.digest('base64url');
}

/**
 * The members that differ between an approved and a pulled definition beyond the cosmetic
 * rule, each with both values as published; every member of a tool with no approval yet.
 */
export function definitionChanges(
  approved: PinnedDefinition | undefined,
  pulled: PinnedDefinition,
): DefinitionChange[] {
  const after = membersOf(pulled);
  const before = approved === undefined ? undefined : membersOf(approved);
  const changes: DefinitionChange[] = [];
  for (const member of PINNED_MEMBERS) {
    const was = before?.[member];
    const now = after[member];
    if (was === undefined && now === undefined) continue;
    if (before !== undefined && memberText(member, was) === memberText(member, now)) continue;
    changes.push({
      member,
      ...(was === undefined ? {} : { approved: was }),
      ...(now === undefined ? {} : { pulled: now }),
    });
  }
  return changes;
}
