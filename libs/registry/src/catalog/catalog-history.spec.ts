import { CatalogHistory, HISTORY_NAMES_PER_KIND } from './catalog-history';

const at = (s: number): Date => new Date(Date.UTC(2026, 10, 30, 0, 0, s));
const diff = (added: string[] = [], removed: string[] = [], changed: string[] = []) => ({
  added,
  removed,
  changed,
});

describe('CatalogHistory: a bounded history of catalog changes (docs/console.md "Catalog history")', () => {
  it('keeps only the newest entries up to its capacity, newest first', () => {
    const history = new CatalogHistory(3);
    for (let i = 1; i <= 5; i++) history.recordPublished(at(i), i, diff([`t${i}`]), {});
    const view = history.view();
    expect(view.capacity).toBe(3);
    expect(view.entries.map((e) => e.seq)).toEqual([5, 4, 3]);
    expect(view.entries.map((e) => e.kind === 'published' && e.added)).toEqual([
      ['t5'],
      ['t4'],
      ['t3'],
    ]);
  });

  it('lists at most HISTORY_NAMES_PER_KIND names per kind and keeps the exact counts', () => {
    const history = new CatalogHistory();
    const many = Array.from({ length: HISTORY_NAMES_PER_KIND + 7 }, (_, i) => `n${i}`);
    history.recordPublished(at(0), many.length, diff(many, [], ['c']), {});
    const [entry] = history.view().entries;
    expect(entry).toMatchObject({
      kind: 'published',
      counts: { added: many.length, removed: 0, changed: 1 },
      changed: ['c'],
    });
    expect(entry?.kind === 'published' && entry.added).toEqual(
      many.slice(0, HISTORY_NAMES_PER_KIND),
    );
  });

  it('folds a rejection repeated with the same reason, detail and sources into one entry', () => {
    const history = new CatalogHistory();
    history.recordRejected(at(1), 'ToolNameCollisionError', 'a.b', ['one', 'two']);
    history.recordRejected(at(2), 'ToolNameCollisionError', 'a.b', ['one', 'two']);
    history.recordRejected(at(3), 'ToolNameCollisionError', 'a.b', ['one']);
    history.recordRejected(at(4), 'CatalogTooLargeError', 'a.b', ['one']);
    const entries = history.view().entries;
    expect(entries.map((e) => [e.kind, e.seq, e.kind === 'rejected' && e.repeats])).toEqual([
      ['rejected', 3, 1],
      ['rejected', 2, 1],
      ['rejected', 1, 2],
    ]);
    expect(entries[2]).toMatchObject({ at: at(1).toISOString(), lastAt: at(2).toISOString() });
  });

  it('counts a repeat of any rejection since the last publication (a round may be rejected more than once)', () => {
    const history = new CatalogHistory();
    for (let round = 0; round < 5; round++) {
      history.recordRejected(at(2 * round), 'CatalogTooLargeError', '12 > 10', ['a', 'b']);
      history.recordRejected(at(2 * round + 1), 'CatalogTooLargeError', '11 > 10', ['a']);
    }
    expect(history.view().entries.map((e) => e.kind === 'rejected' && e.repeats)).toEqual([5, 5]);
  });

  it('starts a new entry when a publication comes between two equal rejections', () => {
    const history = new CatalogHistory();
    history.recordRejected(at(1), 'ToolNameCollisionError', 'x', ['one']);
    history.recordPublished(at(2), 1, diff(['g.new']), {});
    history.recordRejected(at(3), 'ToolNameCollisionError', 'x', ['one']);
    expect(history.view().entries.map((e) => e.kind)).toEqual([
      'rejected',
      'published',
      'rejected',
    ]);
  });

  it('hands out copies: a view does not change when later rejections repeat', () => {
    const history = new CatalogHistory();
    history.recordRejected(at(1), 'ToolNameCollisionError', 'x', ['one']);
    const before = history.view();
    history.recordRejected(at(2), 'ToolNameCollisionError', 'x', ['one']);
    expect(before.entries[0]).toMatchObject({ repeats: 1 });
    expect(history.view().entries[0]).toMatchObject({ repeats: 2 });
  });
});
