import type { StoredRegistration } from './registration-record';
import {
  ReplicaTombstones,
  seedEntries,
  supersedes,
  type SeedEntry,
  type Tombstone,
} from './registration-tombstones';

const live = (id: string, version: number): StoredRegistration => ({
  upstream: { id, url: `http://10.0.0.9/${id}` } as StoredRegistration['upstream'],
  createdAt: 1,
  updatedAt: 1,
  createdBy: 'admin-token',
  updatedBy: 'admin-token',
  version,
});
const dead = (id: string, version: number, deletedAt = 1000): Tombstone => ({
  id,
  version,
  deletedAt,
});
const summary = (entries: SeedEntry[]): string[] =>
  entries
    .map((e) =>
      e.kind === 'live'
        ? `${e.record.upstream.id}:live@${e.record.version}`
        : `${e.tombstone.id}:dead@${e.tombstone.version}`,
    )
    .sort();

describe('the merge rule of a re-seed (operations §15 "When Redis comes back empty")', () => {
  it('the higher version wins, a deletion beats a live record of the same version', () => {
    const l = (version: number) => ({ version, deleted: false });
    const d = (version: number) => ({ version, deleted: true });
    expect(supersedes(l(5), l(4))).toBe(true);
    expect(supersedes(l(4), l(5))).toBe(false);
    expect(supersedes(l(4), l(4))).toBe(false);
    expect(supersedes(d(4), l(4))).toBe(true);
    expect(supersedes(l(4), d(4))).toBe(false);
    expect(supersedes(d(4), d(4))).toBe(false);
    expect(supersedes(d(3), l(4))).toBe(false);
    expect(supersedes(l(5), d(4))).toBe(true);
    expect(supersedes(d(5), l(4))).toBe(true);
  });

  it('gives one entry per id whatever order records and deletions come in', () => {
    const records = [live('a', 3), live('b', 7), live('c', 2)];
    const tombstones = [dead('a', 3), dead('b', 6), dead('c', 4), dead('d', 1)];
    const expected = ['a:dead@3', 'b:live@7', 'c:dead@4', 'd:dead@1'];
    expect(summary(seedEntries(records, tombstones))).toEqual(expected);
    expect(summary(seedEntries([...records].reverse(), [...tombstones].reverse()))).toEqual(
      expected,
    );
  });
});

describe('ReplicaTombstones', () => {
  let now = 1_000_000;
  const clock = () => now;

  it('keeps the deletion of the higher version per id, and the first time it was seen', () => {
    const t = new ReplicaTombstones(clock, 60_000, 10);
    t.note(dead('x', 4, now));
    t.note(dead('x', 3, now + 5));
    t.note(dead('x', 4, now + 10));
    expect(t.list()).toEqual([dead('x', 4, now)]);
    t.note(dead('x', 9, now + 20));
    expect(t.list()).toEqual([dead('x', 9, now + 20)]);
  });

  it('forgets an id read live again, expired deletions, and the oldest beyond its bound', () => {
    now = 1_000_000;
    const t = new ReplicaTombstones(clock, 60_000, 3);
    t.note(dead('gone', 1, now - 60_001));
    expect(t.list()).toEqual([]);
    for (const [i, id] of ['a', 'b', 'c', 'd'].entries()) t.note(dead(id, 1, now + i));
    expect(t.list().map((x) => x.id)).toEqual(['b', 'c', 'd']);
    t.forget('c');
    expect(t.list().map((x) => x.id)).toEqual(['b', 'd']);
    now += 60_004;
    expect(t.list()).toEqual([]);
  });
});
