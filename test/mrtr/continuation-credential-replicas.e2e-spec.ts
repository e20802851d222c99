import { GatewayProcess, TEST_SESSION_KEYS } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { V1Upstream } from '../support/mcp-upstreams';
import { TestAuthorizationServer } from '../support/oidc-provider';
import { modernRequest } from '../support/modern-rpc';
import { SHARED_REDIS_URL, deleteKeys, redisClient, uniqueKeyPrefix } from '../support/redis';

const RESOURCE = 'https://gateway.test/mcp';
const CAPS = { elicitation: { form: {} } };

/**
 * docs/security.md "Answers to relayed requests": "It never goes with an expired token: when
 * the call's own expired while it waited and the answer came through another replica (no token
 * crosses Redis), the call ends with an error that says so, and nothing is sent." Two replicas
 * on one Redis, a 2026 client, a 2025 `passthrough` upstream whose tool asks for input: T1
 * (3 s) starts the call on A, the retry with the answer comes to B with a fresh T2 after T1
 * expired. Right: the client gets a prompt error naming the expired token, and the upstream
 * receives nothing carrying T1 after it expired (no answer, no notifications/cancelled, no
 * error to its elicitation request).
 */
describe('a parked call whose token expired, answered through another replica', () => {
  const redis = redisClient();
  const keyPrefix = uniqueKeyPrefix();
  let as: TestAuthorizationServer;
  let repo: V1Upstream;
  let a: GatewayProcess;
  let b: GatewayProcess;

  beforeAll(async () => {
    as = await TestAuthorizationServer.start({
      resources: { [RESOURCE]: { scope: 'mcp' } },
      defaultResource: RESOURCE,
    });
    repo = await V1Upstream.start();
    const spawn = () =>
      GatewayProcess.spawn({
        mcp: {
          ...gatewayConfig([], {
            redis: { keyPrefix },
            upstreams: [
              upstream('repo', repo.url, {
                authorization: { mode: 'passthrough' },
                timeouts: { callMillis: 30_000 },
              }),
            ],
            shutdown: { gracePeriodSeconds: 3 },
          }),
          http: { modernEra: true },
          auth: {
            mode: 'jwt',
            issuer: as.issuer,
            audience: RESOURCE,
            jwksUrl: as.jwksUrl,
            algorithms: ['ES256'],
          },
        },
        env: { MCP_SESSION_KEYS: TEST_SESSION_KEYS, REDIS_URL: SHARED_REDIS_URL },
      });
    a = spawn();
    b = spawn();
    await Promise.all([a.waitForListening(90_000), b.waitForListening(90_000)]);
    await Promise.all([a.waitForReady(90_000), b.waitForReady(90_000)]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await Promise.all([as?.stop(), repo?.stop()]);
    await deleteKeys(redis, keyPrefix);
    redis.disconnect();
  });

  it('ends the call with an error that says so, and sends the upstream nothing with the expired token', async () => {
    const t1 = (await as.mint({ subject: 'alice', ttlSeconds: 3 })).access_token;
    const t2 = (await as.mint({ subject: 'alice' })).access_token;
    const args = { question: 'Ship it?' };
    const first = await modernRequest(
      a.mcpUrl,
      'tools/call',
      { name: 'repo__confirm', arguments: args },
      CAPS,
      t1,
    );
    const result = first.json.result;
    expect(result.resultType).toBe('input_required');
    const [key] = Object.keys(result.inputRequests);
    await new Promise((r) => setTimeout(r, 4500));
    const mark = repo.requests.length;
    const started = Date.now();
    const retry = await modernRequest(
      b.mcpUrl,
      'tools/call',
      {
        name: 'repo__confirm',
        arguments: args,
        requestState: result.requestState,
        inputResponses: { [key!]: { action: 'accept', content: { approve: true } } },
      },
      CAPS,
      t2,
    );
    const tookMs = Date.now() - started;
    await new Promise((r) => setTimeout(r, 1500));
    const after = repo.requests.slice(mark).map((r) => ({
      m: r.rpcMethod ?? (r.httpMethod === 'POST' ? 'response' : r.httpMethod),
      t1: r.headers.authorization === `Bearer ${t1}`,
    }));
    expect(tookMs).toBeLessThan(10_000);
    expect(JSON.stringify(retry.json)).toMatch(/expired/i);
    expect(after.filter((r) => r.t1)).toEqual([]);
  }, 60_000);
});
