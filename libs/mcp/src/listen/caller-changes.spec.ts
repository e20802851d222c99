import type { CallerAccess } from '@app/identity';
import type { CatalogSnapshot } from '@app/registry';
import { changedListsFor } from './caller-changes';
import { changedLists } from './catalog-changes';

interface Entry {
  readonly source: string;
  readonly name: string;
}

/** The members of a catalog snapshot that the list_changed filters read. */
function catalog(tools: Entry[], resources: Entry[] = []): CatalogSnapshot {
  const json = (e: Entry): string => JSON.stringify({ name: e.name });
  const listed = {
    prompts: [],
    resources: resources.map((r) => ({ sourceId: r.source, publishedJson: json(r) })),
    resourceTemplates: [],
  };
  return {
    tools: tools.map((t) => ({ sourceId: t.source, name: t.name, publishedJson: json(t) })),
    toolsJsonBytes: Buffer.from(`[${tools.map(json).join(',')}]`),
    extras: {
      listed: () => listed,
      promptsJson: '[]',
      resourcesJson: `[${resources.map(json).join(',')}]`,
      resourceTemplatesJson: '[]',
    },
  } as unknown as CatalogSnapshot;
}

const onlyUb: CallerAccess = { all: false, key: '1', sources: new Set(['ub']), tools: new Set() };
const byName: CallerAccess = {
  all: false,
  key: '2',
  sources: new Set(),
  tools: new Set(['sec__open']),
};

describe('list_changed cut to the caller’s grant (docs/security.md "Listen filters and list changes")', () => {
  const before = catalog(
    [
      { source: 'ub', name: 'ub__a' },
      { source: 'sec', name: 'sec__open' },
    ],
    [{ source: 'sec', name: 'x26://secret/r1' }],
  );
  const secGrew = catalog(
    [
      { source: 'ub', name: 'ub__a' },
      { source: 'sec', name: 'sec__open' },
      { source: 'sec', name: 'sec__late' },
    ],
    [
      { source: 'sec', name: 'x26://secret/r1' },
      { source: 'sec', name: 'x26://secret/r2' },
    ],
  );

  it('a change of a source outside the grant is not told to a restricted caller', () => {
    const changed = changedLists(before, secGrew);
    expect(changed).toEqual(['tools', 'resources']);
    expect(changedListsFor(changed, before, secGrew, onlyUb)).toEqual([]);
  });

  it('a change inside the grant is told; so is everything without restrictions', () => {
    const ubGrew = catalog([
      { source: 'ub', name: 'ub__a' },
      { source: 'ub', name: 'ub__b' },
      { source: 'sec', name: 'sec__open' },
    ]);
    const changed = changedLists(before, ubGrew);
    expect(changedListsFor(changed, before, ubGrew, onlyUb)).toEqual(['tools']);
    expect(changedListsFor(changed, before, secGrew, undefined)).toEqual(changed);
    expect(changedListsFor(changed, before, secGrew, { all: true })).toEqual(changed);
  });

  it('a tool granted by name counts: its removal is told, another tool of its source is not', () => {
    expect(changedListsFor(['tools'], before, secGrew, byName)).toEqual([]);
    const removed = catalog([{ source: 'ub', name: 'ub__a' }]);
    expect(changedListsFor(['tools'], before, removed, byName)).toEqual(['tools']);
  });

  it('the first catalog tells a restricted caller only the lists it sees entries in', () => {
    expect(changedListsFor(['tools', 'resources'], undefined, before, onlyUb)).toEqual(['tools']);
  });
});
