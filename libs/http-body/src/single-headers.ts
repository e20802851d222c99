/**
 * Header names a request may carry at most once. node:http joins repeated lines of most headers
 * with ", " and keeps only the first of others (Authorization, Host), so a second line can slip a
 * value past a check that read the first: both /mcp and the management port refuse such
 * requests (docs/security.md).
 */
export class SingleHeaders {
  private readonly names: ReadonlySet<string>;
  /** Longer raw names are none of these: skipped before lower-casing. */
  private readonly longest: number;

  constructor(names: Iterable<string>) {
    this.names = new Set([...names].map((n) => n.toLowerCase()));
    this.longest = Math.max(0, ...[...this.names].map((n) => n.length));
  }

  /**
   * The first of these names that node:http's `rawHeaders` (name, value, name, value, …) carry
   * more than once, lower-cased, or undefined. Reads the list once.
   */
  repeatedIn(rawHeaders: readonly string[]): string | undefined {
    let seen: string[] | undefined;
    for (let i = 0; i < rawHeaders.length; i += 2) {
      const raw = rawHeaders[i];
      if (raw === undefined || raw.length > this.longest) continue;
      const name = raw.toLowerCase();
      if (!this.names.has(name)) continue;
      if (seen?.includes(name)) return name;
      (seen ??= []).push(name);
    }
    return undefined;
  }
}
