/** The longest URL a problem text quotes, in characters (the rest is cut with "…"). */
const MAX_SHOWN = 80;

/**
 * A URL-like value as a problem text may quote it (a boot line, a registration's answer, its
 * audit line): its query and fragment cut to `?…`/`#…` and its userinfo to `…@`, whether or not
 * it parses. API keys travel in queries and credentials in userinfo, and none of these texts
 * may carry a secret (docs/operations.md §10 `upstreams[].url`, §15 "Access"). Returned quoted,
 * e.g. `"mcp.example.com/mcp?…"`.
 */
export function shownUrl(value: string): string {
  const cut = value.search(/[?#]/);
  const head = cut < 0 ? value : value.slice(0, cut);
  // the authority ends at the first "/" after the scheme's "//" (or at the first "/" at all)
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(head)?.[0] ?? '';
  const rest = head.slice(scheme.length);
  const slash = rest.indexOf('/');
  const authority = slash < 0 ? rest : rest.slice(0, slash);
  const at = authority.lastIndexOf('@');
  const masked =
    at < 0 ? head : `${scheme}…@${authority.slice(at + 1)}${slash < 0 ? '' : rest.slice(slash)}`;
  const shown = masked.length > MAX_SHOWN ? `${masked.slice(0, MAX_SHOWN - 1)}…` : masked;
  return JSON.stringify(cut < 0 ? shown : `${shown}${value.charAt(cut)}…`);
}
