import { randomBytes } from 'node:crypto';
import { bundle, gatewayConfig, manifest, tool, upstream } from '../support/fixtures';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver';
import { rpc } from '../support/rpc';
import { ScriptedUpstream } from '../support/scripted-upstream';
import { TestToolService } from '../support/tool-service';

const SERVER = 2;
const hex = (bytes: number): string => randomBytes(bytes).toString('hex');
const tools = ['fails', 'broken', 'plain'].map((name) => ({
  name,
  description: name,
  inputSchema: { type: 'object' },
}));
const progress = (req: { params?: Record<string, any> }) => ({
  jsonrpc: '2.0',
  method: 'notifications/progress',
  params: { progressToken: req.params?._meta?.progressToken ?? 'p', progress: 1 },
});

/**
 * docs/operations.md §3 "Traces": the request span of a `tools/call` carries
 * `mcp_gateway.source.id` and `mcp_gateway.tool_call.outcome` "(as the audit line says it)", a
 * JSON-RPC error's code as `error.type`, and "a result with `isError: true` … marks the span as an
 * error with `error.type: tool_error`". When the upstream streams (a progress notification before
 * its answer, as long-running tools do), the gateway's answer to the caller is an SSE stream and
 * the request span ends when that answer starts (same section): the audit's annotations
 * (libs/mcp/src/audit/tool-call-audit.ts annotateSpan/failSpan) land on an ended span and are
 * lost. The request span of a streamed call that failed then reads as a plain success: no
 * outcome, no source, no error.type, status UNSET. (The same calls answered without streaming
 * are marked; see the control case.)
 */
describe('the request span of a tools/call whose upstream streamed its answer', () => {
  let receiver: OtlpReceiver;
  let service: TestToolService;
  let up: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    service = await TestToolService.start(manifest('b', [tool({ name: 'b.t' })]));
    up = await ScriptedUpstream.start({ tools });
    up.onTool('fails', (req) => ({
      sse: true,
      events: [progress(req)],
      result: { content: [{ type: 'text', text: 'no' }], isError: true },
    }));
    up.onTool('broken', (req) => ({
      sse: true,
      events: [progress(req)],
      error: { code: -32602, message: 'bad a' },
    }));
    up.onTool('plain', () => ({
      result: { content: [{ type: 'text', text: 'no' }], isError: true },
    }));
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('b', service, 'b.')], { upstreams: [upstream('calc', up.url)] }),
        tracing: { endpoint: receiver.url, samplingRatio: 1 },
      },
      waitReady: true,
    });
  });
  afterAll(async () => {
    await gateway?.stop();
    await up?.stop();
    await service?.stop();
    await receiver?.stop();
  });

  async function requestSpan(name: string): Promise<{ span: ReceivedSpan; final: any }> {
    const traceId = hex(16);
    const answer = await rpc(
      gateway.mcpUrl,
      'tools/call',
      { name, arguments: {}, _meta: { progressToken: 'p1' } },
      { traceparent: `00-${traceId}-${hex(8)}-01` },
    );
    const messages = [...answer.text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!));
    const final = messages.length > 0 ? messages.find((m) => 'id' in m) : answer.json;
    await waitFor(
      () => Promise.resolve(receiver.trace(traceId).some((s) => s.kind === SERVER)),
      15_000,
      () => 'no SERVER span',
    );
    await new Promise((r) => setTimeout(r, 300));
    return { span: receiver.trace(traceId).find((s) => s.kind === SERVER)!, final };
  }

  it('control: an isError answer that was not streamed is marked', async () => {
    const { span, final } = await requestSpan('calc__plain');
    expect(final.result.isError).toBe(true);
    expect(span.attributes['mcp_gateway.tool_call.outcome']).toBe('isError');
    expect(span.statusCode).toBe(2);
  });

  it('a streamed isError result: outcome, source, error.type tool_error, status Error', async () => {
    const { span, final } = await requestSpan('calc__fails');
    expect(final.result.isError).toBe(true);
    expect(span.attributes).toEqual(
      expect.objectContaining({
        'mcp_gateway.source.id': 'calc',
        'mcp_gateway.tool_call.outcome': 'isError',
        'error.type': 'tool_error',
      }),
    );
    expect(span.statusCode).toBe(2);
  });

  it('a streamed JSON-RPC error: error.type and rpc.response.status_code', async () => {
    const { span, final } = await requestSpan('calc__broken');
    expect(final.error.code).toBe(-32602);
    expect(span.attributes).toEqual(
      expect.objectContaining({ 'error.type': '-32602', 'rpc.response.status_code': '-32602' }),
    );
  });
});
