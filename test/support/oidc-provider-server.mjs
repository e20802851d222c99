// A real OAuth 2.1 authorization server for e2e tests: oidc-provider 9 (ES module only, so it
// runs in its own Node process) on 127.0.0.1. Started by test/support/oidc-provider.ts, which
// passes the settings as JSON in OIDC_HARNESS_CONFIG and reads "oidc listening: <port>".
//
// Besides the provider's own endpoints (discovery, JWKS, token, introspection, revocation) it
// answers a small control API under /__test/ that only tests use: mint a token for a user
// with claims, sign any JWT with the current key (claims and header as given), revoke a grant,
// rotate the signing key, make the JWKS endpoint fail, read request counters. See oidc-provider.ts for the shapes.
import { createServer } from 'node:http';
import { exportJWK, generateKeyPair, importJWK, SignJWT } from 'jose';
import Provider from 'oidc-provider';
import { registerTokenExchange } from './token-exchange-grant.mjs';

const settings = JSON.parse(process.env.OIDC_HARNESS_CONFIG ?? '{}');
const host = '127.0.0.1';
/** resource URI → { scope, format: 'jwt' | 'opaque', ttlSeconds } */
const resources = settings.resources ?? {};
/** client_id → extra claims put into every token issued to that client (client credentials). */
const clientClaims = new Map(Object.entries(settings.clientClaims ?? {}));
const counters = { jwks: 0, introspection: 0, token: 0, exchange: 0 };
/** Every token exchange issued (RFC 8693): { sub, audience, clientId }. */
const exchanges = [];
let jwksDown = false;

/** Claims a /__test/mint call asked for, attached to the token object it builds. */
const mintedClaims = new WeakMap();

async function newSigningKey(alg = 'ES256') {
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(privateKey);
  return {
    ...jwk,
    alg,
    use: 'sig',
    kid: `k-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`,
  };
}

function buildProvider(issuer, keys) {
  const provider = new Provider(issuer, {
    clients: settings.clients ?? [],
    jwks: { keys },
    // Every key here is ES256, so clients default to it too.
    clientDefaults: { id_token_signed_response_alg: 'ES256' },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx, _client, oneOf) => oneOf ?? settings.defaultResource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resourceIndicator) => resourceServerInfo(resourceIndicator),
      },
    },
    extraTokenClaims: (_ctx, token) =>
      mintedClaims.get(token) ?? clientClaims.get(token.clientId) ?? undefined,
    ttl: {
      AccessToken: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? 600,
      ClientCredentials: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? 600,
      Grant: 3600,
    },
  });
  provider.on('server_error', (_ctx, err) => console.error('oidc server_error', err));
  registerTokenExchange(provider, {
    publicKeys: () => keys.map(({ d: _d, ...pub }) => pub),
    resourceServerInfo,
    claimsFor: mintedClaims,
    counters,
    exchanges,
  });
  return provider;
}

function resourceServerInfo(resourceIndicator) {
  const info = resources[resourceIndicator];
  if (info === undefined) {
    // Any other resource gets an opaque-free JWT too, so "wrong audience" tokens can be minted.
    return {
      audience: resourceIndicator,
      scope: settings.anyResourceScope ?? 'mcp',
      accessTokenFormat: 'jwt',
      accessTokenTTL: 600,
      jwt: { sign: { alg: 'ES256' } },
    };
  }
  return {
    audience: resourceIndicator,
    scope: info.scope ?? 'mcp',
    accessTokenFormat: info.format ?? 'jwt',
    accessTokenTTL: info.ttlSeconds ?? 600,
    ...(info.format === 'opaque' ? {} : { jwt: { sign: { alg: info.alg ?? 'ES256' } } }),
  };
}

async function readJson(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? {} : JSON.parse(text);
}

