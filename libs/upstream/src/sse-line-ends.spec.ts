import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { SseLineEnds } from './sse-line-ends';

/** The events and comments a parser reads from these chunks, line ends normalized first. */
function parsed(chunks: readonly string[]): string[] {
  const out: string[] = [];
  const lineEnds = new SseLineEnds();
  const parser = createParser({
    onEvent: (e: EventSourceMessage) => out.push(`${e.event ?? ''}|${e.id ?? ''}|${e.data}`),
    onComment: (c) => out.push(`:${c}`),
  });
  for (const chunk of chunks) parser.feed(lineEnds.normalize(chunk));
  return out;
}

describe('SseLineEnds', () => {
  it('makes CRLF and a lone CR an LF, and leaves LF alone', () => {
    const l = new SseLineEnds();
    expect(l.normalize('a\r\nb\rc\nd')).toBe('a\nb\nc\nd');
    expect(l.normalize('no line end')).toBe('no line end');
  });

  it('a CR at the end of a chunk ends its line; the LF of that CRLF in the next chunk is dropped once', () => {
    const l = new SseLineEnds();
    expect(l.normalize('data: x\r')).toBe('data: x\n');
    expect(l.normalize('\n\n')).toBe('\n');
    expect(l.normalize('\n')).toBe('\n');
    // an empty chunk (a split UTF-8 character) does not forget the CR
    expect(l.normalize('y\r')).toBe('y\n');
    expect(l.normalize('')).toBe('');
    expect(l.normalize('\nz')).toBe('z');
  });

  it('the parser reads the same events from every spelling of the line ends, however split', () => {
    const lf = 'event: e\nid: 1\ndata: a\ndata: b\n\n: ping\ndata: c\n\n';
    const expected = ['e|1|a\nb', ':ping', '||c'];
    for (const end of ['\n', '\r\n', '\r']) {
      const text = lf.replace(/\n/g, end);
      expect(parsed([text])).toEqual(expected);
      // every split point, the CRLF pairs included
      for (let i = 1; i < text.length; i++)
        expect(parsed([text.slice(0, i), text.slice(i)])).toEqual(expected);
    }
  });

  it('a lone CR at the end of the stream still ends the last line, with no event dispatched for it', () => {
    expect(parsed(['data: a\r\r', 'data: unfinished\r'])).toEqual([
      '|undefined|a'.replace('undefined', ''),
    ]);
  });

  it('no CR reaches the parser: a chunk of blank lines ending in one CR is read in one pass', () => {
    const l = new SseLineEnds();
    const chunk = `${'\n'.repeat(131_071)}\r`;
    const out = l.normalize(chunk);
    expect(out.includes('\r')).toBe(false);
    expect(out.length).toBe(131_072);
  });
});
