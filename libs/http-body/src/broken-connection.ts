/**
 * Network error codes of a connection that was open and then broke before its answer was
 * complete (a reset, a close, undici's socket errors): the request may have reached the server
 * and run there, so neither the Tool Service client nor the upstream client may call it "not
 * reached, try again" — a second run of a tool that changes data would follow.
 */
export const BROKEN_CONNECTION_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);
