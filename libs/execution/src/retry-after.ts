/**
 * A Tool Service's Retry-After (RFC 9110 §10.2.3) on a 4xx/5xx answer, typically 429 or 503.
 * The gateway only reports it (text and `_meta`); it never sleeps or retries inside a call.
 */
export interface RetryAfter {
  /**
   * Whole seconds to wait, ≥ 0: the delay as sent, or, for the date form, the time from the
   * gateway's clock to that date rounded up (0 when the date has passed).
   */
  readonly seconds: number;
  /** The date form only: the HTTP-date as sent, written as an IMF-fixdate (`Wed, 21 Oct 2026 07:28:00 GMT`). */
  readonly date?: string;
}

/** The keys a result's `content[0]._meta` gains from a Retry-After (docs/operations.md). */
export interface RetryAfterMeta {
  readonly retryAfterSeconds: number;
  readonly retryAfter?: string;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DELAY_SECONDS = /^\d+$/;
/** IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT` */
const IMF_FIXDATE =
  /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\d{2}) ([A-Za-z]{3}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT$/;
/** obsolete RFC 850: `Sunday, 06-Nov-94 08:49:37 GMT` */
const RFC850_DATE =
  /^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\d{2})-([A-Za-z]{3})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) GMT$/;
/** obsolete asctime: `Sun Nov  6 08:49:37 1994` */
const ASCTIME_DATE =
  /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ([A-Za-z]{3}) ([ \d]\d) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/;

/** Milliseconds since the epoch of a valid calendar time in GMT; undefined for e.g. 31 Feb or 25:00. */
function utc(
  year: number,
  monthName: string,
  day: number,
  hour: number,
  minute: number,
  second: number,
): number | undefined {
  const month = MONTHS.indexOf(monthName.toLowerCase());
  if (month < 0 || hour > 23 || minute > 59 || second > 60) return undefined;
  const ms = Date.UTC(year, month, day, hour, minute, Math.min(second, 59));
  const back = new Date(ms);
  return back.getUTCDate() === day && back.getUTCMonth() === month ? ms : undefined;
}

/** The three HTTP-date forms a recipient must accept (RFC 9110 §5.6.7). */
function parseHttpDate(value: string, nowMs: number): number | undefined {
  let m = IMF_FIXDATE.exec(value);
  if (m !== null) {
    const [, d, mon, y, h, mi, s] = m as unknown as string[];
    return utc(Number(y), mon as string, Number(d), Number(h), Number(mi), Number(s));
  }
  m = RFC850_DATE.exec(value);
  if (m !== null) {
    const [, d, mon, yy, h, mi, s] = m as unknown as string[];
    // a two-digit year more than 50 years ahead is the most recent past year with those digits
    const century = Math.floor(new Date(nowMs).getUTCFullYear() / 100) * 100;
    let year = century + Number(yy);
    if (year > new Date(nowMs).getUTCFullYear() + 50) year -= 100;
    return utc(year, mon as string, Number(d), Number(h), Number(mi), Number(s));
  }
  m = ASCTIME_DATE.exec(value);
  if (m !== null) {
    const [, mon, d, h, mi, s, y] = m as unknown as string[];
    return utc(Number(y), mon as string, Number(d), Number(h), Number(mi), Number(s));
  }
  return undefined;
}

/**
 * Reads a Retry-After value: delay-seconds (`7`) or an HTTP-date. Anything else (`soon`,
 * `-5`, `7.5`, an ISO date, a delay beyond Number.MAX_SAFE_INTEGER) is malformed and ignored:
 * undefined, as if the header were absent.
 *
 * @param nowMs the gateway's clock (ms since the epoch), for the date form
 */
export function parseRetryAfter(value: string | undefined, nowMs: number): RetryAfter | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (DELAY_SECONDS.test(text)) {
    const seconds = Number(text);
    return Number.isSafeInteger(seconds) ? { seconds } : undefined;
  }
  const at = parseHttpDate(text, nowMs);
  if (at === undefined) return undefined;
  return {
    seconds: Math.max(0, Math.ceil((at - nowMs) / 1000)),
    date: new Date(at).toUTCString(),
  };
}

/** For the result text: `retry after 7 s`, or `retry after Wed, 21 Oct 2026 07:28:00 GMT (in 118 s)`. */
export function retryAfterText(retryAfter: RetryAfter): string {
  return retryAfter.date === undefined
    ? `retry after ${retryAfter.seconds} s`
    : `retry after ${retryAfter.date} (in ${retryAfter.seconds} s)`;
}

/** For `content[0]._meta`: `retryAfterSeconds`, and `retryAfter` (the date) for the date form. */
export function retryAfterMeta(retryAfter: RetryAfter): RetryAfterMeta {
  return retryAfter.date === undefined
    ? { retryAfterSeconds: retryAfter.seconds }
    : { retryAfterSeconds: retryAfter.seconds, retryAfter: retryAfter.date };
}
