import { GatewayProcess, waitFor } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { rpc, type RawAnswer } from '../../support/rpc';
import { modernRequest } from '../../support/modern-rpc';
import { ScriptedUpstream, upTool } from '../../support/scripted-upstream';

jest.setTimeout(60_000);

/**
 * docs/operations.md §10 "Relaying": while a call runs, the upstream's `notifications/progress`
 * (WITH THE CLIENT'S OWN TOKEN) and `notifications/message` reach the client on the call's SSE
 * answer. upstream-failures B14: "only on its own call; none without a token".
 *
 * A hostile (or confused, session-sharing) upstream puts on one caller's call answer a progress
 * notification for another token (e.g. another caller's call on the shared upstream session), a
 * resources/updated for a URI nobody subscribed to, a tools/list_changed and a
 * notifications/cancelled. The gateway relays all of them verbatim to the caller, both eras,
 * from 2025 and 2026 upstreams (UpstreamRouter.relay forwards every non-request message).
 */
const FOREIGN = [
  {
    jsonrpc: '2.0',
    method: 'notifications/progress',
    params: { progressToken: 'another-callers-token', progress: 1 },
  },
  {
    jsonrpc: '2.0',
    method: 'notifications/resources/updated',
    params: { uri: 'file:///nobody-subscribed' },
  },
  { jsonrpc: '2.0', method: 'notifications/tools/list_changed' },
  { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'x' } },
];

/** The JSON-RPC messages of an SSE (or JSON) answer. */
function messagesOf(answer: RawAnswer): any[] {
  const data = [...answer.text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!));
  return data.length > 0 ? data : [answer.json];
}

describe("notifications an upstream puts on a call answer that are not the call's own", () => {
  let leg: ScriptedUpstream;
  let mod: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    leg = await ScriptedUpstream.start({ tools: [upTool('noisy')], sessionId: 'L1' });
    mod = await ScriptedUpstream.start({ era: '2026', tools: [upTool('noisy')] });
    leg.onTool('noisy', () => ({
      events: FOREIGN,
      result: { content: [{ type: 'text', text: 'ok' }] },
    }));
    mod.onTool('noisy', () => ({
      events: FOREIGN.slice(0, 2),
      result: { content: [{ type: 'text', text: 'ok' }], resultType: 'complete' },
    }));
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], { upstreams: [upstream('leg', leg.url), upstream('mod', mod.url)] }),
    });
    await waitFor(async () => {
      const view = (await (
        await fetch(`${gateway.managementUrl}/actuator/upstreams`)
      ).json()) as any;
      return view.upstreams.every((u: any) => u.lastAttemptAt !== null);
    }, 20_000);
  });
  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([leg?.stop(), mod?.stop()]);
  });

  it.each([
    ['leg__noisy', '2025'],
    ['mod__noisy', '2025'],
    ['leg__noisy', '2026'],
    ['mod__noisy', '2026'],
  ])(
    '%s called by a %s client with progressToken "mine": only its own progress reaches it',
    async (name, era) => {
      const params = { name, arguments: {}, _meta: { progressToken: 'mine' } };
      const answer =
        era === '2025'
          ? await rpc(gateway.mcpUrl, 'tools/call', params)
          : await modernRequest(gateway.mcpUrl, 'tools/call', params, {});
      expect(answer.status).toBe(200);
      const messages = messagesOf(answer);
      expect(messages.at(-1)).toMatchObject({ id: 1, result: { content: [{ text: 'ok' }] } });
      const notifications = messages.filter((m) => m.id === undefined);
      // none of the upstream's foreign notifications is the caller's: no other token's progress,
      // no resources/updated for a URI it never subscribed to, no list_changed or cancelled on a call
      expect(notifications).toEqual([]);
    },
  );
});
