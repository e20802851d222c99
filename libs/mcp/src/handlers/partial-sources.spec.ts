import type { CallerAccess } from '@app/identity';
import type { PartialSource } from '@app/registry';
import { PARTIAL_SOURCES_META_KEY, hearsOfSource, partialSourcesMember } from './partial-sources';

const partial: PartialSource[] = [
  { id: 'claims', kind: 'bundle', state: 'last-good' },
  { id: 'ghost', kind: 'upstream', state: 'missing' },
];
const prefixes: Record<string, string> = { claims: 'claims.', ghost: 'ghost__' };
const prefixOf = (id: string): string | undefined => prefixes[id];

function restricted(sources: string[], tools: string[]): CallerAccess {
  return { all: false, key: 'test', sources: new Set(sources), tools: new Set(tools) };
}

const named = (member: string): unknown =>
  member === ''
    ? []
    : (JSON.parse(`{${member.slice(1)}}`) as { _meta: Record<string, unknown> })._meta[
        PARTIAL_SOURCES_META_KEY
      ];

describe('partialSourcesMember (docs/operations.md §10 "Partial lists"; docs/operations.md §13 "Access")', () => {
  it('names every partial source to an unrestricted caller, and nothing when none is partial', () => {
    expect(named(partialSourcesMember(partial))).toEqual(partial);
    expect(named(partialSourcesMember(partial, { all: true }))).toEqual(partial);
    expect(partialSourcesMember([], restricted(['claims'], []))).toBe('');
  });

  it('names to a restricted caller the sources granted whole, and with prefixOf those of its single-tool grants', () => {
    const access = restricted(['claims'], ['ghost__lookup']);
    expect(named(partialSourcesMember(partial, access))).toEqual([partial[0]]);
    expect(named(partialSourcesMember(partial, access, prefixOf))).toEqual(partial);
    expect(named(partialSourcesMember(partial, restricted([], ['other__x']), prefixOf))).toEqual(
      [],
    );
    expect(hearsOfSource(restricted([], ['claims.quote']), 'claims', prefixOf)).toBe(true);
    expect(hearsOfSource(restricted([], ['claims.quote']), 'unknown', prefixOf)).toBe(false);
  });
});
