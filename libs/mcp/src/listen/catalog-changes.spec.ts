import { CatalogExtras, CatalogSnapshot, type CatalogTool } from '@app/registry';
import { changedLists } from './catalog-changes';

function tool(name: string, description = name): CatalogTool {
  return {
    name,
    fingerprint: `${name}:${description}`,
    timeoutMillis: 1000,
    publishedJson: JSON.stringify({ name, description, inputSchema: { type: 'object' } }),
  } as unknown as CatalogTool;
}

const snapshot = (tools: CatalogTool[], timeout = 1000): Promise<CatalogSnapshot> =>
  CatalogSnapshot.build(
    tools.map((t) => ({ ...t, timeoutMillis: timeout })),
    tools.map((t) => t.name).join(','),
    new Date(0),
    {},
    CatalogExtras.EMPTY,
  );

describe('which lists a catalog swap changed (docs/operations.md §11 "Notification streams")', () => {
  it('the first catalog changes its non-empty lists only', async () => {
    expect(changedLists(undefined, await snapshot([tool('a')]))).toEqual(['tools']);
    expect(changedLists(undefined, await snapshot([]))).toEqual([]);
  });

  it('a tool added, removed or re-described changes tools', async () => {
    const one = await snapshot([tool('a')]);
    expect(changedLists(one, await snapshot([tool('a'), tool('b')]))).toEqual(['tools']);
    expect(changedLists(one, await snapshot([]))).toEqual(['tools']);
    expect(changedLists(one, await snapshot([tool('a', 'new text')]))).toEqual(['tools']);
  });

  it('a swap that changes nothing a client lists (the same bytes, another timeout) changes nothing', async () => {
    const before = await snapshot([tool('a'), tool('b')]);
    expect(changedLists(before, await snapshot([tool('a'), tool('b')], 9000))).toEqual([]);
  });
});
