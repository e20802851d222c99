import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { GatewayProcess, TEST_SESSION_KEYS, waitFor } from '../support/gateway-process';
import { jwtAuthConfig, TestAuthorizationServer } from '../support/oidc-provider';
import { deleteKeys, redisClient, SHARED_REDIS_URL, uniqueKeyPrefix } from '../support/redis';
import { rpc, type RawAnswer } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

const RESOURCE = 'https://gateway.test/mcp';
/** MAX_SESSION_SELECTIONS (libs/mcp/src/search/tool-selections.ts), and a caller's tenth. */
const CALLER_SHARE = 10_000 / 10;
const now = (): number => Math.floor(Date.now() / 1000);

function answerOf(answer: RawAnswer): any {
  const messages = [...answer.text.matchAll(/^data: (.*)$/gm)].map((m) =>
    JSON.parse(m[1] as string),
  );
  return messages.find((m) => 'result' in m || 'error' in m) ?? answer.json;
}

/**
 * 2025 sessions' own values (tool selections, docs/operations.md §16 "Tool selection"; log
 * levels, §10 "Logging") with `mcp.auth` on: one caller holds at most a tenth of a replica's,
 * its own oldest forgotten first — in memory and, with Redis, in Redis too; a token that names
 * no one (no `sub`, no `client_id`) opens no session at all (docs/security.md "Who is a
 * caller"), so no such tokens share a share. Sessions cost nothing to open, so without the share
 * one caller could push every other caller's selection out, or fill the Redis all replicas
 * share with keys that live a day.
 */
describe('session values are shared out per caller', () => {
  const keyPrefix = uniqueKeyPrefix();
  let as: TestAuthorizationServer;
  let claims: TestToolService;
  let inMemory: GatewayProcess;
  let withRedis: GatewayProcess;

  beforeAll(async () => {
    as = await TestAuthorizationServer.start({
      resources: { [RESOURCE]: { scope: 'mcp' } },
      defaultResource: RESOURCE,
    });
    claims = await TestToolService.start(
      manifest('claims', [
        tool({ name: 'claims.open_claim', description: 'Opens a claim.' }),
        tool({ name: 'claims.close_claim', description: 'Closes a claim.' }),
      ]),
    );
    const mcp = (redis: object) => ({
      ...gatewayConfig([bundle('claims', claims, 'claims.')], redis),
      toolSearch: { enabled: true, select: true },
      auth: jwtAuthConfig(as, RESOURCE),
    });
    [inMemory, withRedis] = await Promise.all([
      GatewayProcess.start({
        mcp: mcp({}),
        env: { MCP_SESSION_KEYS: TEST_SESSION_KEYS },
        waitReady: true,
      }),
      GatewayProcess.start({
        mcp: mcp({ redis: { keyPrefix } }),
        env: { MCP_SESSION_KEYS: TEST_SESSION_KEYS, REDIS_URL: SHARED_REDIS_URL },
        waitReady: true,
      }),
    ]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([inMemory?.stop(), withRedis?.stop()]);
    await Promise.all([as?.stop(), claims?.stop()]);
    const redis = redisClient();
    await deleteKeys(redis, keyPrefix);
    redis.disconnect();
  });

  async function session(gateway: GatewayProcess, token: string): Promise<Record<string, string>> {
    const init = await rpc(
      gateway.mcpUrl,
      'initialize',
      { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      { authorization: `Bearer ${token}` },
    );
    const id = init.headers.get('mcp-session-id');
    if (id === null) throw new Error(`no session: ${init.status} ${init.text}`);
    return {
      'mcp-session-id': id,
      'mcp-protocol-version': '2025-11-25',
      authorization: `Bearer ${token}`,
    };
  }

  async function select(
    gateway: GatewayProcess,
    headers: Record<string, string>,
    names: string[],
  ): Promise<any> {
    return answerOf(
      await rpc(
        gateway.mcpUrl,
        'tools/call',
        { name: 'gateway__select_tools', arguments: { names } },
        headers,
      ),
    );
  }

  async function listed(gateway: GatewayProcess, headers: Record<string, string>) {
    const list = answerOf(await rpc(gateway.mcpUrl, 'tools/list', {}, headers));
    return (list.result.tools as { name: string }[]).map((t) => t.name);
  }

  /** `count` sessions of this token, each selecting one tool. */
  async function flood(gateway: GatewayProcess, token: string, count: number): Promise<void> {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < count) {
        next++;
        const answer = await select(gateway, await session(gateway, token), ['claims.close_claim']);
        if (answer?.result?.structuredContent?.selected?.[0] !== 'claims.close_claim')
          throw new Error(`selection failed: ${JSON.stringify(answer)}`);
      }
    };
    await Promise.all(Array.from({ length: 32 }, worker));
  }

  it("a caller's sessions push out only its own oldest values past its share, never another caller's; a token naming no one opens no session", async () => {
    const alice = await session(inMemory, (await as.mint({ subject: 'alice' })).access_token);
    const chosen = await select(inMemory, alice, ['claims.open_claim']);
    expect(chosen.result.structuredContent.selected).toEqual(['claims.open_claim']);
    // a correctly signed token whose identity the gateway cannot name: no sub, no client_id
    const unnamed = await as.sign({
      iss: as.issuer,
      aud: RESOURCE,
      scope: 'mcp',
      iat: now(),
      exp: now() + 3600,
    });
    await expect(session(inMemory, unnamed)).rejects.toThrow(/no session: 401/);
    const flooder = (await as.mint({ subject: 'flooder' })).access_token;
    const first = await session(inMemory, flooder);
    await select(inMemory, first, ['claims.open_claim']);
    expect(await listed(inMemory, first)).toContain('claims.open_claim');
    // past its share (a tenth of the replica's), its own oldest goes
    await flood(inMemory, flooder, CALLER_SHARE);
    expect(await listed(inMemory, first)).not.toContain('claims.open_claim');
    expect(await listed(inMemory, alice)).toContain('claims.open_claim');
  }, 300_000);

  it('one caller with many sessions keeps at most its share of selections in Redis', async () => {
    const mallory = (await as.mint({ subject: 'mallory' })).access_token;
    await flood(withRedis, mallory, CALLER_SHARE + 200);
    const redis = redisClient();
    try {
      // the removal of a value pushed out is best effort, after the answer: polled
      let keys: string[] = [];
      await waitFor(async () => {
        keys = await redis.keys(`${keyPrefix}:*tool-selection:*`);
        return keys.length <= CALLER_SHARE;
      }, 10_000).catch(() => undefined);
      expect(keys.length).toBe(CALLER_SHARE);
    } finally {
      redis.disconnect();
    }
  }, 300_000);
});
