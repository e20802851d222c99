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
    // 200,000 chunks: at most one buffer per 64 KiB (and the first chunk)
    expect(list.kept).toBeLessThanOrEqual(5);
    expect(list.length).toBe(text.length);
    expect(list.bytes().toString()).toBe(text);
  });

  it('keeps large chunks whole and small ones between them in order', () => {
    const list = new ChunkList();
    const parts = ['a', 'b'.repeat(10_000), 'c', 'd', 'e'.repeat(70_000), 'f'];
    for (const part of parts) list.add(Buffer.from(part));
    expect(list.bytes().toString()).toBe(parts.join(''));
    expect(list.length).toBe(parts.join('').length);
  });
});
