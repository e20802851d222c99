import { decodeJwt } from 'jose';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { V1Upstream, type UpstreamRequest } from '../support/mcp-upstreams';
import { TestAuthorizationServer } from '../support/oidc-provider';
import { connectV1 } from '../support/sdk-clients';

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const GATEWAY_AUD = 'http://127.0.0.1/mcp-gateway';
const TX_AUD = 'https://tx.internal.example/mcp';
const GATEWAY_CLIENT = {
  client_id: 'mcp-gateway',
  client_secret: 'gw-secret-4b1e',
  grant_types: ['client_credentials', TOKEN_EXCHANGE],
};
/** The static Authorization of upstream `fh`, from the env only. */
const FH_STATIC = 'Bearer fh-static-0c9d';

type Ids = 'pt' | 'tx' | 'fh';

/** A request of the session's own (not a caller's tools/call): initialize, initialized, pulls, GET, DELETE. */
function isSessionLevel(r: UpstreamRequest): boolean {
  return r.rpcMethod !== 'tools/call';
}

function label(r: UpstreamRequest): string {
  return r.rpcMethod ?? r.httpMethod;
}

function bearerOf(r: UpstreamRequest): string | undefined {
  const value = r.headers.authorization;
  return typeof value === 'string' && value.startsWith('Bearer ') ? value.slice(7) : undefined;
}

/**
 * docs/security.md, "Credentials towards sources": when a v1 SDK upstream loses its 2025
 * session (404 on the session id) during caller A's call, the gateway initializes again with
 * its OWN credential — none for `passthrough`, the client-credentials token for
 * `tokenExchange`, the `static` value — and never A's token, exchanged token or forwarded
 * X-Tenant; the GET stream of the new session and the DELETE at shutdown carry the same, and
 * every caller's own request still carries that caller's credential. Two replicas, each with
 * its own session towards the same upstreams.
 */
