import { BodyDecodeError, BodyTooLargeError } from '@app/http-body';
import type { PullErrorType } from '@app/registry';
import { ManifestConnectTimeoutError } from './manifest-agents';

/** A pull that produced no manifest bytes: the type shown in status, and a detail for the log. */
export interface PullFailure {
  readonly ok: false;
  readonly errorType: PullErrorType;
  /** For the log only (contract §9): a status, errno or encoding name, never a URL or body. */
  readonly detail: string;
}

const NETWORK_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
]);

/**
 * A connection that never became an HTTP exchange with the Tool Service: TLS refused (an
 * untrusted or expired certificate, a protocol mismatch) or a peer that does not speak HTTP
 * (Node's parser codes, HPE_*). A reachability or configuration fault of that bundle, shown as
 * ManifestConnectError with the code as its detail, never as a gateway bug.
 */
const NO_HTTP_CODE =
  /^(?:ERR_TLS_|ERR_SSL_|HPE_|CERT_|UNABLE_TO_)|^(?:EPROTO|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN)$/;

/** Timeouts as axios and node report them (axios: ETIMEDOUT with clarifyTimeoutError). */
const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'ECONNABORTED']);

function nameOf(err: unknown): string | undefined {
  const name = (err as { name?: unknown } | null)?.name;
  return typeof name === 'string' ? name : undefined;
}

function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** The error itself, then what it wraps (axios keeps node's error as `cause`). */
function chainOf(err: unknown): unknown[] {
  const cause = (err as { cause?: unknown } | null)?.cause;
  return cause === undefined ? [err] : [err, cause];
}

/**
 * Maps a thrown pull error to a failure value; never lets the error escape (contract §6).
 * The type names are the ones /actuator/toolBundles shows (contract §9), unchanged from the
 * undici puller this replaced.
 *
 * @param deadlineHit whether the pull's overall deadline (connect + read ms) fired
 */
export function classifyPullError(
  err: unknown,
  readTimeoutMillis: number,
  deadlineHit = false,
): PullFailure {
  const chain = chainOf(err);
  if (chain.some((e) => e instanceof BodyTooLargeError)) {
    const tooLarge = chain.find((e) => e instanceof BodyTooLargeError) as BodyTooLargeError;
    return {
      ok: false,
      errorType: 'ManifestTooLargeError',
      detail: `more than maxManifestBytes ${tooLarge.maxBytes} bytes ${tooLarge.stage}`,
    };
  }
  const undecodable = chain.find((e) => e instanceof BodyDecodeError);
  if (undecodable !== undefined) {
    // contract §6: a body that cannot be read as the JSON it should be
    return { ok: false, errorType: 'ManifestNotJsonError', detail: undecodable.reason };
  }
  if (chain.some((e) => e instanceof ManifestConnectTimeoutError)) {
    return { ok: false, errorType: 'ManifestTimeoutError', detail: 'connect timeout' };
  }
  const codes = chain.map(codeOf);
  if (
    deadlineHit ||
    codes.some((c) => c !== undefined && TIMEOUT_CODES.has(c)) ||
    chain.some((e) => nameOf(e) === 'TimeoutError' || nameOf(e) === 'AbortError')
  ) {
    return {
      ok: false,
      errorType: 'ManifestTimeoutError',
      detail: `no complete answer within ${readTimeoutMillis} ms`,
    };
  }
  if (codes.includes('HPE_HEADER_OVERFLOW')) {
    return {
      ok: false,
      errorType: 'ManifestTooLargeError',
      detail: 'the response headers are too large',
    };
  }
  const network = codes.find(
    (c) => c !== undefined && (NETWORK_ERROR_CODES.has(c) || NO_HTTP_CODE.test(c)),
  );
  if (network !== undefined)
    return { ok: false, errorType: 'ManifestConnectError', detail: network };
  return {
    ok: false,
    errorType: 'UnexpectedPullError',
    detail: codes.find((c) => c !== undefined) ?? nameOf(err) ?? typeof err,
  };
}
