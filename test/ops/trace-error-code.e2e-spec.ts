import { randomBytes } from 'node:crypto';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver';
import { rpc } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

const SERVER = 2;
const hex = (bytes: number): string => randomBytes(bytes).toString('hex');

/**
 * docs/operations.md §3 "Traces": the SERVER span of a request has "for a JSON-RPC error
 * `rpc.response.status_code` and `error.type` (the code)", "names and attributes after the
 * OpenTelemetry semantic conventions for MCP".
 */
describe('the request span of a JSON-RPC error answer', () => {
  let receiver: OtlpReceiver;
  let service: TestToolService;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    service = await TestToolService.start(manifest('tr', [tool({ name: 'tr.echo' })]));
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('tr', service, 'tr.')]),
        tracing: { endpoint: receiver.url, samplingRatio: 1 },
      },
      waitReady: true,
    });
  });
  afterAll(async () => {
    await gateway?.stop();
    await service?.stop();
    await receiver?.stop();
  });

  async function errorSpan(id: string): Promise<ReceivedSpan> {
    const traceId = hex(16);
    const answer = await rpc(
      gateway.mcpUrl,
      'no/such/method',
      {},
      {
        traceparent: `00-${traceId}-${hex(8)}-01`,
      },
      id,
    );
    expect(answer.json.error.code).toBe(-32601);
    await waitFor(
      () => Promise.resolve(receiver.trace(traceId).some((s) => s.kind === SERVER)),
      15_000,
      () => `no SERVER span of ${traceId}`,
    );
    return receiver.trace(traceId).find((s) => s.kind === SERVER)!;
  }

  /**
   * The code is read with a regex over the first 256 characters of the answer body
   * (libs/mcp/src/http/request-span.ts errorCodeOf), and the answer is
   * `{"jsonrpc":"2.0","id":<id>,"error":{...}}`: a caller whose JSON-RPC id is a little long (a
   * 240-character correlation id; any string is a valid id) gets an error whose span carries no
   * error at all. (A short id, same request: error.type "-32601".)
   */
  it('carries error.type and rpc.response.status_code whatever the length of the id', async () => {
    expect((await errorSpan('id-1')).attributes['error.type']).toBe('-32601');
    const span = await errorSpan('c'.repeat(240));
    expect(span.attributes['error.type']).toBe('-32601');
    expect(span.attributes['rpc.response.status_code']).toBe('-32601');
  });

  /**
   * OpenTelemetry JSON-RPC conventions, which the MCP conventions build on: "Responses that
   * include an error object are considered errors" (span status Error). The gateway sets status
   * Error for an isError result (failSpan('tool_error')) and a Tool Service's 4xx, but leaves a
   * JSON-RPC error's request span UNSET: trace backends that filter on status show it as fine.
   */
  it('has status Error', async () => {
    expect((await errorSpan('id-2')).statusCode).toBe(2);
  });
});
