import { CountedWarning, THROTTLED_LINE_EVERY_MS, ThrottledLines } from './throttled-lines';

describe('ThrottledLines', () => {
  let lines: string[];
  let throttled: ThrottledLines;
  const note = (key: string): void => throttled.note(key, (count) => `${key} x${count}`);

  beforeEach(() => {
    jest.useFakeTimers();
    lines = [];
    throttled = new ThrottledLines((line) => lines.push(line));
  });

  afterEach(() => jest.useRealTimers());

  it('writes the first at once, then at most one a minute per key, counting the rest', () => {
    for (let i = 0; i < 100; i++) note('a');
    expect(lines).toEqual(['a x1']);
    jest.advanceTimersByTime(THROTTLED_LINE_EVERY_MS - 1);
    note('a');
    expect(lines).toEqual(['a x1']);
    jest.advanceTimersByTime(1);
    // the 99 after the first and the one just before the minute: summarised when it ends
    expect(lines).toEqual(['a x1', 'a x100']);
    note('a');
    expect(lines).toEqual(['a x1', 'a x100']);
    jest.advanceTimersByTime(THROTTLED_LINE_EVERY_MS);
    expect(lines).toEqual(['a x1', 'a x100', 'a x1']);
  });

  it('writes nothing at the end of a minute in which nothing more occurred', () => {
    note('a');
    jest.advanceTimersByTime(5 * THROTTLED_LINE_EVERY_MS);
    expect(lines).toEqual(['a x1']);
    note('a');
    expect(lines).toEqual(['a x1', 'a x1']);
  });

  it('summarises with the line of the last occurrence', () => {
    throttled.note('a', (count) => `first x${count}`);
    throttled.note('a', (count) => `second x${count}`);
    throttled.note('a', (count) => `third x${count}`);
    jest.advanceTimersByTime(THROTTLED_LINE_EVERY_MS);
    expect(lines).toEqual(['first x1', 'third x2']);
  });

  it('counts each key on its own', () => {
    note('a');
    note('b');
    note('a');
    expect(lines).toEqual(['a x1', 'b x1']);
  });

  it('forgets keys whose minute is over once many are remembered, never one still counting', () => {
    for (let i = 0; i < 1024; i++) note(`u${i}`);
    note('u0');
    jest.advanceTimersByTime(THROTTLED_LINE_EVERY_MS);
    // u0's held-back occurrence was summarised, not lost
    expect(lines.at(-1)).toBe('u0 x1');
    jest.advanceTimersByTime(THROTTLED_LINE_EVERY_MS);
    // a new key past the bound sweeps the old ones: their next line comes at once anyway
    note('fresh');
    note('u0');
    expect(lines.slice(-2)).toEqual(['fresh x1', 'u0 x1']);
  });
});

describe('CountedWarning', () => {
  it('is one key of ThrottledLines, written as a warning', () => {
    jest.useFakeTimers();
    const warned: string[] = [];
    const warning = new CountedWarning((count) => `dropped ${count}`, {
      warn: (line: string) => warned.push(line),
    });
    for (let i = 0; i < 10; i++) warning.count();
    jest.advanceTimersByTime(THROTTLED_LINE_EVERY_MS);
    expect(warned).toEqual(['dropped 1', 'dropped 9']);
    jest.useRealTimers();
  });
});
