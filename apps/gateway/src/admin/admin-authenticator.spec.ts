import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { GatewayConfig } from '@app/config';
import type { CallerIdentity } from '@app/identity';
import { AdminAuthenticator, type AdminBearerVerifier } from './admin-authenticator';
import { adminVerifierFrom } from './resource-server-verifier';

function config(token?: string): GatewayConfig {
  return {
    admin: {
      token,
      allowLoopback: false,
      urlPatterns: [],
      allowedRanges: [],
      scope: 'mcp:admin',
      secretEnv: () => undefined,
    },
  } as unknown as GatewayConfig;
}

/**
 * A real HS256 JWT check (node:crypto; signature, issuer, audience, expiry) standing in for
 * the /mcp resource server's verifier, which plugs in under ADMIN_BEARER_VERIFIER. jose is ESM-only
 * and this project's Jest does not transform it yet.
 */
class Hs256Verifier implements AdminBearerVerifier {
  constructor(private readonly key: Buffer) {}

  sign(claims: Record<string, unknown>, audience = 'gw'): string {
    const part = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url');
    const now = Math.floor(Date.now() / 1000);
    const body = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ iss: 'https://idp.test', aud: audience, iat: now, exp: now + 300, ...claims })}`;
    return `${body}.${createHmac('sha256', this.key).update(body).digest('base64url')}`;
  }

  verify(token: string): Promise<CallerIdentity | undefined> {
    const [header, payload, signature] = token.split('.');
    if (header === undefined || payload === undefined || signature === undefined)
      return Promise.resolve(undefined);
    const expected = createHmac('sha256', this.key).update(`${header}.${payload}`).digest();
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      return Promise.resolve(undefined);
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<
      string,
      unknown
    >;
    if (
      claims.iss !== 'https://idp.test' ||
      claims.aud !== 'gw' ||
      Number(claims.exp) < Date.now() / 1000
    )
      return Promise.resolve(undefined);
    return Promise.resolve({
      subject: typeof claims.sub === 'string' ? claims.sub : undefined,
      scopes: typeof claims.scope === 'string' ? claims.scope.split(' ') : [],
      claims,
      token,
    });
  }
}

describe('AdminAuthenticator (docs/operations.md §15 "Access")', () => {
  it('with MCP_ADMIN_TOKEN: the exact token is admin; anything else is unauthenticated', async () => {
    const auth = new AdminAuthenticator(config('s3cret-admin'));
    expect(auth.configured).toBe(true);
    expect(auth.method).toBe('static-token');
    expect(await auth.authenticate('Bearer s3cret-admin')).toEqual({
      kind: 'admin',
      actor: { name: 'admin-token', via: 'static-token' },
    });
    expect(await auth.authenticate('bearer s3cret-admin')).toMatchObject({ kind: 'admin' });
    for (const header of [
      undefined,
      '',
      'Bearer',
      'Bearer s3cret-admin2',
      'Bearer s3cret-admi',
      'Basic s3cret-admin',
      's3cret-admin',
    ])
      expect(await auth.authenticate(header)).toMatchObject({ kind: 'unauthenticated' });
  });

  it('with neither a token nor a verifier, /admin is unconfigured (read-only)', async () => {
    const auth = new AdminAuthenticator(config());
    expect(auth.configured).toBe(false);
    expect(await auth.authenticate('Bearer anything')).toMatchObject({ kind: 'unconfigured' });
  });

  describe('with a bearer verifier (mcp.auth.mode jwt)', () => {
    const verifier = new Hs256Verifier(randomBytes(32));
    const sign = (claims: Record<string, unknown>, audience?: string): Promise<string> =>
      Promise.resolve(verifier.sign(claims, audience));
    // the static token is not accepted once a verifier is configured
    const auth = new AdminAuthenticator(config('static-too'), verifier);

    it('a valid token with the admin scope is admin, named by its sub', async () => {
      const token = await sign({ sub: 'alice', scope: 'mcp:tools mcp:admin' });
      expect(await auth.authenticate(`Bearer ${token}`)).toEqual({
        kind: 'admin',
        actor: { name: 'sub:alice', via: 'jwt' },
      });
      expect(auth.method).toBe('jwt');
    });

    it('a valid token without the scope is forbidden (403), naming the scope', async () => {
      const token = await sign({ sub: 'bob', scope: 'mcp:tools mcp:admins' });
      expect(await auth.authenticate(`Bearer ${token}`)).toEqual({
        kind: 'forbidden',
        reason: 'the token lacks the admin scope "mcp:admin"',
        actor: { name: 'sub:bob', via: 'jwt' },
      });
    });

    it('a token that does not verify, or the static token, is unauthenticated (401)', async () => {
      const wrongAudience = await sign({ sub: 'alice', scope: 'mcp:admin' }, 'other');
      expect(await auth.authenticate(`Bearer ${wrongAudience}`)).toMatchObject({
        kind: 'unauthenticated',
      });
      expect(await auth.authenticate('Bearer static-too')).toMatchObject({
        kind: 'unauthenticated',
      });
    });

    // An operator who sends MCP_ADMIN_TOKEN (or nothing) under jwt is told what /admin takes
    // instead (docs/operations.md §15 "Access"): an access token carrying the admin scope.
    it('a refusal says /admin takes an access token with the admin scope, not MCP_ADMIN_TOKEN', async () => {
      for (const header of [undefined, 'Bearer static-too']) {
        const decision = await auth.authenticate(header);
        expect(decision).toMatchObject({ kind: 'unauthenticated' });
        const reason = decision.kind === 'unauthenticated' ? decision.reason : '';
        expect(reason).toContain('an access token of mcp.auth with the admin scope "mcp:admin"');
        expect(reason).toContain('MCP_ADMIN_TOKEN is not accepted');
      }
    });
  });
});

describe('adminVerifierFrom: the /mcp resource server as the admin bearer check', () => {
  const verifier = new Hs256Verifier(randomBytes(32));
  /** `aud` "path" stands for a token issued for a virtual server's path only. */
  const server = (enabled: boolean) => ({
    enabled,
    async verifyBearer(header: string) {
      const caller = await verifier.verify(header.replace(/^Bearer /, ''));
      return caller === undefined ? { kind: 'refused' } : { kind: 'authenticated', caller };
    },
    servesOn: (caller: CallerIdentity) => caller.claims.aud !== 'path',
  });

  it('is absent when mcp.auth.mode is not jwt, so the static token applies', async () => {
    expect(adminVerifierFrom(server(false))).toBeNull();
    const auth = new AdminAuthenticator(config('tok'), adminVerifierFrom(server(false)));
    expect(await auth.authenticate('Bearer tok')).toMatchObject({ kind: 'admin' });
  });

  it('with jwt, the resource server decides who the caller is and the admin scope decides the role', async () => {
    const auth = new AdminAuthenticator(config('tok'), adminVerifierFrom(server(true)));
    const admin = verifier.sign({ sub: 'carol', scope: 'mcp:admin' });
    const user = verifier.sign({ sub: 'dave', scope: 'mcp:tools' });
    expect(await auth.authenticate(`Bearer ${admin}`)).toMatchObject({
      kind: 'admin',
      actor: { name: 'sub:carol', via: 'jwt' },
    });
    expect(await auth.authenticate(`Bearer ${user}`)).toMatchObject({ kind: 'forbidden' });
    expect(await auth.authenticate('Bearer tok')).toMatchObject({ kind: 'unauthenticated' });
  });

  it("a token issued for a virtual server's path only is not an admin's, whatever its scope", async () => {
    const auth = new AdminAuthenticator(config(), adminVerifierFrom(server(true)));
    const pathOnly = verifier.sign({ sub: 'erin', scope: 'mcp:admin', aud: 'path' });
    expect(await auth.authenticate(`Bearer ${pathOnly}`)).toMatchObject({
      kind: 'unauthenticated',
    });
  });

  it('a token the authorization server could not check (a 503 refusal) is unavailable, not unauthenticated', async () => {
    const down = {
      enabled: true,
      servesOn: () => true,
      verifyBearer: () =>
        Promise.resolve({
          kind: 'refused',
          status: 503,
          description: 'The authorization server is unavailable',
          retryAfterSeconds: 5,
        }),
    };
    const auth = new AdminAuthenticator(config(), adminVerifierFrom(down));
    expect(await auth.authenticate('Bearer some.jwt.value')).toEqual({
      kind: 'unavailable',
      reason: 'the bearer token could not be checked: The authorization server is unavailable',
      retryAfterSeconds: 5,
    });
  });
});
