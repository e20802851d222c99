import { RetiredLabels } from './retired-labels';

describe('RetiredLabels', () => {
  let now = 1_000_000;
  const labels = (): RetiredLabels => new RetiredLabels(60_000, () => now);

  it('drops what started before the retirement, keeps what started after it', () => {
    const retired = labels();
    retired.retire(['a']);
    expect(retired.dropped('a', 5)).toBe(true);
    expect(retired.dropped('a')).toBe(true);
    expect(retired.dropped('b', 5)).toBe(false);
    now += 1_000;
    expect(retired.dropped('a', 0.01)).toBe(false);
  });

  it('forgets a retirement after keepMs, and at once when revived', () => {
    const retired = labels();
    retired.retire(['a', 'b']);
    retired.revive('b');
    expect(retired.dropped('b')).toBe(false);
    now += 60_001;
    expect(retired.dropped('a')).toBe(false);
  });

  it('purges old retirements when new ones come', () => {
    const retired = labels();
    retired.retire(['old']);
    now += 60_001;
    retired.retire(['new']);
    expect((retired as unknown as { since: Map<string, number> }).since.has('old')).toBe(false);
  });
});
