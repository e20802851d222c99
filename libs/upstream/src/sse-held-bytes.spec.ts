import { SseHeldBytes } from './sse-held-bytes';

describe('SseHeldBytes: small chunks of an unfinished SSE line are fed together', () => {
  const feeder = (): { fed: string[]; feed: (bytes: Buffer) => void } => {
    const fed: string[] = [];
    return { fed, feed: (bytes) => fed.push(bytes.toString('latin1')) };
  };

  it('holds one-byte chunks until a line end, then feeds them in order before it', () => {
    const held = new SseHeldBytes();
    const { fed, feed } = feeder();
    for (const c of 'data: {"a":1}') held.push(Buffer.from(c), feed);
    expect(fed).toEqual([]);
    held.push(Buffer.from('\n\n'), feed);
    expect(fed).toEqual(['data: {"a":1}', '\n\n']);
  });

  it('feeds a line end at once, a CR as well, and large chunks as they come', () => {
    const held = new SseHeldBytes();
    const { fed, feed } = feeder();
    held.push(Buffer.from('data: x\r'), feed);
    const large = 'y'.repeat(5000);
    held.push(Buffer.from(large), feed);
    expect(fed).toEqual(['data: x\r', large]);
  });

  it('feeds what it holds at 64 KiB, and on flush', () => {
    const held = new SseHeldBytes();
    const { fed, feed } = feeder();
    const piece = Buffer.alloc(1000, 0x61);
    for (let i = 0; i < 70; i++) held.push(piece, feed);
    expect(fed.map((f) => f.length)).toEqual([65_000]);
    held.flush(feed);
    expect(fed.map((f) => f.length)).toEqual([65_000, 5_000]);
    held.flush(feed);
    expect(fed).toHaveLength(2);
  });
});
