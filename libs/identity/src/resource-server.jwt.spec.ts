import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Logger } from '@nestjs/common';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import type { GatewayConfig } from '@app/config';
import { ResourceServer } from './resource-server.service';

const AUDIENCE = 'https://gw.example.com/mcp';

/** A real JWKS + introspection endpoint on 127.0.0.1 that counts its requests. */
class IdentityProvider {
  jwks: { keys: JWK[] } = { keys: [] };
  introspected = 0;
  active = new Map<string, Record<string, unknown>>();
  private server?: Server;
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        if (req.url === '/jwks') {
          res.end(JSON.stringify(this.jwks));
          return;
        }
        this.introspected += 1;
        const token = new URLSearchParams(body).get('token') ?? '';
        res.end(JSON.stringify(this.active.get(token) ?? { active: false }));
      });
    });
    await new Promise<void>((r) => this.server?.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as AddressInfo).port;
  }

  get issuer(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  stop(): Promise<void> {
    return new Promise((r) => this.server?.close(() => r()));
  }
}

describe('ResourceServer in mode jwt (docs/operations.md §13)', () => {
  const idp = new IdentityProvider();
  let key: CryptoKey;
  let rs: ResourceServer;

  const sign = (
    claims: Record<string, unknown>,
    expSeconds = 300,
    typ: string | null = 'at+jwt',
    audience: string | string[] = AUDIENCE,
  ): Promise<string> =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: 'k1', ...(typ === null ? {} : { typ }) })
      .setIssuer(idp.issuer)
      .setAudience(audience)
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + expSeconds)
      .sign(key);

  beforeAll(async () => {
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    await idp.start();
    const pair = await generateKeyPair('ES256');
    key = pair.privateKey;
    idp.jwks = { keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256' }] };
    rs = new ResourceServer({
      profile: 'test',
      mcp: {
        auth: {
          mode: 'jwt',
          issuer: idp.issuer,
          audience: AUDIENCE,
          jwksUrl: `${idp.issuer}/jwks`,
          requiredScopes: ['mcp'],
          algorithms: ['ES256'],
          clockSkewSeconds: 0,
          introspectionUrl: `${idp.issuer}/introspect`,
          introspectionClientId: 'gw',
          introspectionCacheSeconds: 0,
          introspectionInactiveCacheSeconds: 0,
          introspectionMaxConcurrent: 4,
          tokenTypes: ['at+jwt', 'JWT'],
          authorizationServerTimeoutMillis: 2000,
        },
        virtualServers: [{ id: 'claims' }, { id: 'data' }],
      },
      authSecrets: { introspectionClientSecret: 'secret' },
    } as unknown as GatewayConfig);
  });

  afterAll(async () => {
    rs.onModuleDestroy();
    await idp.stop();
    jest.restoreAllMocks();
  });

  it('a valid JWT gives the caller: sub, client_id, scopes, claims, exp, the token', async () => {
    const token = await sign({
      sub: 'alice',
      client_id: 'agent',
      scope: 'mcp read',
      groups: ['g'],
    });
    const outcome = await rs.authenticate(`Bearer ${token}`);
    expect(outcome).toMatchObject({
      kind: 'authenticated',
      caller: { subject: 'alice', clientId: 'agent', scopes: ['mcp', 'read'], token },
    });
    if (outcome.kind === 'authenticated') expect(outcome.caller.claims.groups).toEqual(['g']);
  });

  it("a virtual server's path URL is an audience of its own: such a token serves that path only (RFC 8707)", async () => {
    const claimsUrl = `${AUDIENCE.replace(/\/+$/, '')}/servers/claims`;
    const forClaims = await rs.authenticate(
      `Bearer ${await sign({ sub: 'c', scope: 'mcp' }, 300, 'at+jwt', claimsUrl)}`,
    );
    if (forClaims.kind !== 'authenticated') throw new Error(JSON.stringify(forClaims));
    expect(rs.servesOn(forClaims.caller, 'claims')).toBe(true);
    expect(rs.servesOn(forClaims.caller, 'data')).toBe(false);
    expect(rs.servesOn(forClaims.caller, undefined)).toBe(false);
    const forGateway = await rs.authenticate(`Bearer ${await sign({ sub: 'g', scope: 'mcp' })}`);
    if (forGateway.kind !== 'authenticated') throw new Error(JSON.stringify(forGateway));
    for (const server of ['claims', 'data', undefined])
      expect(rs.servesOn(forGateway.caller, server)).toBe(true);
    const elsewhere = await rs.authenticate(
      `Bearer ${await sign({ sub: 'x', scope: 'mcp' }, 300, 'at+jwt', `${AUDIENCE}/servers/nope`)}`,
    );
    expect(elsewhere).toMatchObject({ kind: 'refused', status: 401, error: 'invalid_token' });
    // each path's metadata names it as the resource; the refusal points there
    const path = new URL(claimsUrl).pathname;
    expect(
      JSON.parse(rs.metadataDocument(`/.well-known/oauth-protected-resource${path}`) ?? '{}'),
    ).toMatchObject({ resource: claimsUrl });
    expect(rs.metadataUrlFor('claims')).toBe(
      `${new URL(AUDIENCE).origin}/.well-known/oauth-protected-resource${path}`,
    );
    expect(rs.metadataUrlFor(undefined)).toBe(rs.metadataUrl);
  });

  it('a server registered at runtime becomes an audience and a metadata path of its own; removed, neither', async () => {
    const lateUrl = `${AUDIENCE.replace(/\/+$/, '')}/servers/late`;
    const metadataPath = `/.well-known/oauth-protected-resource${new URL(lateUrl).pathname}`;
    const token = async (sub: string): Promise<string> =>
      `Bearer ${await sign({ sub, scope: 'mcp' }, 300, 'at+jwt', lateUrl)}`;
    expect(await rs.authenticate(await token('l0'))).toMatchObject({
      kind: 'refused',
      status: 401,
    });
    expect(rs.metadataDocument(metadataPath)).toBeUndefined();
    rs.addServerResource('late');
    const forLate = await rs.authenticate(await token('l1'));
    if (forLate.kind !== 'authenticated') throw new Error(JSON.stringify(forLate));
    expect(rs.servesOn(forLate.caller, 'late')).toBe(true);
    expect(rs.servesOn(forLate.caller, 'claims')).toBe(false);
    expect(JSON.parse(rs.metadataDocument(metadataPath) ?? '{}')).toMatchObject({
      resource: lateUrl,
    });
    rs.removeServerResource('late');
    expect(rs.servesOn(forLate.caller, 'late')).toBe(false);
    expect(rs.metadataDocument(metadataPath)).toBeUndefined();
    expect(await rs.authenticate(await token('l2'))).toMatchObject({
      kind: 'refused',
      status: 401,
    });
  });

  it('authenticateRemembered decides a header verified before without I/O, as authenticate would', async () => {
    const token = await sign({ sub: 'bob', scope: 'mcp' });
    const header = `Bearer ${token}`;
    // never verified: undefined (authenticate must decide), also for repeated headers
    expect(rs.authenticateRemembered(header)).toBeUndefined();
    expect(rs.authenticateRemembered([header, header])).toBeUndefined();
    expect(rs.authenticateRemembered(undefined)).toBeUndefined();
    await rs.authenticate(header);
    expect(rs.authenticateRemembered(header)).toMatchObject({
      kind: 'authenticated',
      caller: { subject: 'bob' },
    });
    // remembered by the exact header value: another spelling goes through authenticate
    expect(rs.authenticateRemembered(`bearer ${token}`)).toBeUndefined();
    // a verified token that lacks a required scope is remembered and still refused with 403
    const narrow = `Bearer ${await sign({ sub: 'bob', scope: 'read' })}`;
    await rs.authenticate(narrow);
    expect(rs.authenticateRemembered(narrow)).toMatchObject({ status: 403 });
    // a token remembered until its exp: once past it, no longer decided from memory
    // (a minute of life: a loaded machine must not see it expire before it is first verified)
    const brief = `Bearer ${await sign({ sub: 'carol', scope: 'mcp' }, 60)}`;
    expect(await rs.authenticate(brief)).toMatchObject({ kind: 'authenticated' });
    expect(rs.authenticateRemembered(brief)).toMatchObject({ kind: 'authenticated' });
    jest.useFakeTimers({ now: Date.now() + 120_000, doNotFake: ['nextTick', 'setImmediate'] });
    try {
      expect(rs.authenticateRemembered(brief)).toBeUndefined();
    } finally {
      jest.useRealTimers();
    }
  });

  it('a key removed from the key set: tokens it signed are refused at their next use, though verified and remembered before', async () => {
    const verifier = (rs as any).jwt as { refreshKeys(): Promise<void> };
    const header = `Bearer ${await sign({ sub: 'rotated', scope: 'mcp' })}`;
    expect(await rs.authenticate(header)).toMatchObject({ kind: 'authenticated' });
    const kept = idp.jwks;
    try {
      // a key added: what was verified stays remembered
      const other = await generateKeyPair('ES256');
      const added = { ...(await exportJWK(other.publicKey)), kid: 'k2', alg: 'ES256' };
      idp.jwks = { keys: [...kept.keys, added] };
      await verifier.refreshKeys();
      expect(rs.authenticateRemembered(header)).toMatchObject({ kind: 'authenticated' });
      // k1 removed: verified again, and refused
      idp.jwks = { keys: [added] };
      await verifier.refreshKeys();
      expect(rs.authenticateRemembered(header)).toBeUndefined();
      expect(await rs.authenticate(header)).toMatchObject({
        status: 401,
        description: 'The access token was signed by an unknown key',
      });
    } finally {
      idp.jwks = kept;
      await verifier.refreshKeys();
    }
    expect(await rs.authenticate(header)).toMatchObject({ kind: 'authenticated' });
  });

  it('a kid no fetched set named, while the set may not be fetched again yet: 503 retry (a rotation just made), never 401; valid once the set has it', async () => {
    const verifier = (rs as any).jwt as { refreshKeys(): Promise<void> };
    await verifier.refreshKeys(); // a fetch just now: an unknown kid cannot fetch again
    const kept = idp.jwks;
    const rotated = await generateKeyPair('ES256');
    const token = await new SignJWT({ sub: 'new-key', scope: 'mcp' })
      .setProtectedHeader({ alg: 'ES256', kid: 'k-new', typ: 'at+jwt' })
      .setIssuer(idp.issuer)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + 300)
      .sign(rotated.privateKey);
    try {
      idp.jwks = {
        keys: [
          ...kept.keys,
          { ...(await exportJWK(rotated.publicKey)), kid: 'k-new', alg: 'ES256' },
        ],
      };
      expect(await rs.authenticate(`Bearer ${token}`)).toMatchObject({
        status: 503,
        description: expect.stringContaining('retry in a few seconds'),
      });
      // the same unknown kid in a token of another issuer is no rotation of ours: 401
      const foreign = await new SignJWT({ sub: 'new-key', scope: 'mcp' })
        .setProtectedHeader({ alg: 'ES256', kid: 'k-new', typ: 'at+jwt' })
        .setIssuer('https://other-issuer.example')
        .setAudience(AUDIENCE)
        .setIssuedAt()
        .setExpirationTime(Math.floor(Date.now() / 1000) + 300)
        .sign(rotated.privateKey);
      expect(await rs.authenticate(`Bearer ${foreign}`)).toMatchObject({
        status: 401,
        description: 'The access token was signed by an unknown key',
      });
      // the next fetch (background, or the first an unknown kid may cause) has it
      await verifier.refreshKeys();
      expect(await rs.authenticate(`Bearer ${token}`)).toMatchObject({
        kind: 'authenticated',
        caller: { subject: 'new-key' },
      });
    } finally {
      idp.jwks = kept;
      await verifier.refreshKeys();
    }
  });

  it("a verified token is forgotten once expired, as new tokens come: callers whose tokens rotate do not fill the memory's cap", async () => {
    const remembered = (): number => (rs as any).verified.size as number;
    const headers = await Promise.all(
      Array.from(
        { length: 40 },
        async (_, i) => `Bearer ${await sign({ sub: `r${i}`, scope: 'mcp' }, 60)}`,
      ),
    );
    for (const header of headers)
      expect(await rs.authenticate(header)).toMatchObject({ kind: 'authenticated' });
    expect(remembered()).toBeGreaterThanOrEqual(40);
    const fresh = `Bearer ${await sign({ sub: 'fresh', scope: 'mcp' }, 600)}`;
    jest.useFakeTimers({ now: Date.now() + 120_000, doNotFake: ['nextTick', 'setImmediate'] });
    try {
      expect(await rs.authenticate(fresh)).toMatchObject({ kind: 'authenticated' });
      expect(remembered()).toBe(1);
    } finally {
      jest.useRealTimers();
    }
  });

  it('no header: 401 without an error code; another scheme: 401 invalid_token', async () => {
    expect(await rs.authenticate(undefined)).toMatchObject({ kind: 'refused', status: 401 });
    expect((await rs.authenticate(undefined)) as object).not.toHaveProperty('error');
    expect(await rs.authenticate('Basic Zm9vOmJhcg==')).toMatchObject({
      status: 401,
      error: 'invalid_token',
    });
  });

  it('a JWT without a required scope: 403 insufficient_scope naming the scopes', async () => {
    const token = await sign({ sub: 'alice', scope: 'read' });
    expect(await rs.authenticate(`Bearer ${token}`)).toMatchObject({
      status: 403,
      error: 'insufficient_scope',
      scope: 'mcp',
    });
  });

  it('a JWT signed by another key with the same kid: 401, the description never holds the token', async () => {
    const other = await generateKeyPair('ES256');
    const forged = await new SignJWT({ sub: 'mallory', scope: 'mcp' })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuer(idp.issuer)
      .setAudience(AUDIENCE)
      .setExpirationTime('5m')
      .sign(other.privateKey);
    const outcome = await rs.authenticate(`Bearer ${forged}`);
    expect(outcome).toMatchObject({ status: 401, error: 'invalid_token' });
    expect(JSON.stringify(outcome)).not.toContain(forged.split('.')[2]);
  });

  it('opaque tokens are introspected on every request by default, and inactive ones refused', async () => {
    idp.active.set('opaque-1', {
      active: true,
      sub: 'bob',
      scope: 'mcp',
      aud: AUDIENCE,
      iss: idp.issuer,
      exp: Math.floor(Date.now() / 1000) + 300,
    });
    const before = idp.introspected;
    expect(await rs.authenticate('Bearer opaque-1')).toMatchObject({ kind: 'authenticated' });
    expect(await rs.authenticate('Bearer opaque-1')).toMatchObject({ kind: 'authenticated' });
    expect(idp.introspected).toBe(before + 2);
    idp.active.delete('opaque-1');
    expect(await rs.authenticate('Bearer opaque-1')).toMatchObject({
      status: 401,
      description: 'The access token is not active',
    });
  });

  it('an active introspection answer for another audience or already expired is refused', async () => {
    idp.active.set('opaque-aud', { active: true, sub: 'b', scope: 'mcp', aud: 'https://other' });
    idp.active.set('opaque-exp', {
      active: true,
      sub: 'b',
      scope: 'mcp',
      aud: AUDIENCE,
      exp: Math.floor(Date.now() / 1000) - 5,
    });
    // RFC 7662 makes aud optional; with an audience configured an answer without it is refused
    idp.active.set('opaque-noaud', { active: true, sub: 'b', scope: 'mcp' });
    expect(await rs.authenticate('Bearer opaque-noaud')).toMatchObject({
      status: 401,
      description: 'The access token was not issued for this resource',
    });
    expect(await rs.authenticate('Bearer opaque-aud')).toMatchObject({
      status: 401,
      description: 'The access token was not issued for this resource',
    });
    expect(await rs.authenticate('Bearer opaque-exp')).toMatchObject({
      status: 401,
      description: 'The access token has expired',
    });
  });

  it('an active introspection answer with ID-token claims is refused, as a JWT with them is', async () => {
    const exp = Math.floor(Date.now() / 1000) + 300;
    const base = { active: true, sub: 'b', scope: 'mcp', aud: AUDIENCE, exp };
    const marks: Record<string, unknown>[] = [
      { nonce: 'n-1' },
      { at_hash: 'h' },
      { c_hash: 'h' },
      { s_hash: 'h' },
      { typ: 'ID' },
    ];
    for (const [i, mark] of marks.entries()) {
      idp.active.set(`opaque-id-${i}`, { ...base, ...mark });
      expect([mark, await rs.authenticate(`Bearer opaque-id-${i}`)]).toEqual([
        mark,
        expect.objectContaining({
          status: 401,
          description: 'The token is an ID token, not an access token',
        }),
      ]);
    }
    // the same answer without them is an access token's
    idp.active.set('opaque-access', { ...base, typ: 'Bearer' });
    expect(await rs.authenticate('Bearer opaque-access')).toMatchObject({ kind: 'authenticated' });
  });

  it('the access-token profile: exp required, iat not ahead, typ from the list, no ID-token claims', async () => {
    const now = Math.floor(Date.now() / 1000);
    const base = { iss: idp.issuer, aud: AUDIENCE, sub: 'alice', scope: 'mcp' };
    const raw = (claims: Record<string, unknown>, typ?: string): Promise<string> =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', kid: 'k1', ...(typ === undefined ? {} : { typ }) })
        .sign(key);
    const outcome = async (t: string) => rs.authenticate(`Bearer ${t}`);
    expect(await outcome(await raw({ ...base, iat: now }, 'at+jwt'))).toMatchObject({
      status: 401,
      description: 'The access token has no expiry (exp is required)',
    });
    expect(
      await outcome(await raw({ ...base, iat: now + 365 * 86400, exp: now + 600 }, 'at+jwt')),
    ).toMatchObject({
      status: 401,
      description: 'The access token was issued in the future (iat)',
    });
    for (const typ of ['JWT', 'at+JWT', 'application/at+jwt'])
      expect(await outcome(await sign({ sub: `t-${typ}`, scope: 'mcp' }, 300, typ))).toMatchObject({
        kind: 'authenticated',
      });
    expect(
      await outcome(await sign({ sub: 'x', scope: 'mcp' }, 300, 'id_token+jwt')),
    ).toMatchObject({
      status: 401,
      description: 'The access token has a "typ" that is not an accepted access token type',
    });
    expect(await outcome(await sign({ sub: 'y', scope: 'mcp' }, 300, null))).toMatchObject({
      status: 401,
      description: 'The access token has no "typ" header (an access token type is required)',
    });
    expect(
      await outcome(await sign({ sub: 'kc', scope: 'mcp', typ: 'ID' }, 300, 'JWT')),
    ).toMatchObject({
      description: 'The token is an ID token, not an access token',
    });
    // Keycloak's access tokens say typ "Bearer" in the payload: served
    expect(
      await outcome(await sign({ sub: 'kc', scope: 'mcp', typ: 'Bearer' }, 300, 'JWT')),
    ).toMatchObject({
      kind: 'authenticated',
    });
    for (const claim of ['nonce', 'at_hash', 'c_hash'])
      expect(
        await outcome(await sign({ sub: 'z', scope: 'mcp', [claim]: 'v' }, 300, 'JWT')),
      ).toMatchObject({
        status: 401,
        description: 'The token is an ID token, not an access token',
      });
  });
});
