/**
 * The two credentials the console holds, kept apart (docs/console.md "Access",
 * docs/security.md "The management port and the operator console"): the **admin token** goes only
 * to /admin on this page's own origin; the **caller token** only to /mcp, for "Run". An upstream
 * with `authorization: passthrough` receives what "Run" sends, so the admin token must never be
 * among it. Each lives in this tab's sessionStorage under its own key, never in a cookie or the
 * URL.
 */
export class StoredToken {
  private value: string;

  constructor(private readonly key: string) {
    this.value = sessionStorage.getItem(key) ?? '';
  }

  get(): string {
    return this.value;
  }

  /** Keeps `value` (trimmed) for this tab; '' forgets it. */
  set(value: string): void {
    this.value = value.trim();
    if (this.value === '') sessionStorage.removeItem(this.key);
    else sessionStorage.setItem(this.key, this.value);
  }
}

/** The admin token (MCP_ADMIN_TOKEN, or a JWT with mcp.admin.scope): /admin only. */
export const adminToken = new StoredToken('mcp-gateway-console.token');
/** The token "Run" sends to /mcp as the caller's; none: Run sends no Authorization. */
export const callerToken = new StoredToken('mcp-gateway-console.caller-token');

/** Why `candidate` may not be kept in one slot while `other` holds it: the two stay apart. */
export const SAME_AS_ADMIN =
  'That is the admin token: it authorizes /admin only and is never sent to /mcp. Enter a token for the caller "Run" acts as.';
export const SAME_AS_CALLER =
  'That is the caller token of "Run": the admin token must be another credential, kept for /admin only.';
