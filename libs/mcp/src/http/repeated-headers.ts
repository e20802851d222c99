import { FORWARDED_CALLER_HEADERS } from '@app/execution';
import { SingleHeaders } from '@app/http-body';

/**
 * Headers that must arrive at most once: the five caller headers of contract §10, which reach
 * the Tool Service as they are (node:http would join two `employee-no` lines into
 * "E12345, ADMIN"), Authorization (node:http keeps the first and drops the rest silently), and Host.
 */
const SINGLE_HEADERS = new SingleHeaders([
  ...FORWARDED_CALLER_HEADERS,
  'authorization',
  // RFC 9112 §3.2: a request with more than one Host is answered 400; node:http keeps the
  // first, so a second one could slip past the Host check
  'host',
]);

/** The first single-valued header that a request carries more than once, lower-cased, or undefined. */
export function repeatedSingleHeader(rawHeaders: readonly string[]): string | undefined {
  return SINGLE_HEADERS.repeatedIn(rawHeaders);
}
