import { ChunkList } from './chunk-list';

describe('ChunkList (a body joined from its chunks, docs/operations.md §2 answer caps)', () => {
  it('keeps a body of one chunk as it came', () => {
    const list = new ChunkList();
    const only = Buffer.from('{"ok":true}');
    list.add(only);
    expect(list.bytes()).toBe(only);
  });

  it('joins a body sent one byte per chunk in order, keeping a few buffers, not one per byte', () => {
    const list = new ChunkList();
    const text = 'abcdefghij'.repeat(20_000);
    for (const byte of Buffer.from(text)) list.add(Buffer.from([byte]));
    // 200,000 chunks: the first, staging buffers of 4, 8, 16, 32 KiB, then one per 64 KiB
    expect(list.kept).toBeLessThanOrEqual(8);
    expect(list.length).toBe(text.length);
    expect(list.bytes().toString()).toBe(text);
  });

  it('copies a few small chunks into one small buffer, not a 64 KiB one', () => {
    const list = new ChunkList();
    const parts = ['HTTP', '{"ok":', 'true}'].map((part) => Buffer.from(part));
    const allocate = jest.spyOn(Buffer, 'allocUnsafe');
    try {
      for (const part of parts) list.add(part);
      expect(allocate.mock.calls).toEqual([[4096]]);
    } finally {
      allocate.mockRestore();
    }
    expect(list.kept).toBe(2);
    expect(list.bytes().toString()).toBe('HTTP{"ok":true}');
  });

  it('keeps large chunks whole and small ones between them in order', () => {
    const list = new ChunkList();
    const parts = ['a', 'b'.repeat(10_000), 'c', 'd', 'e'.repeat(70_000), 'f'];
    for (const part of parts) list.add(Buffer.from(part));
    expect(list.bytes().toString()).toBe(parts.join(''));
    expect(list.length).toBe(parts.join('').length);
  });
});
