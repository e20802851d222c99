/**
 * The readings of a request header's value in which a credential may sit, for the checks that
 * keep the admin credential from sources (docs/security.md "The admin credential"): the value as
 * it came, its percent-decoding, and the base64 (or base64url) decoding of each long run of
 * base64 characters in either. A source receives a forwarded header as it came and may decode
 * it as it likes, so a token wrapped in any of these is the token.
 */
export function credentialViews(value: string): string[] {
  const views = [value];
  if (value.includes('%')) {
    const decoded = percentDecoded(value);
    if (decoded !== value) views.push(decoded);
  }
  for (const view of [...views])
    for (const run of view.match(BASE64_RUN) ?? []) {
      const decoded = Buffer.from(run, 'base64').toString('latin1');
      if (PRINTABLE.test(decoded)) views.push(decoded);
    }
  return views;
}

/**
 * Whether `token` sits in `text` as a token of its own: not inside a longer run of token68
 * characters (RFC 7235 §2.1, "=" excepted, which also separates a pair), so that a short token
 * is not found inside an unrelated word.
 */
export function holdsToken(text: string, token: string): boolean {
  for (let at = text.indexOf(token); at >= 0; at = text.indexOf(token, at + 1)) {
    const before = at === 0 ? '' : text.charAt(at - 1);
    const after = text.charAt(at + token.length);
    if (!TOKEN_CHAR.test(before) && !TOKEN_CHAR.test(after)) return true;
  }
  return false;
}

/** Compact JWS serializations (a JSON header and payload, base64url) anywhere in a text. */
export function jwtsIn(text: string): string[] {
  return text.includes('eyJ') ? (text.match(JWT_ANYWHERE) ?? []) : [];
}

/** Runs of base64/base64url characters long enough to hide a credential (16 encode 12 bytes). */
const BASE64_RUN = /[A-Za-z0-9+/_-]{16,}={0,2}/g;
/** A decoding worth searching: printable ASCII and blanks only (not random bytes). */
const PRINTABLE = /^[\x20-\x7e\t]*$/;
const TOKEN_CHAR = /^[A-Za-z0-9\-._~+/]$/;
const JWT_ANYWHERE = /eyJ[A-Za-z0-9_-]*\.eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*/g;

/** Percent-decoding that leaves a malformed escape as it is instead of failing. */
function percentDecoded(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value.replace(/%([0-9A-Fa-f]{2})/g, (_m, hex: string) =>
      String.fromCharCode(parseInt(hex, 16)),
    );
  }
}
