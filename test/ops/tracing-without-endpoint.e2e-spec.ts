import { stopAfterEach } from '../support/cleanup';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { GatewayProcess } from '../support/gateway-process';
import { TestToolService } from '../support/tool-service';

/**
 * docs/operations.md §1: "Unknown keys are errors too, so a typo never silently falls back to a
 * default"; §3 "Traces": off unless `mcp.tracing.endpoint` is set. An operator who configures
 * `mcp.tracing` (sampling 0.5, a service name) but gives the collector the OpenTelemetry way —
 * `OTEL_EXPORTER_OTLP_ENDPOINT`, which every other OTel SDK reads — or forgets `endpoint`, gets a
 * gateway that says nothing: no boot problem, no log line, and no trace ever. The boot log says
 * "Traces: OTLP/HTTP to …" when they are on; when a tracing section is there but cannot take
 * effect, it should say so (or refuse the section, naming mcp.tracing.endpoint).
 */
describe('mcp.tracing without endpoint', () => {
  const track = stopAfterEach();

  it('is refused, or said at boot, never silently ignored', async () => {
    const service = track(await TestToolService.start(manifest('b', [tool({ name: 'b.t' })])));
    const gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('b', service, 'b.')]),
        tracing: { samplingRatio: 0.5, serviceName: 'orders-gateway' },
      },
      env: { APP_PROFILE: 'ocp', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' },
      waitReady: true,
    }).catch((err: Error) => err);
    if (!(gateway instanceof GatewayProcess)) {
      expect(String(gateway.message)).toMatch(/mcp\.tracing\.endpoint/);
      return;
    }
    track(gateway);
    await new Promise((r) => setTimeout(r, 500));
    expect(gateway.output).toMatch(/mcp\.tracing[^\n]*endpoint|tracing\.endpoint|no traces/i);
  });
});
