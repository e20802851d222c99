import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import { TestAuthorizationServer } from '../support/oidc-provider';

const RESOURCE = 'http://127.0.0.1:1/mcp';

describe('test authorization server (oidc-provider harness)', () => {
  let as: TestAuthorizationServer;
  beforeAll(async () => {
    as = await TestAuthorizationServer.start({
      resources: { [RESOURCE]: { scope: 'mcp tools:read' } },
      defaultResource: RESOURCE,
      clientClaims: { 'gateway-test': { groups: ['machines'] } },
    });
  });
  afterAll(() => as.stop());

  it('mints a JWT user token for the resource with the claims asked, verifiable at its JWKS', async () => {
    const t = await as.mint({ subject: 'alice', claims: { groups: ['claims-team'] } });
    const { payload } = await jwtVerify(t.access_token, createRemoteJWKSet(new URL(as.jwksUrl)), {
      issuer: as.issuer,
      audience: RESOURCE,
    });
    expect(payload).toMatchObject({
      sub: 'alice',
      groups: ['claims-team'],
      scope: 'mcp tools:read',
    });
  });

  it('client credentials with resource give a JWT with the client claims', async () => {
    const t = await as.clientCredentials(undefined, { resource: RESOURCE, scope: 'mcp' });
    expect(decodeJwt(t.access_token)).toMatchObject({
      aud: RESOURCE,
      groups: ['machines'],
      client_id: 'gateway-test',
    });
  });

  it('opaque tokens introspect active until the grant is revoked', async () => {
    const t = await as.mint({ subject: 'bob', format: 'opaque' });
    const introspect = async () => {
      const res = await fetch(as.introspectionUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from('gateway-test:gateway-test-secret').toString('base64')}`,
        },
        body: new URLSearchParams({ token: t.access_token }),
      });
      return res.json();
    };
    expect(await introspect()).toMatchObject({ active: true, sub: 'bob', aud: RESOURCE });
    await as.revokeGrant(t.grantId);
    expect(await introspect()).toEqual({ active: false });
  });

  it('rotates the signing key and keeps the old one published', async () => {
    const before = await as.counters();
    const { kid, kids } = await as.rotateKey();
    expect(kids).toEqual([kid, ...before.kids]);
    const t = await as.mint({ subject: 'carol' });
    expect(JSON.parse(Buffer.from(t.access_token.split('.')[0]!, 'base64url').toString()).kid).toBe(
      kid,
    );
  });
});
