import { connect, type Socket } from 'node:net';
import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { TestToolService } from '../support/tool-service';

/** A half-open request: headers and one body byte, then silence. */
function halfOpen(port: number): { socket: Socket; closed: () => boolean } {
  const socket = connect(port, '127.0.0.1');
  let closed = false;
  socket.on('close', () => (closed = true));
  socket.on('error', () => undefined);
  socket.write(
    'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{',
  );
  return { socket, closed: () => closed };
}

/**
 * docs/operations.md §1, `http.maxConnections`: half-open requests cannot take every descriptor of
 * the process.
 */
describe('the /mcp connection limit', () => {
  const track = stopAfterEach();

  it.each(['fastify', 'node'])(
    'closes connections past mcp.http.maxConnections (%s listener) while liveness, pulls and calls go on',
    async (kind) => {
      const service = track(
        await TestToolService.start(manifest('ins', [tool({ name: 'ins.a' })])),
      );
      const gateway = track(
        await GatewayProcess.start({
          mcp: {
            ...gatewayConfig([bundle('ins', service, 'ins.')], {
              registry: { refreshIntervalSeconds: 1 },
            }),
            http: { maxConnections: 20 },
          },
          env: { MCP_HTTP_SERVER: kind },
          waitReady: true,
        }),
      );
      expect(gateway.output).toContain('at most 20 connections');
      const port = Number(new URL(gateway.mcpUrl).port);
      const held = Array.from({ length: 60 }, () => halfOpen(port));
      try {
        // everything past the limit is closed by the gateway at once
        await waitFor(() => held.filter((h) => h.closed()).length >= 40, 5000);
        expect(held.filter((h) => !h.closed()).length).toBeLessThanOrEqual(20);
        // the management listener and the manifest pulls are untouched
        expect((await fetch(`${gateway.managementUrl}/actuator/health/liveness`)).status).toBe(200);
        const pulls = service.manifestRequests().length;
        await waitFor(() => service.manifestRequests().length > pulls, 5000);
        const bundles = await gateway.toolBundles();
        expect(bundles.bundles[0].status).toBe('healthy');
        expect(bundles.bundles[0].lastFailureReason).toBeNull();
      } finally {
        for (const h of held) h.socket.destroy();
      }
      // once they are gone, agents are served again
      await waitFor(async () => {
        const res = await fetch(gateway.mcpUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        }).catch(() => undefined);
        return res?.status === 200;
      }, 5000);
    },
  );
});
