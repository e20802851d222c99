import { UpdateCoalescer } from './update-coalescer';

describe('UpdateCoalescer: a burst of one key is the first now and one more when the interval is up', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('sends the first at once, coalesces the rest of a burst into one later send, never drops the last', async () => {
    const coalescer = new UpdateCoalescer(500);
    const sent: string[] = [];
    for (let i = 0; i < 1000; i++) coalescer.offer('k', () => sent.push(`k${i}`));
    expect(sent).toEqual(['k0']);
    expect(coalescer.waiting).toBe(1);
    await jest.advanceTimersByTimeAsync(499);
    expect(sent).toEqual(['k0']);
    await jest.advanceTimersByTimeAsync(1);
    // the burst's newest update is the one sent at its end (its _meta may say more)
    expect(sent).toEqual(['k0', 'k999']);
    // after a quiet interval the next goes at once again
    await jest.advanceTimersByTimeAsync(500);
    coalescer.offer('k', () => sent.push('later'));
    expect(sent).toEqual(['k0', 'k999', 'later']);
    coalescer.close();
  });

  it('keys are independent', () => {
    const coalescer = new UpdateCoalescer(500);
    const sent: string[] = [];
    coalescer.offer('a', () => sent.push('a'));
    coalescer.offer('b', () => sent.push('b'));
    coalescer.offer('a', () => sent.push('a2'));
    expect(sent).toEqual(['a', 'b']);
    expect(coalescer.waiting).toBe(1);
    coalescer.close();
    expect(coalescer.waiting).toBe(0);
  });

  it('remembers at most about 10,000 keys, and walks them at most once an interval', () => {
    let now = 0;
    const coalescer = new UpdateCoalescer(500, () => now);
    const keys = (coalescer as unknown as { last: Map<string, number> }).last;
    for (let i = 0; i < 10_000; i++) coalescer.offer(`k${i}`, () => undefined);
    expect(keys.size).toBe(10_000);
    now = 1_000;
    coalescer.offer('fresh', () => undefined);
    // the 10,000 whose interval is over are forgotten, the new one kept
    expect(keys.size).toBe(1);
    for (let i = 0; i < 10_000; i++) coalescer.offer(`m${i}`, () => undefined);
    // within the same interval no second walk: they stay until the next one
    expect(keys.size).toBe(10_001);
    coalescer.close();
  });
});
