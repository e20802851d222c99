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
});
