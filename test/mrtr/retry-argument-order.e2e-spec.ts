/**
 * MRTR retry with the same arguments written in another member order (S26-mrtr client retry: "Re-send
 * the same method with the same params"; RFC 8259 §4: "An object is an unordered collection").
 * docs/operations.md §11 "The envelope": requestState is bound to "a SHA-256 digest of the client's
 * `arguments`: a retry must re-send the arguments of the first round". The digest is taken over
 * JSON.stringify of the parsed arguments (upstream-mrtr-request.ts `bindingOf`), which keeps member
 * order, so `{"b":2,"a":1}` is refused as a foreign envelope (-32602) though it is the same params
 * (a client that rebuilds its arguments from a map, e.g. Go's encoding/json sorting keys, does this).
 */
import { GatewayProcess } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { ScriptedUpstream, upTool } from '../support/scripted-upstream';
import { envelopeMeta } from '../support/modern-rpc';
import { postRaw, STANDARD_HEADERS } from '../support/rpc';

const CAPS = { elicitation: { form: {} } };
function call(url: string, argsText: string, extra: Record<string, unknown> = {}) {
  const params = JSON.stringify({ name: 'm__go', ...extra, _meta: envelopeMeta(CAPS) });
  // arguments written by hand, to control the member order
  const body = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":${argsText},${params.slice(1)}}`;
  return postRaw(url, body, {
    ...STANDARD_HEADERS,
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': 'tools/call',
    'mcp-name': 'm__go',
  });
}

describe('MRTR retry: arguments with another member order', () => {
  let up: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    up = await ScriptedUpstream.start({ era: '2026', tools: [upTool('go')] });
    up.onTool('go', (req) =>
      req.params?.inputResponses?.q !== undefined
        ? { result: { resultType: 'complete', content: [{ type: 'text', text: 'went' }] } }
        : {
            result: {
              resultType: 'input_required',
              inputRequests: {
                q: {
                  method: 'elicitation/create',
                  params: {
                    mode: 'form',
                    message: 'Go?',
                    requestedSchema: { type: 'object', properties: {} },
                  },
                },
              },
              requestState: 'rs',
            },
          },
    );
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], { upstreams: [upstream('m', up.url, { protocol: '2026-07-28' })] }),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await up?.stop();
  });

  it('the retry is accepted', async () => {
    const first = await call(gateway.mcpUrl, '{"a":1,"b":2}');
    expect(first.json.result.resultType).toBe('input_required');
    const retry = await call(gateway.mcpUrl, '{"b":2,"a":1}', {
      inputResponses: { q: { action: 'accept', content: {} } },
      requestState: first.json.result.requestState,
    });
    expect(retry.json.error).toBeUndefined();
    expect(retry.json.result?.content?.[0]?.text).toBe('went');
  });
});
