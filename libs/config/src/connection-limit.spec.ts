import { defaultMaxConnections, openFileLimit } from './connection-limit';

const limits = (soft: string, hard: string): string =>
  `Limit                     Soft Limit           Hard Limit           Units\nMax cpu time              unlimited            unlimited            seconds\nMax open files            ${soft}                ${hard}                files\n`;

describe('the default /mcp connection limit (docs/operations.md §1, http.maxConnections)', () => {
  it('reads the soft open-file limit', () => {
    expect(openFileLimit(() => limits('20000', '20000'))).toBe(20_000);
    expect(openFileLimit(() => limits('1024', '1048576'))).toBe(1024);
  });

  it('is unknown when unlimited or unreadable', () => {
    expect(openFileLimit(() => limits('unlimited', 'unlimited'))).toBeUndefined();
    expect(
      openFileLimit(() => {
        throw new Error('ENOENT');
      }),
    ).toBeUndefined();
  });

  it('keeps descriptors for everything else: half of what is left after 512, within 64..100000', () => {
    expect(defaultMaxConnections(20_000)).toBe(9744);
    expect(defaultMaxConnections(1024)).toBe(256);
    expect(defaultMaxConnections(256)).toBe(64);
    expect(defaultMaxConnections(10_000_000)).toBe(100_000);
    expect(defaultMaxConnections(undefined)).toBe(10_000);
  });
});
