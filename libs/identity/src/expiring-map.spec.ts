import { ExpiringMap } from './expiring-map';

describe('ExpiringMap', () => {
  let clock = 0;
  const now = (): number => clock;

  beforeEach(() => {
    clock = 1_000;
  });

  it('gives a value while alive and drops it once expired', () => {
    const map = new ExpiringMap<string>(10, now);
    map.set('a', 'A', 1_500);
    expect(map.get('a')).toBe('A');
    clock = 1_500;
    expect(map.get('a')).toBeUndefined();
    expect(map.size).toBe(0);
  });

  it('drops the expired entries as new ones come, not only when full: what it holds is the last lifetime of keys', () => {
    const map = new ExpiringMap<number>(10_000, now);
    for (let i = 0; i < 1_000; i += 1) map.set(`old-${i}`, i, clock + 60_000);
    expect(map.size).toBe(1_000);
    clock += 120_000;
    map.set('new', 1, clock + 60_000);
    expect(map.size).toBe(1);
    expect(map.get('old-5')).toBeUndefined();
    expect(map.get('new')).toBe(1);
  });

  it('stops at the first live entry: newer expired ones wait for it (bounded by one lifetime)', () => {
    const map = new ExpiringMap<number>(100, now);
    map.set('long', 1, clock + 60_000);
    map.set('short', 2, clock + 10);
    clock += 20;
    map.set('next', 3, clock + 60_000);
    expect(map.size).toBe(3);
    expect(map.get('short')).toBeUndefined();
    clock += 60_000;
    map.set('last', 4, clock + 60_000);
    expect(map.size).toBe(1);
  });

  it('keeps at most maxEntries, the oldest insertion going first; a key set again is new', () => {
    const map = new ExpiringMap<number>(3, now);
    map.set('a', 1, 9_999);
    map.set('b', 2, 9_999);
    map.set('c', 3, 9_999);
    map.set('a', 10, 9_999);
    map.set('d', 4, 9_999);
    expect(map.size).toBe(3);
    expect(map.get('b')).toBeUndefined();
    expect([map.get('c'), map.get('a'), map.get('d')]).toEqual([3, 10, 4]);
  });

  it('never keeps an entry already expired when set, and deleteWhere drops by value', () => {
    const map = new ExpiringMap<number>(10, now);
    map.set('a', 1, clock);
    expect(map.size).toBe(0);
    map.set('b', 2, clock + 5);
    map.set('c', 3, clock + 5);
    map.deleteWhere((v) => v === 2);
    expect([map.get('b'), map.get('c'), map.size]).toEqual([undefined, 3, 1]);
  });
});
