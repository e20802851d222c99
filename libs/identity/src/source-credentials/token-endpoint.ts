import { fetch as fetchVia, type Dispatcher } from 'undici';
import type { TokenExchangeAuthorization } from '@app/config';
import { tracedHttpRequest } from '@app/observability';

/** RFC 8693 §2.1 grant type and token types. */
export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

/** Bound in ms of one request to the token endpoint. */
export const TOKEN_ENDPOINT_TIMEOUT_MS = 5_000;

/** An access token the authorization server issued, and its lifetime in seconds when stated. */
export interface IssuedToken {
  readonly accessToken: string;
  readonly expiresInSeconds?: number;
}

/**
 * The token endpoint refused or failed. The message names the cause (HTTP status, the RFC 6749
 * §5.2 `error` code) and never a token, a secret or the endpoint's address: it may reach a
 * client as a tool error.
 */
export class TokenEndpointError extends Error {
  override readonly name = 'TokenEndpointError';

  /** @param addressRefused the connect guard of a registered upstream refused the endpoint's address */
  constructor(
    message: string,
    readonly addressRefused = false,
  ) {
    super(message);
  }
}

/**
 * The connect guard's refusal (libs/upstream connect-guard.ts), by its code: fetch wraps it in
 * a TypeError's `cause` (no instanceof: fetch's errors may come from another realm).
 */
function isAddressRefusal(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; typeof e === 'object' && e !== null && depth < 4; depth++) {
    if ((e as { code?: unknown }).code === 'ERR_UPSTREAM_ADDRESS_REFUSED') return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** RFC 6749 §2.3.1: client_secret_basic, id and secret form-urlencoded before base64. */
function basicAuthorization(clientId: string, secret: string): string {
  const encode = (v: string): string => encodeURIComponent(v).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(secret)}`).toString('base64')}`;
}

function isAbsoluteUri(value: string): boolean {
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
}

/** An RFC 6749 `error` code is printable ASCII without `"` and `\`; anything else is not repeated. */
function safeErrorCode(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const code = (body as { error?: unknown }).error;
  return typeof code === 'string' && /^[\x20-\x21\x23-\x5b\x5d-\x7e]{1,64}$/.test(code)
    ? code
    : undefined;
}

const TOKEN_ENDPOINT_SPAN = { 'mcp_gateway.auth.request': 'token_endpoint' };

/**
 * Posts one grant to the token endpoint and reads its answer (RFC 6749 §5.1).
 * @param dispatcher the connection pool to post through: a runtime-registered upstream's
 *   guarded Agent (its endpoint's address checked at connect), else fetch's own
 * @throws TokenEndpointError for a refusal, an unusable answer, a timeout or no connection
 */
async function postGrant(
  auth: TokenExchangeAuthorization,
  form: Record<string, string>,
  what: string,
  dispatcher: Dispatcher | undefined,
): Promise<IssuedToken> {
  let response: Pick<Response, 'status' | 'ok' | 'json'> & {
    readonly body: { cancel(): Promise<void> } | null;
  };
  const init = {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
      authorization: basicAuthorization(auth.clientId, auth.clientSecret),
    },
    body: new URLSearchParams(form).toString(),
    // A redirect would carry the form (the caller's subject_token) and the client secret to
    // wherever the endpoint points, past the check of a registration's token endpoint
    // (docs/security.md, "Runtime registrations"): never followed, a credential failure.
    redirect: 'manual' as const,
    signal: AbortSignal.timeout(TOKEN_ENDPOINT_TIMEOUT_MS),
  };
  try {
    // A registered upstream's guarded Agent goes with the undici that built it (one dispatch
    // API, one realm for its errors); every other endpoint keeps the runtime's fetch.
    // a CLIENT span under the request that needed the token, when it is traced
    response = await tracedHttpRequest(
      'POST',
      auth.tokenEndpoint,
      TOKEN_ENDPOINT_SPAN,
      (trace) => {
        const traced = { ...init, headers: { ...init.headers, ...trace } };
        return dispatcher === undefined
          ? fetch(auth.tokenEndpoint, traced)
          : fetchVia(auth.tokenEndpoint, { ...traced, dispatcher });
      },
      (answer) => answer.status,
    );
  } catch (err) {
    if (isAddressRefusal(err))
      throw new TokenEndpointError(
        `${what}: the token endpoint's host resolved to an address a registered upstream may ` +
          'not reach (UpstreamAddressRefusedError); nothing was sent',
        true,
      );
    const timedOut = err instanceof Error && err.name === 'TimeoutError';
    throw new TokenEndpointError(
      timedOut
        ? `${what}: the authorization server did not answer within ${TOKEN_ENDPOINT_TIMEOUT_MS} ms`
        : `${what}: the authorization server could not be reached`,
    );
  }
  if (response.status >= 300 && response.status < 400) {
    await response.body?.cancel().catch(() => undefined);
    throw new TokenEndpointError(
      `${what}: the authorization server answered with a redirect (HTTP ${response.status}), which is never followed`,
    );
  }
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    body = undefined;
  }
  if (!response.ok) {
    const code = safeErrorCode(body);
    throw new TokenEndpointError(
      `${what}: the authorization server refused (HTTP ${response.status}${code === undefined ? '' : ` ${code}`})`,
    );
  }
  const answer = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const token = answer.access_token;
  const type = answer.token_type;
  // RFC 8693 §2.2.1: token_type N_A means the token is not an access token
  if (typeof token !== 'string' || token === '' || !/^[\x21-\x7e]+$/.test(token))
    throw new TokenEndpointError(
      `${what}: the authorization server's answer holds no access token`,
    );
  if (typeof type !== 'string' || type.toLowerCase() !== 'bearer')
    throw new TokenEndpointError(`${what}: the issued token is not a Bearer token`);
  const expires = answer.expires_in;
  return {
    accessToken: token,
    expiresInSeconds:
      typeof expires === 'number' && Number.isFinite(expires) && expires > 0 ? expires : undefined,
  };
}

/**
 * RFC 8693 token exchange: the caller's access token (`subject_token`) for one whose audience
 * is the source's (`audience`, and `resource` when it is an absolute URI, RFC 8707).
 */
export function exchangeToken(
  auth: TokenExchangeAuthorization,
  subjectToken: string,
  dispatcher?: Dispatcher,
): Promise<IssuedToken> {
  return postGrant(
    auth,
    {
      grant_type: TOKEN_EXCHANGE_GRANT,
      subject_token: subjectToken,
      subject_token_type: ACCESS_TOKEN_TYPE,
      requested_token_type: ACCESS_TOKEN_TYPE,
      audience: auth.audience,
      ...(isAbsoluteUri(auth.audience) ? { resource: auth.audience } : {}),
      ...(auth.scope === undefined ? {} : { scope: auth.scope }),
    },
    'token exchange',
    dispatcher,
  );
}

/**
 * RFC 6749 §4.4 client credentials: the gateway's own token for the source's audience, for
 * requests no caller made (list pulls).
 */
export function clientCredentialsToken(
  auth: TokenExchangeAuthorization,
  dispatcher?: Dispatcher,
): Promise<IssuedToken> {
  return postGrant(
    auth,
    {
      grant_type: 'client_credentials',
      ...(isAbsoluteUri(auth.audience) ? { resource: auth.audience } : {}),
      ...(auth.scope === undefined ? {} : { scope: auth.scope }),
    },
    'client credentials',
    dispatcher,
  );
}
