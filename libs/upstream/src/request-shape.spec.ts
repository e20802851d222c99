import { MAX_RESUMABLE_EVENT_ID, resumableEventId, resumeHeaders } from './request-shape';

describe('resumableEventId: an SSE event id a stream can be resumed from', () => {
  it('keeps an id that can go back as a Last-Event-ID header (tab, visible ASCII, Latin-1)', () => {
    for (const id of ['e1', '0', '', 'a b\tc', 'caf\u00e9', 'x'.repeat(MAX_RESUMABLE_EVENT_ID)])
      expect(resumableEventId(id)).toBe(id);
  });

  it('drops one that cannot: a control character, beyond Latin-1, or too long', () => {
    for (const id of [
      'a\u0001b',
      'a\rb',
      'a\u007fb',
      '\u{1F600}',
      'x'.repeat(MAX_RESUMABLE_EVENT_ID + 1),
    ])
      expect(resumableEventId(id)).toBeUndefined();
  });
});

describe('resumeHeaders', () => {
  it("are the request's own for a stream, with the event id", () => {
    expect(
      resumeHeaders(
        { 'content-type': 'application/json', 'mcp-method': 'tools/call', 'mcp-name': 't', a: '1' },
        'e7',
      ),
    ).toEqual({ a: '1', accept: 'text/event-stream', 'last-event-id': 'e7' });
  });
});
