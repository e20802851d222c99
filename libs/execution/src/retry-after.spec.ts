import { parseRetryAfter, retryAfterMeta, retryAfterText } from './retry-after';

const NOW = Date.UTC(2026, 10, 30, 12, 0, 0); // Mon, 30 Nov 2026 12:00:00 GMT

describe('parseRetryAfter (RFC 9110 §10.2.3): delay-seconds or an HTTP-date', () => {
  it('reads `7` as 7 seconds', () => {
    expect(parseRetryAfter('7', NOW)).toEqual({ seconds: 7 });
    expect(parseRetryAfter('0', NOW)).toEqual({ seconds: 0 });
    expect(parseRetryAfter(' 120 ', NOW)).toEqual({ seconds: 120 });
  });

  it('reads an IMF-fixdate as that date and the seconds from now, rounded up', () => {
    expect(parseRetryAfter('Mon, 30 Nov 2026 12:02:00 GMT', NOW)).toEqual({
      seconds: 120,
      date: 'Mon, 30 Nov 2026 12:02:00 GMT',
    });
    expect(parseRetryAfter('Mon, 30 Nov 2026 12:00:00 GMT', NOW - 1)).toEqual({
      seconds: 1,
      date: 'Mon, 30 Nov 2026 12:00:00 GMT',
    });
  });

  it('gives 0 seconds for a date already past', () => {
    expect(parseRetryAfter('Sun, 29 Nov 2026 12:00:00 GMT', NOW)).toEqual({
      seconds: 0,
      date: 'Sun, 29 Nov 2026 12:00:00 GMT',
    });
  });

  it('reads the obsolete RFC 850 and asctime forms, written back as IMF-fixdate', () => {
    expect(parseRetryAfter('Monday, 30-Nov-26 12:00:30 GMT', NOW)).toEqual({
      seconds: 30,
      date: 'Mon, 30 Nov 2026 12:00:30 GMT',
    });
    expect(parseRetryAfter('Mon Nov 30 12:01:00 2026', NOW)).toEqual({
      seconds: 60,
      date: 'Mon, 30 Nov 2026 12:01:00 GMT',
    });
    expect(parseRetryAfter('Sun Nov  6 08:49:37 1994', NOW)?.date).toBe(
      'Sun, 06 Nov 1994 08:49:37 GMT',
    );
  });

  it('reads an RFC 850 two-digit year more than 50 years ahead as the past century', () => {
    expect(parseRetryAfter('Sunday, 06-Nov-94 08:49:37 GMT', NOW)?.date).toBe(
      'Sun, 06 Nov 1994 08:49:37 GMT',
    );
  });

  it.each([
    'soon',
    '-5',
    '7.5',
    '1e3',
    '7 s',
    '',
    '2026-11-30T12:02:00Z',
    'Mon, 31 Feb 2026 12:00:00 GMT',
    'Mon, 30 Nov 2026 25:00:00 GMT',
    'Mon, 30 Foo 2026 12:00:00 GMT',
    'Mon, 30 Nov 2026 12:00:00 UTC',
    '99999999999999999999',
  ])('ignores the malformed value %p', (value) => {
    expect(parseRetryAfter(value, NOW)).toBeUndefined();
  });

  it('gives nothing when the header is absent', () => {
    expect(parseRetryAfter(undefined, NOW)).toBeUndefined();
  });
});

describe('how a Retry-After is reported', () => {
  it('as text: "retry after 7 s", or the date and the seconds', () => {
    expect(retryAfterText({ seconds: 7 })).toBe('retry after 7 s');
    expect(retryAfterText({ seconds: 120, date: 'Mon, 30 Nov 2026 12:02:00 GMT' })).toBe(
      'retry after Mon, 30 Nov 2026 12:02:00 GMT (in 120 s)',
    );
  });

  it('in _meta: retryAfterSeconds, and retryAfter for the date form only', () => {
    expect(retryAfterMeta({ seconds: 7 })).toEqual({ retryAfterSeconds: 7 });
    expect(retryAfterMeta({ seconds: 120, date: 'Mon, 30 Nov 2026 12:02:00 GMT' })).toEqual({
      retryAfterSeconds: 120,
      retryAfter: 'Mon, 30 Nov 2026 12:02:00 GMT',
    });
  });
});
