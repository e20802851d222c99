/** What replaces a masked part of a Tool Service's error text. */
export const MASK = '[hidden]';

/**
 * Patterns of what must never reach an agent from a Tool Service's error body (issue 9,
 * fault 9; DESIGN "Never put URLs … into an error sent to a client"), most specific first.
 */
const PATTERNS: readonly RegExp[] = [
  // key=value / key: value credentials (password=…, api_key: …, "token":"…")
  /\b((?:pass(?:word|wd)?|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|client[_-]?secret|credentials?|auth(?:orization)?|session(?:id)?|cookie)["']?\s*[:=]\s*)(?:"[^"]*"|'[^']*'|(?:Bearer|Basic)\s+\S+|[^\s,;&)}\]]+)/gi,
  // bare Authorization schemes
  /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/g,
  // JSON Web Tokens
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g,
  // URLs of any scheme (jdbc:postgresql://…, http://…, redis://…)
  /\b[a-z][a-z0-9+.-]*:(?:[a-z0-9+.-]+:)*\/\/[^\s"'<>)]+/gi,
  // e-mail addresses and user@host
  /\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b/g,
  // IPv4, with an optional port
  /\b(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?\b/g,
  // IPv6: eight groups, or a "::" abbreviation (never a time such as 12:30:45)
  /\[?\b(?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4}\b\]?(?::\d{1,5})?/gi,
  /\[?(?:\b[0-9a-f]{1,4}:)*[0-9a-f]{0,4}::(?:[0-9a-f]{1,4}\b:?)*\]?(?::\d{1,5})?/gi,
  // host:port (the host starts with a letter)
  /\b[a-z](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*:\d{2,5}\b/gi,
  // internal host names by suffix
  /\b(?:[a-z0-9-]+\.)+(?:local|internal|intranet|intra|corp|lan|svc|cluster\.local)\b/gi,
];

/**
 * Masks whatever in a Tool Service's error text looks like an address (URL, IP, host:port,
 * internal host name, e-mail) or a credential (key=value secrets, Bearer/Basic values, JWTs).
 * Plain words, numbers and field names stay, so a 4xx text still explains the bad input.
 * @param text one line of error text
 * @returns the text with each match replaced by `[hidden]` (a credential keeps its key)
 */
export function redactErrorText(text: string): string {
  let out = text;
  for (const pattern of PATTERNS) {
    out = out.replace(pattern, (match: string, key?: string) =>
      typeof key === 'string' && match.startsWith(key) ? `${key}${MASK}` : MASK,
    );
  }
  return out;
}
