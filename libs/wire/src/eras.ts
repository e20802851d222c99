/**
 * The MCP protocol revisions the gateway knows, in its two eras (docs/operations.md §11; wire
 * notes §1.1 and §1.3 in ../shared/reference). The front door serves these lists; the client
 * side toward upstreams asks for and accepts them.
 */

/** Versions the gateway speaks in the 2025 (session) era; the first is the latest. */
export const LEGACY_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;

/** The latest 2025-era revision: what the gateway asks an upstream for at initialize. */
export const LATEST_LEGACY_VERSION = LEGACY_PROTOCOL_VERSIONS[0];

/**
 * Revisions an upstream may answer initialize with that the gateway goes on with: the ones it
 * serves and one older (a 2024-11-05 server answers tools the same way).
 */
export const ACCEPTED_UPSTREAM_LEGACY_VERSIONS: ReadonlySet<string> = new Set([
  ...LEGACY_PROTOCOL_VERSIONS,
  '2024-11-05',
]);

/** What a 2025 request without MCP-Protocol-Version is taken to speak (the 2025-11-25 transport rule). */
export const DEFAULT_UNSTATED_VERSION = '2025-03-26';

/** The stateless revisions the gateway serves and speaks, newest first. */
export const MODERN_PROTOCOL_VERSIONS = ['2026-07-28'] as const;

/** The first stateless revision: every dated version from it on is of the modern era. */
export const FIRST_MODERN_VERSION = MODERN_PROTOCOL_VERSIONS[0];

const DATED_VERSION = /^\d{4}-\d{2}-\d{2}$/;

/**
 * Whether a protocol version belongs to the stateless era: a date from 2026-07-28 on (a later
 * revision than the gateway serves is still modern, and gets the modern "unsupported version"
 * answer). Anything that is not a date is not modern.
 */
export function isModernVersion(version: string): boolean {
  // asked several times a request: the versions the gateway serves are answered without the
  // regular expression
  if (version === FIRST_MODERN_VERSION) return true;
  if (version === LATEST_LEGACY_VERSION) return false;
  return DATED_VERSION.test(version) && version >= FIRST_MODERN_VERSION;
}
