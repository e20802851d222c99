import { gatewayConfig, upstream } from '../support/fixtures';
import { GatewayProcess, TEST_SESSION_KEYS } from '../support/gateway-process';
import {
  deleteKeys,
  freePort,
  redisClient,
  SHARED_REDIS_URL,
  uniqueKeyPrefix,
} from '../support/redis';
import { rpc } from '../support/rpc';
import { ScriptedUpstream } from '../support/scripted-upstream';

const LEVELS = ['debug', 'info', 'error'] as const;

/** The levels of the notifications/message an SSE answer relayed, in order. */
function relayedLevels(text: string): string[] {
  return [...text.matchAll(/^data: (.*)$/gm)]
    .map((m) => JSON.parse(m[1] as string) as { method?: string; params?: { level?: string } })
    .filter((m) => m.method === 'notifications/message')
    .map((m) => m.params?.level ?? '');
}

/**
 * A 2025 session's `logging/setLevel` holds on every replica when Redis is configured
 * (docs/operations.md §10 "Logging"): set on replica A, a call that reaches replica B relays only
 * the upstream's log messages at or above that level. Without Redis it holds on A only (B relays
 * every level, as documented); with a Redis that cannot be reached, setLevel says so.
 */
describe("a 2025 session's log level across replicas", () => {
  let chatty: ScriptedUpstream;
  const keyPrefix = uniqueKeyPrefix();
  const started: GatewayProcess[] = [];

  beforeAll(async () => {
    chatty = await ScriptedUpstream.start({
      tools: [{ name: 'chatty', inputSchema: { type: 'object' } }],
      capabilities: { tools: {}, logging: {} },
    });
    chatty.onTool('chatty', () => ({
      sse: true,
      events: LEVELS.map((level) => ({
        jsonrpc: '2.0',
        method: 'notifications/message',
        params: { level, data: `a ${level} line` },
      })),
      result: { content: [{ type: 'text', text: 'done' }] },
    }));
  });

  afterAll(async () => {
    await Promise.all(started.map((g) => g.stop()));
    await chatty?.stop();
    const redis = redisClient();
    await deleteKeys(redis, keyPrefix);
    redis.disconnect();
  });

  async function replica(redisUrl?: string): Promise<GatewayProcess> {
    const gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([], { upstreams: [upstream('chatty', chatty.url)] }),
        redis: { keyPrefix, commandTimeoutMillis: 300, connectTimeoutMillis: 300 },
      },
      env: { MCP_SESSION_KEYS: TEST_SESSION_KEYS, REDIS_URL: redisUrl },
      waitReady: true,
    });
    started.push(gateway);
    return gateway;
  }

  async function openSession(gateway: GatewayProcess): Promise<Record<string, string>> {
    const init = await rpc(gateway.mcpUrl, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'log-levels', version: '1' },
    });
    const session = {
      'mcp-session-id': init.headers.get('mcp-session-id') as string,
      'mcp-protocol-version': '2025-11-25',
    };
    await rpc(gateway.mcpUrl, 'notifications/initialized', undefined, session);
    return session;
  }

  const callChatty = async (gateway: GatewayProcess, session: Record<string, string>) => {
    const answer = await rpc(gateway.mcpUrl, 'tools/call', { name: 'chatty__chatty' }, session);
    expect(answer.text).toContain('done');
    return relayedLevels(answer.text);
  };

  it('with Redis: set on replica A, honoured on replica B (and on A)', async () => {
    const [a, b] = [await replica(SHARED_REDIS_URL), await replica(SHARED_REDIS_URL)];
    const session = await openSession(a);
    expect(await callChatty(b, session)).toEqual(['debug', 'info', 'error']);
    const set = await rpc(a.mcpUrl, 'logging/setLevel', { level: 'error' }, session);
    expect(set.json).toMatchObject({ result: {} });
    // B read "no level" for this session on the call before: it asks Redis again once that
    // answer is a second old (docs/operations.md §10 "Logging"); waiting longer only helps
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await callChatty(b, session)).toEqual(['error']);
    expect(await callChatty(a, session)).toEqual(['error']);
    // a second session is not touched by the first one's level
    expect(await callChatty(b, await openSession(a))).toEqual(['debug', 'info', 'error']);
  });

  it('without Redis: the level holds on the replica that was told only', async () => {
    const [a, b] = [await replica(), await replica()];
    const session = await openSession(a);
    await rpc(a.mcpUrl, 'logging/setLevel', { level: 'error' }, session);
    expect(await callChatty(a, session)).toEqual(['error']);
    expect(await callChatty(b, session)).toEqual(['debug', 'info', 'error']);
  });

  it('with a Redis that cannot be reached: setLevel is an error that says the level holds on this replica only', async () => {
    const nowhere = `redis://127.0.0.1:${await freePort()}`;
    const a = await replica(nowhere);
    const session = await openSession(a);
    const set = await rpc(a.mcpUrl, 'logging/setLevel', { level: 'info' }, session);
    expect(set.json.error).toMatchObject({ code: -32603 });
    expect(set.json.error.message).toMatch(
      /applies on this replica only: Redis could not store it/,
    );
    expect(await callChatty(a, session)).toEqual(['info', 'error']);
  });
});
