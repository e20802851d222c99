import { LISTEN_LINE_EVERY_MS, ListenEndLines } from './listen-end-lines';

describe('ListenEndLines', () => {
  let now = 0;
  let lines: string[];
  let ends: ListenEndLines;
  const note = (id: string): void => ends.note(id, (count) => `${id} x${count}`);

  beforeEach(() => {
    now = 0;
    lines = [];
    ends = new ListenEndLines(
      (line) => lines.push(line),
      () => now,
    );
  });

  it('writes the first at once, then at most one a minute per upstream, counting the rest', () => {
    for (let i = 0; i < 100; i++) note('a');
    expect(lines).toEqual(['a x1']);
    now = LISTEN_LINE_EVERY_MS - 1;
    note('a');
    expect(lines).toEqual(['a x1']);
    now = LISTEN_LINE_EVERY_MS;
    note('a');
    // the 99 after the first, the one just before the minute, and this one
    expect(lines).toEqual(['a x1', 'a x101']);
  });

  it('counts each upstream on its own', () => {
    note('a');
    note('b');
    note('a');
    expect(lines).toEqual(['a x1', 'b x1']);
  });

  it('forgets upstreams whose minute is over once many are remembered, never one still counting', () => {
    for (let i = 0; i < 1024; i++) note(`u${i}`);
    note('u0');
    now = LISTEN_LINE_EVERY_MS;
    // a new upstream past the bound sweeps the old ones: u0's pending count goes with it
    note('fresh');
    note('u0');
    expect(lines.slice(-2)).toEqual(['fresh x1', 'u0 x1']);
  });
});
