import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { stopAfterEach } from '../support/cleanup';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { callTool } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

type Attr = { key: string; value: Record<string, unknown> };

/** An OTLP/HTTP JSON endpoint keeping the resource attributes of every export. */
async function resourceReceiver() {
  const resources: Record<string, unknown>[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans?: { resource?: { attributes?: Attr[] } }[];
      };
      for (const rs of body.resourceSpans ?? [])
        resources.push(
          Object.fromEntries(
            (rs.resource?.attributes ?? []).map((a) => [a.key, Object.values(a.value)[0]]),
          ),
        );
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    resources,
    stop: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/**
 * Traces are for seeing a slow call across every hop (docs/operations.md §3 "Traces"). With
 * several replicas the spans must say which one served the
 * call. The gateway once built its TracerProvider with a resource of `service.name` and
 * `service.version` only (libs/observability/src/tracing.ts): no instance (`service.instance.id`,
 * `host.name`), and `OTEL_RESOURCE_ATTRIBUTES` — the OpenTelemetry way to add `k8s.pod.name`
 * from the downward API, which the SDK specification says an SDK MUST read — was ignored
 * (OTEL_EXPORTER_OTLP_HEADERS, which docs/operations.md names, is read by the exporter).
 */
describe('the resource of exported spans', () => {
  const track = stopAfterEach();

  it('names the replica and takes OTEL_RESOURCE_ATTRIBUTES', async () => {
    const receiver = track(await resourceReceiver());
    const service = track(await TestToolService.start(manifest('tr', [tool({ name: 'tr.echo' })])));
    const gateway = track(
      await GatewayProcess.start({
        mcp: {
          ...gatewayConfig([bundle('tr', service, 'tr.')]),
          tracing: { endpoint: receiver.url },
        },
        env: {
          OTEL_RESOURCE_ATTRIBUTES:
            'k8s.pod.name=mcp-gateway-7d9f-abcde,deployment.environment=prod',
        },
        waitReady: true,
      }),
    );
    await callTool(gateway.mcpUrl, 'tr.echo', {});
    await waitFor(
      () => Promise.resolve(receiver.resources.length > 0),
      15_000,
      () => 'no export',
    );
    const resource = receiver.resources[0]!;
    expect(resource['service.name']).toBe('mcp-gateway');
    expect(resource['k8s.pod.name']).toBe('mcp-gateway-7d9f-abcde');
    expect(resource['deployment.environment']).toBe('prod');
  });
});
