import { gatewayConfig, upstream } from '../support/fixtures';
import { GatewayProcess, TEST_SESSION_KEYS, waitFor } from '../support/gateway-process';
import { V1Upstream } from '../support/mcp-upstreams';
import { jwtAuthConfig, TestAuthorizationServer } from '../support/oidc-provider';
import { postRaw, rpc } from '../support/rpc';

const RESOURCE = 'https://gateway.test/mcp';
const V = '2026-07-28';
/** execution.maxConnectionsPerOrigin's default, half of it for parked calls, an eighth per caller. */
const PER_CALLER = 256 / 2 / 8;

/**
 * docs/operations.md §11 "Multi round-trip": a 2026 client's call to a 2025 upstream that asks the
 * client something mid-call is parked — the client gets `input_required` at once while the
 * gateway keeps the upstream's answer stream (one of its connections) open for
 * `session.pendingInputMillis`. Parked calls hold at most half of an upstream's connections, and
 * one caller at most an eighth of that (16 by default): past it a call is ended with -32603
 * saying why, so one caller that fires calls and never answers cannot hold every connection of
 * the upstream and lock the other callers out (docs/security.md, "no caller can lock the others
 * out").
 */
describe('parked calls (2026 client, 2025 upstream asking mid-call) are bounded per caller', () => {
  let as: TestAuthorizationServer;
  let repo: V1Upstream;
  let gateway: GatewayProcess;
  let alice: string;
  let bob: string;

  beforeAll(async () => {
    as = await TestAuthorizationServer.start({
      resources: { [RESOURCE]: { scope: 'mcp' } },
      defaultResource: RESOURCE,
    });
    repo = await V1Upstream.start({});
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([], {
          upstreams: [upstream('repo', repo.url, { timeouts: { callMillis: 4000 } })],
          shutdown: { gracePeriodSeconds: 2 },
        }),
        // parked calls nobody comes back for are ended after 3 s: alice's share is hers again
        session: { pendingInputMillis: 3000 },
        http: { modernEra: true },
        auth: jwtAuthConfig(as, RESOURCE),
      },
      env: { MCP_SESSION_KEYS: TEST_SESSION_KEYS },
      waitReady: true,
    });
    alice = (await as.mint({ subject: 'alice' })).access_token;
    bob = (await as.mint({ subject: 'bob' })).access_token;
  }, 120_000);

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([as?.stop(), repo?.stop()]);
  });

  function modernCall(token: string, name: string, args: Record<string, unknown>, id: number) {
    return postRaw(
      gateway.mcpUrl,
      JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: {
          name,
          arguments: args,
          _meta: {
            'io.modelcontextprotocol/protocolVersion': V,
            'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
            'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
          },
        },
      }),
      {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': V,
        'mcp-method': 'tools/call',
        'mcp-name': name,
        authorization: `Bearer ${token}`,
      },
    );
  }

  it("alice's unanswered parked calls do not lock bob out of the upstream", async () => {
    // bob's call works to begin with
    const before = await rpc(
      gateway.mcpUrl,
      'tools/call',
      { name: 'repo__flaky', arguments: {} },
      { authorization: `Bearer ${bob}` },
    );
    expect(before.json?.result?.content?.[0]?.text).toBe('backend on fire');

    // alice: calls that ask her something, never answered
    const parked = await Promise.all(
      Array.from({ length: PER_CALLER + 24 }, (_, i) =>
        modernCall(alice, 'repo__confirm', { question: `q${i}` }, i + 1),
      ),
    );
    const inputRequired = parked.filter((p) => p.json?.result?.resultType === 'input_required');
    const refused = parked.filter((p) => p.json?.error !== undefined);
    expect([inputRequired.length, refused.length]).toEqual([PER_CALLER, 24]);
    expect(refused[0]!.json.error.code).toBe(-32603);
    expect(refused[0]!.json.error.message).toMatch(/calls waiting for its input already/);

    // bob, another caller, calls a plain tool of the same upstream
    const after = await rpc(
      gateway.mcpUrl,
      'tools/call',
      { name: 'repo__flaky', arguments: {} },
      { authorization: `Bearer ${bob}` },
    );
    expect(after.json?.result?.content?.[0]?.text).toBe('backend on fire');

    // once her parked calls are abandoned (pendingInputMillis), alice may park calls again
    await waitFor(async () => {
      const again = await modernCall(alice, 'repo__confirm', { question: 'again' }, 999);
      return again.json?.result?.resultType === 'input_required';
    }, 20_000);
  }, 60_000);
});
