import { FORWARDED_CALLER_HEADERS } from '@app/execution';
import { SingleHeaders } from '@app/http-body';

/**
 * Headers that must arrive at most once whatever the configuration: the five caller headers of
 * contract §10, which reach the Tool Service as they are (node:http would join two
 * `employee-no` lines into "E12345, ADMIN"), Authorization (node:http keeps the first and drops
 * the rest silently), and Host.
 */
const FIXED_SINGLE_HEADERS: readonly string[] = [
  ...FORWARDED_CALLER_HEADERS,
  'authorization',
  // RFC 9112 §3.2: a request with more than one Host is answered 400; node:http keeps the
  // first, so a second one could slip past the Host check
  'host',
];

/**
 * A 2026 upstream gets the caller's own `Mcp-Param-*` headers as sent (handlers/header-params.ts,
 * paramHeadersFor), so each of those arrives at most once too.
 */
const FORWARDED_PREFIXES: readonly string[] = ['mcp-param-'];

const NONE: ReadonlySet<string> = new Set();

/**
 * The caller headers a request to /mcp may carry at most once (docs/operations.md §2 "Request
 * limits on /mcp"): the fixed ones above, `Mcp-Param-*`, and every header a source forwards as
 * it came (an upstream's `forwardHeaders`, configured or registered), since node:http would hand
 * the source two lines joined into one value ("acme, globex"). `forwarded` returns the
 * forwarded names, the same set object until they change: the checker is rebuilt only then, so
 * a request costs one comparison and the scan of its header names.
 */
export class RepeatedHeaders {
  private names?: ReadonlySet<string>;
  private single = new SingleHeaders(FIXED_SINGLE_HEADERS, FORWARDED_PREFIXES);

  constructor(private readonly forwarded: () => ReadonlySet<string> = () => NONE) {}

  /** The first single-valued header that a request carries more than once, lower-cased, or undefined. */
  repeatedIn(rawHeaders: readonly string[]): string | undefined {
    const names = this.forwarded();
    if (names !== this.names) {
      this.single = new SingleHeaders([...FIXED_SINGLE_HEADERS, ...names], FORWARDED_PREFIXES);
      this.names = names;
    }
    return this.single.repeatedIn(rawHeaders);
  }
}
