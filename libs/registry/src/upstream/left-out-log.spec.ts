import { leftOutLogLines } from './left-out-log';
import type { LeftOutItem } from './upstream-contribution';

const invalid = (list: LeftOutItem['list'], n: number): LeftOutItem[] =>
  Array.from({ length: n }, () => ({ list, name: '', reason: 'uri must be a non-empty string' }));

describe('leftOutLogLines: a pull logs a few left-out entries per list, then one count line', () => {
  it('100,000 invalid resources and 100,000 invalid prompts make 12 lines: 5 named and one count per list', () => {
    const lines = leftOutLogLines('Upstream u: ', [
      ...invalid('resources', 100_000),
      ...invalid('prompts', 100_000),
    ]);
    expect(lines).toHaveLength(12);
    expect(lines.filter((l) => l.startsWith('Upstream u: resources entry ""'))).toHaveLength(5);
    expect(lines.filter((l) => l.startsWith('Upstream u: prompts entry ""'))).toHaveLength(5);
    expect(lines).toContain(
      'Upstream u: 99995 more resources entries left out (100000 in all; the first 5 are logged)',
    );
    expect(lines).toContain(
      'Upstream u: 99995 more prompts entries left out (100000 in all; the first 5 are logged)',
    );
  });

  it('a list with at most 5 left out gets every entry named and no count line', () => {
    const lines = leftOutLogLines('Upstream u: live ', [
      ...invalid('tools', 5),
      ...invalid('resourceTemplates', 1),
    ]);
    expect(lines).toHaveLength(6);
    expect(lines.every((l) => l.includes(' entry "" left out: '))).toBe(true);
  });
});
