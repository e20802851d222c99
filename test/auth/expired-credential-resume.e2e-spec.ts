import { decodeJwt } from 'jose';
import { GatewayProcess } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { V1Upstream } from '../support/mcp-upstreams';
import { TestAuthorizationServer } from '../support/oidc-provider';
import { connectV1 } from '../support/sdk-clients';

const GATEWAY_AUD = 'http://127.0.0.1/mcp-gateway';

/**
 * A caller's token that expires while its call's SSE answer is resumed (a GET with
 * Last-Event-ID, MCP 2025-11-25 "Resumability and Redelivery") is not sent on that GET to a
 * passthrough upstream: what the gateway sends again for a request never goes with an expired
 * credential (docs/security.md "Answers to relayed requests"), as notifications/cancelled and
 * relayed answers already did not. The call is timed to start ~150 ms before the token's `exp`;
 * a machine too slow for that window sends no GET with the token before it either, so the
 * test can only pass there, never fail on a sound build.
 */
describe('an expired caller token on the resume GET of a call', () => {
  let as: TestAuthorizationServer;
  let v1: V1Upstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    as = await TestAuthorizationServer.start({
      resources: { [GATEWAY_AUD]: { scope: 'mcp' } },
      defaultResource: GATEWAY_AUD,
    });
    v1 = await V1Upstream.start({}, { resumable: true });
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([], {
          upstreams: [upstream('v1', v1.url, { authorization: { mode: 'passthrough' } })],
          shutdown: { gracePeriodSeconds: 3 },
        }),
        auth: {
          mode: 'jwt',
          issuer: as.issuer,
          audience: GATEWAY_AUD,
          jwksUrl: as.jwksUrl,
          clockSkewSeconds: 0,
        },
      },
      waitReady: true,
    });
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await v1?.stop();
    await as?.stop();
  });

  it('no resume GET reaches the upstream with the token after its exp', async () => {
    const token = (
      await as.mint({ subject: 'alice', resource: GATEWAY_AUD, scope: 'mcp', ttlSeconds: 6 })
    ).access_token;
    const exp = (decodeJwt(token).exp ?? 0) * 1000;
    const client = await connectV1(gateway.mcpUrl, { authorization: `Bearer ${token}` });
    await new Promise((r) => setTimeout(r, Math.max(0, exp - Date.now() - 150)));
    // when each request reached the upstream
    const seenAt = new Map<object, number>();
    const push = v1.requests.push.bind(v1.requests);
    v1.requests.push = (...items) => {
      for (const item of items) seenAt.set(item, Date.now());
      return push(...items);
    };
    await client.callTool({ name: 'v1__poll-task', arguments: {} }).catch(() => undefined);
    const late = v1.requests.filter(
      (r) =>
        r.httpMethod === 'GET' &&
        r.headers['last-event-id'] !== undefined &&
        r.headers.authorization === `Bearer ${token}` &&
        (seenAt.get(r) ?? 0) >= exp,
    );
    expect(late).toEqual([]);
  }, 60_000);
});
