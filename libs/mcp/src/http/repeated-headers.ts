import { FORWARDED_CALLER_HEADERS } from '@app/execution';

/**
 * Headers that must arrive at most once: the five caller headers of contract §10, which reach
 * the Tool Service as they are (node:http would join two `employee-no` lines into
 * "E12345, ADMIN"), Authorization (node:http keeps the first and drops the rest silently), and Host.
 */
const SINGLE_HEADERS: ReadonlySet<string> = new Set([
  ...FORWARDED_CALLER_HEADERS,
  'authorization',
  // RFC 9112 §3.2: a request with more than one Host is answered 400; node:http keeps the
  // first, so a second one could slip past the Host check
  'host',
]);
const LONGEST = Math.max(...[...SINGLE_HEADERS].map((h) => h.length));

/**
 * The first single-valued header that a request carries more than once, lower-cased, or
 * undefined. Reads node:http's `rawHeaders` (name, value, name, value, …) once.
 */
export function repeatedSingleHeader(rawHeaders: readonly string[]): string | undefined {
  let seen: string[] | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const raw = rawHeaders[i];
    if (raw === undefined || raw.length > LONGEST) continue;
    const name = raw.toLowerCase();
    if (!SINGLE_HEADERS.has(name)) continue;
    if (seen?.includes(name)) return name;
    (seen ??= []).push(name);
  }
  return undefined;
}
