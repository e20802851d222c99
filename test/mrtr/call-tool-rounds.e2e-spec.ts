import { GatewayProcess, TEST_SESSION_KEYS } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { modernRequest } from '../support/modern-rpc';
import { V1AskingUpstream, V2MrtrUpstream } from './mrtr-upstreams';

const ELICIT_AND_SAMPLE = { elicitation: { form: {} }, sampling: {} };
const text = (result: any): string =>
  (result?.content ?? []).map((c: { text?: string }) => c.text ?? '').join('');

/**
 * docs/operations.md §16 "Tool search": `gateway__call_tool` is "the same call as calling it
 * directly", so a 2026 client's multi round-trip call (§11 "Multi round-trip and era bridging")
 * goes through it as through a direct call: the retry carries `requestState` and
 * `inputResponses` beside the call tool's arguments, and they are the inner call's.
 */
describe('a multi round-trip call through gateway__call_tool', () => {
  let v2: V2MrtrUpstream;
  let v1: V1AskingUpstream;
  let gateway: GatewayProcess;
  const at = (path: string): string =>
    path === '/mcp' ? gateway.mcpUrl : gateway.mcpUrl.replace(/\/mcp$/, `/mcp/servers/${path}`);
  const viaCallTool = (path: string, inner: object, retry: object = {}) =>
    modernRequest(
      at(path),
      'tools/call',
      { name: 'gateway__call_tool', arguments: inner, ...retry },
      ELICIT_AND_SAMPLE,
    );

  beforeAll(async () => {
    v2 = await V2MrtrUpstream.start();
    v1 = await V1AskingUpstream.start();
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([], {
          upstreams: [
            upstream('v2', v2.url, { timeouts: { callMillis: 30_000 } }),
            upstream('v1', v1.url, { timeouts: { callMillis: 30_000 } }),
          ],
        }),
        http: { modernEra: true },
        toolSearch: { enabled: true },
        virtualServers: [
          { id: 'team', sources: ['v2', 'v1'], toolSearch: true },
          { id: 'other', sources: ['v1'], toolSearch: true },
        ],
      },
      env: { MCP_SESSION_KEYS: TEST_SESSION_KEYS },
      waitReady: true,
    });
  }, 120_000);

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([v2?.stop(), v1?.stop()]);
  });

  it.each([['/mcp'], ['team']])(
    "a 2026 upstream's input_required on %s: the retry completes, the upstream gets its own requestState back",
    async (path) => {
      const inner = { name: 'v2__confirm_deploy', arguments: { env: `env-${path}` } };
      const first = await viaCallTool(path, inner);
      expect(first.json.result).toMatchObject({ resultType: 'input_required' });
      const retry = await viaCallTool(path, inner, {
        inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
        requestState: first.json.result.requestState,
      });
      expect(retry.json.result).toMatchObject({ resultType: 'complete' });
      expect(text(retry.json.result)).toBe(
        `deployed to env-${path} (state=opaque-state-env-${path})`,
      );
      expect(v2.calls().at(-1).params).toMatchObject({
        name: 'confirm_deploy',
        requestState: `opaque-state-env-${path}`,
      });
    },
  );

  it('a 2025 upstream asking mid-call: the parked call gets the answer and completes', async () => {
    const inner = { name: 'v1__approve', arguments: { question: 'Through search?' } };
    const first = await viaCallTool('team', inner);
    expect(first.json.result).toMatchObject({ resultType: 'input_required' });
    const [key] = Object.keys(first.json.result.inputRequests as object);
    const retry = await viaCallTool('team', inner, {
      inputResponses: { [key!]: { action: 'accept', content: { approve: true } } },
      requestState: first.json.result.requestState,
    });
    expect(retry.json.result).toMatchObject({ resultType: 'complete' });
    expect(text(retry.json.result)).toBe('approve={"action":"accept","content":{"approve":true}}');
  });

  it("the request's progress token is the inner call's: the tool's progress reaches the client", async () => {
    const via = await viaCallTool(
      'team',
      { name: 'v2__progress_deploy', arguments: { env: 'watched' } },
      { _meta: { progressToken: 'watch-1' } },
    );
    // the upstream gets a token of the gateway's, the client its own back
    // (libs/upstream/src/progress-token.ts)
    const sent = v2.calls().at(-1);
    expect(sent.params._meta).toMatchObject({ progressToken: sent.id });
    expect(via.text).toContain(
      '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"watch-1","progress":1,"total":2}}',
    );
    expect(via.text).toContain('"resultType":"input_required"');
  });

  it("a retry on a path whose view lacks the tool is that path's unknown tool, nothing sent", async () => {
    const inner = { name: 'v2__confirm_deploy', arguments: { env: 'elsewhere' } };
    const first = await viaCallTool('team', inner);
    const before = v2.calls().length;
    const retry = await viaCallTool('other', inner, {
      inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
      requestState: first.json.result.requestState,
    });
    expect(retry.json.error).toMatchObject({ message: 'Tool not found: v2__confirm_deploy' });
    expect(v2.calls().length).toBe(before);
  });
});