describe("session-level traffic towards an upstream carries the gateway's own credential", () => {
  let as: TestAuthorizationServer;
  const ups = {} as Record<Ids, V1Upstream>;
  let replicas: GatewayProcess[] = [];
  const tokens: Record<'alice' | 'bob', string> = { alice: '', bob: '' };

  beforeAll(async () => {
    as = await TestAuthorizationServer.start({
      clients: [GATEWAY_CLIENT],
      resources: { [GATEWAY_AUD]: { scope: 'mcp' }, [TX_AUD]: { scope: 'tx' } },
      defaultResource: GATEWAY_AUD,
    });
    [ups.pt, ups.tx, ups.fh] = await Promise.all([
      V1Upstream.start(),
      V1Upstream.start(),
      V1Upstream.start(),
    ]);
    const mcp = {
      ...gatewayConfig([], {
        upstreams: [
          upstream('pt', ups.pt.url, { authorization: { mode: 'passthrough' } }),
          upstream('tx', ups.tx.url, {
            authorization: {
              mode: 'tokenExchange',
              tokenEndpoint: as.tokenUrl,
              clientId: GATEWAY_CLIENT.client_id,
              clientSecretEnv: 'GW_CLIENT_SECRET',
              audience: TX_AUD,
            },
          }),
          upstream('fh', ups.fh.url, {
            forwardHeaders: ['X-Tenant'],
            authorization: { mode: 'static', valueEnv: 'FH_AUTHORIZATION' },
          }),
        ],
        // a v1 client's idle keep-alive socket must not hold the shutdown test for 30 s
        shutdown: { gracePeriodSeconds: 3 },
      }),
      auth: { mode: 'jwt', issuer: as.issuer, audience: GATEWAY_AUD, jwksUrl: as.jwksUrl },
    };
    const env = { GW_CLIENT_SECRET: GATEWAY_CLIENT.client_secret, FH_AUTHORIZATION: FH_STATIC };
    replicas = await Promise.all([
      GatewayProcess.start({ mcp, env, waitReady: true }),
      GatewayProcess.start({ mcp, env: { ...env, MCP_HTTP_SERVER: 'node' }, waitReady: true }),
    ]);
    for (const who of ['alice', 'bob'] as const)
      tokens[who] = (
        await as.mint({ subject: who, resource: GATEWAY_AUD, scope: 'mcp' })
      ).access_token;
  });

  afterAll(async () => {
    await Promise.all(replicas.map((g) => g.stop()));
    await Promise.all(Object.values(ups).map((u) => u.stop()));
    await as?.stop();
  });

  /** Calls `<id>__repo_search` on a replica as `who`, with the caller's own X-Tenant. */
  async function call(replica: number, id: Ids, who: 'alice' | 'bob'): Promise<void> {
    const client = await connectV1(replicas[replica]!.mcpUrl, {
      authorization: `Bearer ${tokens[who]}`,
      'x-tenant': `tenant-${who}`,
    });
    try {
      const result = await client.callTool({
        name: `${id}__repo_search`,
        arguments: { query: who },
      });
      expect(result.isError).toBeFalsy();
    } finally {
      await client.close();
    }
  }

  /** The gateway's own credential on session-level traffic, checked per upstream. */
  const sessionCredential: Record<Ids, (r: UpstreamRequest) => void> = {
    pt: (r) => expect(r.headers.authorization).toBeUndefined(),
    tx: (r) => {
      const token = bearerOf(r);
      expect(token).toBeDefined();
      const claims = decodeJwt(token!);
      expect(claims).toMatchObject({ aud: TX_AUD, sub: 'mcp-gateway', client_id: 'mcp-gateway' });
      expect(claims.act).toBeUndefined();
    },
    fh: (r) => expect(r.headers.authorization).toBe(FH_STATIC),
  };

  /** The caller's own credential on its tools/call, checked per upstream. */
  const callerCredential: Record<Ids, (r: UpstreamRequest, who: 'alice' | 'bob') => void> = {
    pt: (r, who) => expect(r.headers.authorization).toBe(`Bearer ${tokens[who]}`),
    tx: (r, who) => {
      const token = bearerOf(r)!;
      expect(token).not.toBe(tokens[who]);
      expect(decodeJwt(token)).toMatchObject({
        aud: TX_AUD,
        sub: who,
        act: { sub: 'mcp-gateway' },
      });
    },
    fh: (r, who) => {
      expect(r.headers.authorization).toBe(FH_STATIC);
      expect(r.headers['x-tenant']).toBe(`tenant-${who}`);
    },
  };

  describe.each(['pt', 'tx', 'fh'] as const)('upstream %s', (id) => {
    it("re-initializes a session lost during alice's call without alice's credential; later callers keep their own", async () => {
      const up = ups[id];
      await call(0, id, 'alice');
      await call(1, id, 'alice');
      const before = up.issuedSessions.length;
      await up.expireSessions();

      // alice's call meets the 404 on each replica; the gateway initializes again and repeats it
      await call(0, id, 'alice');
      await call(1, id, 'alice');
      expect(up.issuedSessions.length).toBe(before + 2);
      const renewed = new Set(up.issuedSessions.slice(before));
      expect(up.requests.filter((r) => r.status === 404).length).toBeGreaterThanOrEqual(2);
      // the new sessions' GET streams are open
      await waitFor(
        () =>
          [...renewed].every((sid) =>
            up.requests.some((r) => r.httpMethod === 'GET' && r.headers['mcp-session-id'] === sid),
          ),
        15_000,
      );
      // bob, later, on the renewed sessions
      await call(0, id, 'bob');
      await call(1, id, 'bob');

      const session = up.requests.filter(isSessionLevel);
      const onRenewed = session.filter(
        (r) =>
          r.rpcMethod === 'initialize' || renewed.has(String(r.headers['mcp-session-id'] ?? '')),
      );
      expect(onRenewed.map(label)).toEqual(
        expect.arrayContaining(['initialize', 'notifications/initialized', 'GET']),
      );
      expect(session.filter((r) => r.rpcMethod === 'initialize').length).toBe(
        up.issuedSessions.length,
      );
      for (const r of session) {
        sessionCredential[id](r);
        expect(r.headers['x-tenant']).toBeUndefined();
      }
      const calls = up.requestsFor('tools/call');
      expect(calls.length).toBeGreaterThanOrEqual(8);
      for (const r of calls) {
        const who = (r.body as { params: { arguments: { query: 'alice' | 'bob' } } }).params
          .arguments.query;
        callerCredential[id](r, who);
      }
    });
  });

  it("at shutdown, every replica's DELETE of its sessions carries the gateway's own credential", async () => {
    await Promise.all(replicas.map((g) => g.stop()));
    for (const id of ['pt', 'tx', 'fh'] as const) {
      const deletes = ups[id].requests.filter((r) => r.httpMethod === 'DELETE');
      expect(deletes.length).toBe(2);
      for (const r of deletes) {
        expect(ups[id].issuedSessions).toContain(r.headers['mcp-session-id']);
        sessionCredential[id](r);
        expect(r.headers['x-tenant']).toBeUndefined();
      }
    }
  });
});
