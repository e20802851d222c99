import { GatewayProcess, waitFor } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { postRaw } from '../../support/rpc';
import { envelopeMeta, MODERN } from '../../support/modern-rpc';
import { ScriptedUpstream, upTool } from '../../support/scripted-upstream';

jest.setTimeout(60_000);

/**
 * docs/operations.md §11 "Multi round-trip and era bridging", 2026 client ↔ 2026 upstream: "the
 * upstream's input_required goes to the client unchanged, except requestState, which the gateway
 * wraps in its own envelope; the retry (any replica) is checked, unwrapped and forwarded".
 * Wire notes §4: the client re-sends the exact `requestState` it received.
 *
 * The envelope (MrtrSeal.seal: JSON.stringify → AES-GCM → base64url) is ~4/3 the size of the
 * upstream's state (6×4/3 for control characters, which JSON escapes as \uXXXX), but the
 * gateway takes a request body of at most MCP_MAX_BODY_BYTES (4 MiB, listener-limits.ts) while
 * it accepts upstream answers up to execution.maxResponseBytes (8 MiB). An upstream
 * requestState of 3.2 MB (a retry of ~3.2 MB, which a direct connection takes) becomes an
 * envelope the gateway itself refuses on the retry (413): the call can never complete, and the
 * client was handed a state nobody can use. Found: 413 on the retry.
 */
const STATE = 'S'.repeat(3_200_000);

function call(url: string, id: number, extra: Record<string, unknown>) {
  return postRaw(
    url,
    JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: {
        name: 'mod__big',
        arguments: {},
        ...extra,
        _meta: envelopeMeta({ elicitation: { form: {} } }),
      },
    }),
    {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': 'tools/call',
      'mcp-name': 'mod__big',
    },
  );
}

describe('a 2026 upstream whose input_required carries a large requestState', () => {
  let mod: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    mod = await ScriptedUpstream.start({ era: '2026', tools: [upTool('big')] });
    mod.onTool('big', (req) =>
      req.params?.requestState === STATE
        ? { result: { content: [{ type: 'text', text: 'done' }], resultType: 'complete' } }
        : {
            result: {
              resultType: 'input_required',
              inputRequests: {
                q: {
                  method: 'elicitation/create',
                  params: {
                    mode: 'form',
                    message: 'ok?',
                    requestedSchema: { type: 'object', properties: {} },
                  },
                },
              },
              requestState: STATE,
            },
          },
    );
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], { upstreams: [upstream('mod', mod.url)] }),
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
    await mod?.stop();
  });

  it('the gateway never hands out a requestState its own retry refuses: the retry completes (or the round is refused up front)', async () => {
    const first = await call(gateway.mcpUrl, 1, {});
    expect(first.status).toBe(200);
    // a fix may instead refuse the round at once, saying why (an isError result or an error)
    if (first.json.result?.resultType !== 'input_required') {
      expect(first.json.error ?? first.json.result?.isError).toBeTruthy();
      return;
    }
    const state = first.json.result.requestState as string;
    const retry = await call(gateway.mcpUrl, 2, {
      inputResponses: { q: { action: 'accept', content: {} } },
      requestState: state,
    });
    expect(retry.status).toBe(200);
    expect(retry.json.result).toMatchObject({
      resultType: 'complete',
      content: [{ text: 'done' }],
    });
  });
});
