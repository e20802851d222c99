import type { GatewayConfig } from '@app/config';
import { ResourceServer } from '@app/identity';
import { AdminAuthenticator } from './admin-authenticator';

const ADMIN = 's3cret-admin-token';

function resourceServer(): ResourceServer {
  return new ResourceServer({
    profile: 'local',
    admin: { token: ADMIN, scope: 'mcp:admin' },
    mcp: { auth: { mode: 'none', requiredScopes: [], algorithms: [], tokenTypes: [] } },
  } as unknown as GatewayConfig);
}

/**
 * The static admin token on /mcp (mcp.auth none): every form /admin accepts is refused, and
 * so is any Authorization line that carries it, since passthrough sources get the header as
 * it is (docs/security.md, "The admin credential").
 */
describe('the static admin token on /mcp', () => {
  const admin = new AdminAuthenticator({ admin: { token: ADMIN } } as unknown as GatewayConfig);

  it.each([
    `Bearer ${ADMIN}`,
    `bearer ${ADMIN}`,
    `BEARER   ${ADMIN}`,
    `Bearer\t${ADMIN}`,
    `Bearer ${ADMIN}\t `,
  ])('%j: admin on /admin, refused on /mcp', async (header) => {
    expect((await admin.authenticate(header)).kind).toBe('admin');
    const rs = resourceServer();
    expect(await rs.authenticate(header)).toMatchObject({ kind: 'refused', status: 401 });
    expect(rs.authenticateRemembered(header)).toMatchObject({ kind: 'refused', status: 401 });
  });

  it.each([
    [`Token ${ADMIN}`],
    [`Basic ${Buffer.from(`x:${ADMIN}`).toString('utf8')}`],
    [[`Bearer other-token`, `Bearer ${ADMIN}`]],
  ])('%j: carries it elsewhere in the header, refused on /mcp', async (header) => {
    const rs = resourceServer();
    expect(await rs.authenticate(header)).toMatchObject({ kind: 'refused', status: 401 });
  });

  it('another token, or none, is anonymous', async () => {
    const rs = resourceServer();
    expect(await rs.authenticate('Bearer someone-else')).toEqual({ kind: 'anonymous' });
    expect(await rs.authenticate(undefined)).toEqual({ kind: 'anonymous' });
    expect(rs.checksRequests).toBe(true);
  });
});
