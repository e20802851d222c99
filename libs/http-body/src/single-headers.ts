/**
 * Header names a request may carry at most once. node:http joins repeated lines of most headers
 * with ", " and keeps only the first of others (Authorization, Host), so a second line can slip a
 * value past a check that read the first: both /mcp and the management port refuse such
 * requests (docs/security.md).
 */
export class SingleHeaders {
  private readonly names: ReadonlySet<string>;
  /** Longer raw names are none of `names`: only a prefix can still match them. */
  private readonly longest: number;
  /** Lower-cased name prefixes whose every header arrives at most once (`mcp-param-`). */
  private readonly prefixes: readonly string[];

  /**
   * @param names exact header names, any case
   * @param prefixes name prefixes, any case: each header whose name starts with one is single too
   */
  constructor(names: Iterable<string>, prefixes: Iterable<string> = []) {
    this.names = new Set([...names].map((n) => n.toLowerCase()));
    this.longest = Math.max(0, ...[...this.names].map((n) => n.length));
    this.prefixes = [...prefixes].map((p) => p.toLowerCase());
  }

  /**
   * The first of these names that node:http's `rawHeaders` (name, value, name, value, …) carry
   * more than once, lower-cased, or undefined. Reads the list once.
   */
  repeatedIn(rawHeaders: readonly string[]): string | undefined {
    let seen: string[] | undefined;
    for (let i = 0; i < rawHeaders.length; i += 2) {
      const raw = rawHeaders[i];
      if (raw === undefined) continue;
      const short = raw.length <= this.longest;
      if (!short && !this.prefixed(raw)) continue;
      const name = raw.toLowerCase();
      if (short && !this.names.has(name) && !this.prefixed(raw)) continue;
      if (seen?.includes(name)) return name;
      (seen ??= []).push(name);
    }
    return undefined;
  }

  /** Whether a raw header name starts with one of the prefixes, in any case. */
  private prefixed(raw: string): boolean {
    for (const prefix of this.prefixes)
      if (
        raw.length > prefix.length &&
        // the first character, either case, before a slice is made (most names fail here)
        (raw.charCodeAt(0) | 0x20) === (prefix.charCodeAt(0) | 0x20) &&
        raw.slice(0, prefix.length).toLowerCase() === prefix
      )
        return true;
    return false;
  }
}
