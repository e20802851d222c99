import { acceptsEventStream, negotiateFormat } from './http-answer';

describe('negotiateFormat', () => {
  const cases: [string | undefined, 'json' | 'sse' | undefined][] = [
    [undefined, 'json'],
    ['', 'json'],
    ['   ', 'json'],
    ['application/json, text/event-stream', 'json'],
    ['text/event-stream, application/json', 'json'],
    ['APPLICATION/JSON;q=0.9', 'json'],
    ['*/*', 'json'],
    ['application/*', 'json'],
    ['text/event-stream', 'sse'],
    ['text/*', 'sse'],
    [' Text/Event-Stream ; q=1', 'sse'],
    ['text/html', undefined],
    ['image/png, text/plain', undefined],
    [',,;', undefined],
  ];

  it.each(cases)('%j → %s', (accept, format) => {
    expect(negotiateFormat(accept)).toBe(format);
    // the remembered answer is the same answer
    expect(negotiateFormat(accept)).toBe(format);
  });

  it('answers right for a client that sends a new Accept on every request (more than it remembers)', () => {
    for (let i = 0; i < 500; i++) {
      expect(negotiateFormat(`text/event-stream;v=${i}`)).toBe('sse');
      expect(negotiateFormat(`text/plain;v=${i}`)).toBeUndefined();
      expect(negotiateFormat(`application/json;v=${i}`)).toBe('json');
    }
    expect(negotiateFormat('text/html')).toBeUndefined();
    expect(negotiateFormat('application/json, text/event-stream')).toBe('json');
  });
});

describe('acceptsEventStream', () => {
  const cases: [string | undefined, boolean][] = [
    [undefined, false],
    ['', false],
    ['application/json', false],
    ['application/json, text/event-stream', true],
    ['TEXT/EVENT-STREAM;q=0.5', true],
    ['text/*', false],
    ['*/*', false],
  ];
  it.each(cases)('%j → %s', (accept, yes) => {
    expect(acceptsEventStream(accept)).toBe(yes);
    expect(acceptsEventStream(accept)).toBe(yes);
    // one reading serves both questions
    negotiateFormat(accept);
    expect(acceptsEventStream(accept)).toBe(yes);
  });
});
