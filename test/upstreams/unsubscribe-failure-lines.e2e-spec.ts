import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess, TEST_SESSION_KEYS } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { openLegacySession, rpc } from '../support/rpc';
import { ScriptedUpstream } from '../support/scripted-upstream';

jest.setTimeout(180_000);

const URIS = Array.from({ length: 50 }, (_, i) => `res://r/${i}`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * docs/operations.md §4 "What outsiders can make the gateway log": "A caller, an upstream MCP
 * server, ... decides how often some things happen. None of them decides how many lines the log
 * gets"; a flood "costs one line a minute per key". A caller that subscribes to URIs of an
 * upstream which refuses `resources/unsubscribe` (it answers -32601, as an upstream without it
 * does) and then ends its session (DELETE /mcp) makes the gateway tell the upstream
 * resources/unsubscribe itself once per URI; the refusals share one throttled line
 * (UpstreamListener.asGateway).
 */
describe('the gateway own resources/unsubscribe refused by an upstream', () => {
  const track = stopAfterEach();

  it('costs at most one line a minute per upstream, however many subscriptions a caller ends', async () => {
    const up = track(
      await ScriptedUpstream.start({
        resources: URIS.map((uri) => ({ uri, name: uri })),
        capabilities: { tools: {}, resources: { subscribe: true } },
      }),
    );
    up.on('resources/subscribe', () => ({ result: {} }));
    up.on('resources/unsubscribe', () => ({
      error: { code: -32601, message: 'Method not found' },
    }));
    const gateway = track(
      await GatewayProcess.start({
        waitReady: true,
        env: { MCP_SESSION_KEYS: TEST_SESSION_KEYS, LOG_LEVEL: 'info' },
        mcp: gatewayConfig([], { upstreams: [upstream('u', up.url)] }),
      }),
    );
    const refusalLines = (): string[] =>
      gateway.stdout
        .split('\n')
        .filter((l) => l.includes('resources/unsubscribe of a subscription'));
    for (let round = 0; round < 4; round++) {
      const headers = await openLegacySession(gateway.mcpUrl, {});
      for (const [i, uri] of URIS.entries())
        expect(
          (await rpc(gateway.mcpUrl, 'resources/subscribe', { uri }, headers, i + 1)).json.result,
        ).toEqual({});
      const ended = await fetch(gateway.mcpUrl, { method: 'DELETE', headers });
      expect(ended.status).toBeLessThan(300);
    }
    // every unsubscribe reached the upstream and was refused
    for (let i = 0; i < 50 && up.rpcs('resources/unsubscribe').length < 200; i++) await sleep(100);
    expect(up.rpcs('resources/unsubscribe')).toHaveLength(200);
    await sleep(500);
    // 200 refusals within seconds: one line, not one per subscription
    expect(refusalLines().length).toBeLessThanOrEqual(1);
  });
});