function send(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function mint(provider, body) {
  const clientId = body.clientId ?? settings.clients?.[0]?.client_id;
  const client = await provider.Client.find(clientId);
  if (!client) throw new Error(`unknown client ${clientId}`);
  const resource = body.resource ?? settings.defaultResource;
  const info = resourceServerInfo(resource);
  const scope = body.scope ?? info.scope;
  const grant = new provider.Grant({ accountId: body.subject, clientId });
  grant.addResourceScope(resource, scope);
  const grantId = await grant.save();
  const token = new provider.AccessToken({
    accountId: body.subject,
    client,
    grantId,
    gty: 'test_mint',
    scope,
  });
  token.resourceServer = {
    ...info,
    ...(body.format === undefined ? {} : { accessTokenFormat: body.format }),
    ...(body.ttlSeconds === undefined ? {} : { accessTokenTTL: body.ttlSeconds }),
  };
  if (token.resourceServer.accessTokenFormat === 'opaque') delete token.resourceServer.jwt;
  else token.resourceServer.jwt ??= { sign: { alg: 'ES256' } };
  // An already-expired (or not-yet-valid) JWT for the expiry cases: exp/iat set outright.
  if (body.exp !== undefined) token.exp = body.exp;
  if (body.iat !== undefined) token.iat = body.iat;
  mintedClaims.set(token, body.claims ?? {});
  const value = await token.save();
  return { access_token: value, grantId, expires_in: token.expiration, scope };
}

/**
 * A JWT with exactly the claims and header given, signed with the current signing key: for the
 * shapes the provider itself never issues (no exp, iat ahead, typ JWT or none, ID-token claims).
 * `header.typ: null` leaves typ out.
 */
async function sign(body) {
  const key = keys[0];
  const { typ = 'at+jwt', ...rest } = body.header ?? {};
  const header = { alg: key.alg, kid: key.kid, ...rest, ...(typ === null ? {} : { typ }) };
  const value = await new SignJWT(body.payload ?? {})
    .setProtectedHeader(header)
    .sign(await importJWK(key, key.alg));
  return { access_token: value };
}

let keys = settings.keys ?? [await newSigningKey()];
let provider;
let handler;
const server = createServer(async (req, res) => {
  const path = (req.url ?? '/').split('?')[0];
  try {
    if (path.startsWith('/__test/')) {
      const body = req.method === 'POST' ? await readJson(req) : {};
      switch (path) {
        case '/__test/mint':
          return send(res, 200, await mint(provider, body));
        case '/__test/sign':
          return send(res, 200, await sign(body));
        case '/__test/revoke-grant': {
          const grant = await provider.Grant.find(body.grantId);
          if (grant) await grant.destroy();
          await provider.AccessToken.revokeByGrantId(body.grantId);
          return send(res, 200, { revoked: body.grantId });
        }
        case '/__test/rotate': {
          // The new key signs from now on; the old ones stay published unless dropped.
          const next = await newSigningKey();
          keys = body.dropOld ? [next] : [next, ...keys];
          provider = buildProvider(provider.issuer, keys);
          handler = provider.callback();
          return send(res, 200, { kid: next.kid, kids: keys.map((k) => k.kid) });
        }
        case '/__test/jwks-down':
          jwksDown = body.down !== false;
          return send(res, 200, { down: jwksDown });
        case '/__test/client-claims':
          clientClaims.set(body.clientId, body.claims ?? {});
          return send(res, 200, {});
        case '/__test/exchanges':
          return send(res, 200, { exchanges });
        case '/__test/counters':
          return send(res, 200, { ...counters, kids: keys.map((k) => k.kid) });
        default:
          return send(res, 404, { error: 'unknown control path' });
      }
    }
    if (path === '/jwks') {
      counters.jwks += 1;
      if (jwksDown) return send(res, 503, { error: 'jwks down (test)' });
    }
    if (path === '/token/introspection') counters.introspection += 1;
    else if (path === '/token') counters.token += 1;
    return handler(req, res);
  } catch (err) {
    console.error('oidc harness error', err);
    return send(res, 500, { error: String(err?.message ?? err) });
  }
});
server.listen(settings.port ?? 0, host, () => {
  const { port } = server.address();
  provider = buildProvider(settings.issuer ?? `http://${host}:${port}`, keys);
  handler = provider.callback();
  // Plain http on 127.0.0.1 is fine for tests; oidc-provider only warns about it.
  console.log(`oidc listening: ${port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
