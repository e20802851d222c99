import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Redis from 'ioredis';
import { gatewayConfig, upstream } from '../support/fixtures';
import { V2Upstream } from '../support/mcp-upstreams';
import { GatewayProcess } from '../support/gateway-process';
import { SHARED_REDIS_URL, deleteKeys, redisClient, uniqueKeyPrefix } from '../support/redis';
import { ADMIN_TOKEN, admin } from './admin-support';

/** An authorization server that issues a token naming the audience (resource) it was asked for. */
async function fakeAuthorizationServer(): Promise<{
  server: Server;
  url: string;
  asked: string[];
}> {
  const asked: string[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      const form = new URLSearchParams(raw);
      const aud = form.get('resource') ?? form.get('audience') ?? '';
      asked.push(`${form.get('grant_type')} ${aud}`);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          access_token: `token-for:${aud}`,
          token_type: 'Bearer',
          expires_in: 300,
          issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/oauth2/token`,
    asked,
  };
}

/**
 * docs/security.md "Runtime registrations": a registration may not ask for "the `audience` of an
 * upstream registered before it: **409** naming that upstream (the first registration keeps it,
 * on every replica)"; docs/operations.md §15 409: "the tokenExchange audience of an upstream
 * registered before it, named in the problem, also when another replica took it a moment before".
 *
 * A replica that has not read the first registration yet checks the second against its own view
 * only; the store's CREATE script takes the audience once, as the id and the prefix, so the
 * second is refused there, and the registrant's server never receives a token issued for the
 * first registration's audience.
 */
describe('the tokenExchange audience of an earlier registration, POSTed on a replica that has not read it', () => {
  const keyPrefix = uniqueKeyPrefix();
  const redis: Redis = redisClient(SHARED_REDIS_URL);
  let as: Awaited<ReturnType<typeof fakeAuthorizationServer>>;
  let calc: V2Upstream;
  let owner: V2Upstream;
  let thief: V2Upstream;
  let a: GatewayProcess;
  let b: GatewayProcess;

  const exchange = (audience: string) => ({
    mode: 'tokenExchange',
    tokenEndpoint: as.url,
    clientId: 'gw',
    clientSecretEnv: 'MCP_UPSTREAM_SECRET_GW',
    audience,
  });

  const replica = async (): Promise<GatewayProcess> => {
    const g = GatewayProcess.spawn({
      mcp: gatewayConfig([], {
        redis: { keyPrefix },
        // the store is read every 30 s
        registry: { refreshIntervalSeconds: 60 },
        // the configured source makes the token endpoint one the configuration trusts
        upstreams: [
          upstream('calc', calc.url, { authorization: exchange('https://calc.example/mcp') }),
        ],
      }),
      env: {
        MCP_ADMIN_TOKEN: ADMIN_TOKEN,
        REDIS_URL: SHARED_REDIS_URL,
        MCP_UPSTREAM_SECRET_GW: 'client-secret-1',
      },
    });
    await g.waitForListening(60_000);
    return g;
  };

  beforeAll(async () => {
    as = await fakeAuthorizationServer();
    [calc, owner, thief] = await Promise.all([
      V2Upstream.start(),
      V2Upstream.start(),
      V2Upstream.start(),
    ]);
    [a, b] = await Promise.all([replica(), replica()]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await Promise.all([calc?.stop(), owner?.stop(), thief?.stop()]);
    await new Promise((r) => as?.server.close(() => r(undefined)));
    await deleteKeys(redis, keyPrefix);
    redis.disconnect();
  });

  it('the second registration is 409 and the thief never receives a token for the owner audience', async () => {
    // sanity: on one replica the rule holds
    const register = () =>
      admin(a, 'POST', '/admin/upstreams', {
        id: 'owner',
        url: owner.url,
        authorization: exchange('https://owner.example/mcp'),
      });
    // 503 until the replica's Redis connection is up (a loaded machine): a client retries it
    let first = await register();
    for (const until = Date.now() + 30_000; first.status === 503 && Date.now() < until;) {
      await new Promise((r) => setTimeout(r, 200));
      first = await register();
    }
    expect(first.status).toBe(202);
    const sameReplica = await admin(a, 'POST', '/admin/upstreams', {
      id: 'thief0',
      url: thief.url,
      authorization: exchange('https://owner.example/mcp'),
    });
    expect(sameReplica.status).toBe(409);

    // b has not read the store since it started (it reads every 30 s)
    const second = await admin(b, 'POST', '/admin/upstreams', {
      id: 'thief',
      url: thief.url,
      authorization: exchange('https://owner.example/mcp'),
    });
    // give b's refresh round the time to pull what it accepted
    await new Promise((r) => setTimeout(r, 4000));
    const tokensAtThief = thief.requests
      .map((r) => String(r.headers.authorization ?? ''))
      .filter((h) => h.includes('owner.example'));
    expect({
      status: second.status,
      tokensForOwnerAudienceAtThief: [...new Set(tokensAtThief)],
    }).toEqual({ status: 409, tokensForOwnerAudienceAtThief: [] });
    expect(second.body.problems).toEqual([
      expect.stringContaining(
        'authorization.audience: is the audience of registered upstream "owner"',
      ),
    ]);
  });
});
