import { GatewayProcess } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { modernRequest } from '../../support/modern-rpc';
import { rpc } from '../../support/rpc';
import { ScriptedUpstream, upTool } from '../../support/scripted-upstream';

/**
 * MCP 2026-07-28 "ResultType": a client "MUST treat any value it doesn't recognise as invalid",
 * and toward an upstream the gateway is that client (libs/wire result-types.ts). An answer with
 * an unknown `resultType` is -32603 to a client of either era, never a success (a 2025 client
 * would take `{"resultType":"bogus",…}` for one); a list page with any resultType but
 * `complete` fails the pull, and the last good list stays. A 2025 upstream's `resultType` is a
 * member of its own, no result type (legacy-result-type.e2e-spec.ts).
 */
describe('an upstream answering with a resultType the gateway does not know', () => {
  let neu: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    neu = await ScriptedUpstream.start({ era: '2026', tools: [upTool('weird'), upTool('fine')] });
    neu.onTool('weird', () => ({
      result: { resultType: 'bogus', content: [{ type: 'text', text: 'weird' }] },
    }));
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], {
        upstreams: [upstream('neu', neu.url, { protocol: '2026-07-28' })],
      }),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await neu?.stop();
  });

  it.each([
    ['neu__weird', '2025', '"bogus"'],
    ['neu__weird', '2026', '"bogus"'],
  ])('%s to a %s client is -32603 naming the resultType', async (name, era, shown) => {
    const params = { name, arguments: {} };
    const answer =
      era === '2025'
        ? await rpc(gateway.mcpUrl, 'tools/call', params)
        : await modernRequest(gateway.mcpUrl, 'tools/call', params, {});
    expect(answer.json.result).toBeUndefined();
    expect(answer.json.error.code).toBe(-32603);
    expect(answer.json.error.message).toContain(
      `with resultType ${shown}, which the gateway does not know`,
    );
  });

  it('a tools/list page with resultType input_required fails the pull; the last good list stays', async () => {
    neu.on('tools/list', () => ({
      result: {
        resultType: 'input_required',
        inputRequests: {},
        requestState: 's',
        tools: [upTool('planted')],
      },
    }));
    const before = neu.rpcs('tools/list').length;
    // a call of a tool the upstream does not list refreshes it at once (contract §8)
    await rpc(gateway.mcpUrl, 'tools/call', { name: 'neu__missing', arguments: {} });
    expect(neu.rpcs('tools/list').length).toBeGreaterThan(before);
    const view = (await fetch(`${gateway.managementUrl}/actuator/upstreams`).then((r) =>
      r.json(),
    )) as { upstreams: { id: string; status: string; lastErrorType: string }[] };
    expect(view.upstreams.find((u) => u.id === 'neu')).toMatchObject({
      status: 'degraded',
      lastErrorType: 'UpstreamBadAnswerError',
    });
    const list = await rpc(gateway.mcpUrl, 'tools/list');
    const names = (list.json.result.tools as { name: string }[]).map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['neu__weird', 'neu__fine']));
    expect(names).not.toContain('neu__planted');
  });
});
