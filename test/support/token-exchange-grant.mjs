// RFC 8693 token exchange for the test authorization server (oidc-provider 9 has no built-in
// grant for it; registered with provider.registerGrantType). The gateway, a confidential
// client, presents a user's access token as `subject_token` and names the target source in
// `resource` (RFC 8707) or `audience`; the answer is a JWT whose `aud` is that source, whose
// `sub` stays the user and whose `act` names the exchanging client (RFC 8693 §4.1).
import { createLocalJWKSet, jwtVerify } from 'jose';

export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

function oauthError(ctx, status, error, description) {
  ctx.status = status;
  ctx.body = { error, error_description: description };
}

/**
 * @param provider the oidc-provider instance
 * @param options.publicKeys () => the public JWKs the provider signs with now
 * @param options.resourceServerInfo (resource) => { audience, scope, accessTokenTTL, jwt, ... }
 * @param options.claimsFor WeakMap the provider's extraTokenClaims reads (token → claims)
 * @param options.counters counters object; `exchange` counts issued exchanges
 * @param options.exchanges array; each exchange appends { sub, audience, clientId }
 */
export function registerTokenExchange(provider, options) {
  provider.registerGrantType(
    TOKEN_EXCHANGE,
    async (ctx) => {
      const { params, client } = ctx.oidc;
      if (params.subject_token_type !== ACCESS_TOKEN_TYPE)
        return oauthError(ctx, 400, 'invalid_request', 'subject_token_type must be access_token');
      let subject;
      try {
        ({ payload: subject } = await jwtVerify(
          params.subject_token,
          createLocalJWKSet({ keys: options.publicKeys() }),
          { issuer: provider.issuer },
        ));
      } catch {
        return oauthError(ctx, 400, 'invalid_grant', 'subject_token is not a valid access token');
      }
      const target = [params.resource, params.audience].flat().find((v) => typeof v === 'string');
      if (target === undefined)
        return oauthError(ctx, 400, 'invalid_target', 'name the source in resource or audience');
      const info = options.resourceServerInfo(target);
      const grant = new provider.Grant({ accountId: subject.sub, clientId: client.clientId });
      grant.addResourceScope(target, info.scope);
      const grantId = await grant.save();
      const token = new provider.AccessToken({
        accountId: subject.sub,
        client,
        grantId,
        gty: 'token_exchange',
        scope: params.scope ?? info.scope,
      });
      token.resourceServer = {
        ...info,
        accessTokenFormat: 'jwt',
        jwt: info.jwt ?? { sign: { alg: 'ES256' } },
      };
      // the user's groups stay with the user; `act` says who acts for them (RFC 8693 §4.1)
      const carried = subject.groups === undefined ? {} : { groups: subject.groups };
      options.claimsFor.set(token, { ...carried, act: { sub: client.clientId } });
      const value = await token.save();
      options.counters.exchange = (options.counters.exchange ?? 0) + 1;
      options.exchanges.push({ sub: subject.sub, audience: target, clientId: client.clientId });
      ctx.body = {
        access_token: value,
        issued_token_type: ACCESS_TOKEN_TYPE,
        token_type: 'Bearer',
        expires_in: token.expiration,
        scope: token.scope,
      };
    },
    [
      'subject_token',
      'subject_token_type',
      'requested_token_type',
      'audience',
      'resource',
      'scope',
      'actor_token',
      'actor_token_type',
    ],
    ['audience', 'resource'],
  );
}
