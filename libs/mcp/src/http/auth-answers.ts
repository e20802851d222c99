import { wwwAuthenticate, type AuthOutcome } from '@app/identity';
import type { HttpAnswer } from '../answers/http-answer';

/**
 * The answer to a request the resource server refused (docs/operations.md §13 "Refusals"; RFC 6750
 * §3, RFC 9728 §5.1): 401 (no or bad token) or 403 (insufficient_scope) with `WWW-Authenticate:
 * Bearer resource_metadata="…"` and, when a token was sent, its `error` (and `scope`); the body is
 * the OAuth error object, like the official SDK's bearer middleware. No token value appears in it.
 * 503 (the authorization server failed; docs/security.md "Refusals") carries `Retry-After`
 * and no challenge: the token was not found bad, so the client must not discard it.
 */
export function authRefusal(
  outcome: Extract<AuthOutcome, { kind: 'refused' }>,
  metadataUrl: string,
): HttpAnswer {
  if (outcome.status === 503)
    return {
      status: 503,
      headers: {
        'content-type': 'application/json; charset=utf-8',
        'retry-after': String(outcome.retryAfterSeconds ?? 5),
        'cache-control': 'no-store',
      },
      body: JSON.stringify({
        error: outcome.error ?? 'temporarily_unavailable',
        error_description: outcome.description,
      }),
    };
  return {
    status: outcome.status,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'www-authenticate': wwwAuthenticate(
        metadataUrl,
        outcome.error,
        outcome.error === undefined ? undefined : outcome.description,
        outcome.scope,
      ),
    },
    body: JSON.stringify({
      error: outcome.error ?? 'invalid_token',
      error_description: outcome.description,
    }),
  };
}

/**
 * GET of the protected-resource metadata (RFC 9728 §3): public JSON any origin may read (a
 * browser-based client discovers the authorization server from it).
 */
export function metadataAnswer(json: string): HttpAnswer {
  return {
    status: 200,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'max-age=300',
      'access-control-allow-origin': '*',
    },
    body: json,
  };
}
