/** What replaces a masked part of a Tool Service's error text. */
export const MASK = '[hidden]';

/**
 * Patterns of what must never reach an agent from a Tool Service's error body
 * (docs/operations.md §1, `bundles[].serverErrorBody`; DESIGN "Never put URLs … into an error sent
 * to a client"), most specific first.
 */
const PATTERNS: readonly RegExp[] = [
  // PEM blocks (private keys, certificates), to their end or the end of the text
  /-----BEGIN [A-Z0-9 ]+-----[\s\S]*?(?:-----END [A-Z0-9 ]+-----|$)/g,
  // key=value / key: value credentials, any key that names one (password=…, "accessToken":"…",
  // AWS_SECRET_ACCESS_KEY=…, \"password\":\"…\" inside a JSON string); the key stays
  /\b([\w.-]*?(?:pass(?:word|wd)?|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?|authorization|auth|session(?:id)?|cookie)[\w.-]*(?:\\?["'])?\s*[:=]\s*)(\\"(?:[^"\\]|\\[^"])*?\\"|"[^"]*"|'[^']*'|(?:bearer|basic)\s+[^\s"',;]+|[^\s,;&)}\]"'\\]+)/gi,
  // "password hunter2": a password word followed by its value
  /\b((?:pass(?:word|wd)?|pwd)\s+)(?![:=])([^\s,;"']+)/gi,
  // bare Authorization values, whatever the case of "bearer"
  /\bbearer\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  /\bBasic\s+[A-Za-z0-9+/=]{8,}/g,
  // JSON Web Tokens
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g,
  // well-known API key shapes (OpenAI/Stripe sk-/pk-/rk-, GitHub, Slack, AWS, Google)
  /\b(?:sk|pk|rk)-(?:[A-Za-z0-9]+-)?[A-Za-z0-9_-]{16,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g,
  /\bAIza[0-9A-Za-z_-]{35}/g,
  // long opaque strings (40+ characters of a token alphabet, with letters and digits)
  /\b(?=[A-Za-z0-9+/_=-]*\d)(?=[A-Za-z0-9+/_=-]*[A-Za-z])[A-Za-z0-9+/_=-]{40,}/g,
  // URLs of any scheme (jdbc:postgresql://…, http://…, redis://…)
  /\b[a-z][a-z0-9+.-]*:(?:[a-z0-9+.-]+:)*\/\/[^\s"'<>)]+/gi,
  // e-mail addresses and user@host
  /\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b/g,
  // IPv4, with an optional port
  /\b(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?\b/g,
  // IPv6: eight groups, or a "::" abbreviation (never a time such as 12:30:45), with a zone id
  /\[?\b(?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4}\b(?:%[\w.-]+)?\]?(?::\d{1,5})?/gi,
  /\[?(?:\b[0-9a-f]{1,4}:)*[0-9a-f]{0,4}::(?:[0-9a-f]{1,4}\b:?)*(?:%[\w.-]+)?\]?(?::\d{1,5})?/gi,
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
    out = out.replace(pattern, (match: string, key?: unknown, value?: unknown) => {
      if (typeof key !== 'string' || typeof value !== 'string') return MASK;
      // a credential keeps its key, and the quotes around its value (JSON stays JSON)
      const quote = /^(\\?["'])/.exec(value)?.[1] ?? '';
      return `${key}${quote}${MASK}${quote}`;
    });
  }
  return out;
}
