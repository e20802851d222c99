import { GatewayProcess } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { rpc } from '../../support/rpc';
import { ScriptedUpstream } from '../../support/scripted-upstream';

/**
 * A 2025 client's call to a 2026 upstream that answers every round with input_required just
 * inside its callMillis, asking the client for nothing (so the gateway retries at once): the
 * rounds share the upstream's one callMillis (docs/operations.md §11 "Multi round-trip and era
 * bridging"). Each round had a callMillis of its own, and the call lasted 11 times it (10 rounds
 * and the one that gave up). Counted in rounds, not milliseconds: a slower machine only makes
 * fewer of them fit.
 */
const CALL_MILLIS = 3000;
const ROUND_MILLIS = 2400;

describe('a bridged call whose 2026 upstream keeps asking for input ends within its callMillis', () => {
  let up: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    up = await ScriptedUpstream.start({
      era: '2026',
      tools: [{ name: 't', inputSchema: { type: 'object' } }],
      prompts: [{ name: 'p' }],
    });
    const again = () => ({
      delayMs: ROUND_MILLIS,
      result: { resultType: 'input_required', inputRequests: {}, requestState: 'again' },
    });
    up.on('prompts/get', again);
    up.onTool('t', again);
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], {
        upstreams: [upstream('up', up.url, { timeouts: { callMillis: CALL_MILLIS } })],
      }),
      waitReady: true,
    });
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await up?.stop();
  });

  it.each([
    ['an SSE', { accept: 'application/json, text/event-stream' }],
    ['a JSON-only', { accept: 'application/json' }],
  ])(
    'tools/call of %s 2025 client: an isError result after at most two rounds',
    async (_, headers) => {
      const before = up.calls('t').length;
      const answer = await rpc(
        gateway.mcpUrl,
        'tools/call',
        { name: 'up__t', arguments: {} },
        headers,
      );
      expect(answer.json?.result?.isError).toBe(true);
      // the first round, and the second cut at the deadline: never the eleven it took
      expect(up.calls('t').length - before).toBeLessThanOrEqual(2);
    },
    60_000,
  );

  it('prompts/get of a 2025 client: -32603 after at most two rounds', async () => {
    const before = up.rpcs('prompts/get').length;
    const answer = await rpc(gateway.mcpUrl, 'prompts/get', { name: 'up__p' });
    expect(answer.json?.error?.code).toBe(-32603);
    expect(up.rpcs('prompts/get').length - before).toBeLessThanOrEqual(2);
  }, 60_000);
});
