import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { TestToolService } from '../support/tool-service';

/**
 * docs/operations.md §1 "Environment": MANAGEMENT_HOST binds the management listener on its own
 * address.
 */
describe('MANAGEMENT_HOST', () => {
  const track = stopAfterEach();

  it('binds /actuator to MANAGEMENT_HOST while /mcp stays on HOST', async () => {
    const service = track(await TestToolService.start(manifest('ins', [tool({ name: 'ins.a' })])));
    const gateway = track(
      GatewayProcess.spawn({
        mcp: gatewayConfig([bundle('ins', service, 'ins.')]),
        env: { HOST: '127.0.0.1', MANAGEMENT_HOST: '127.0.0.2' },
      }),
    );
    await gateway.waitForListening();
    expect(gateway.output).toContain('managementHost=127.0.0.2');
    const port = gateway.managementPort;
    const there = await fetch(`http://127.0.0.2:${port}/actuator/health/liveness`);
    expect(there.status).toBe(200);
    const notHere = await fetch(`http://127.0.0.1:${port}/actuator/health/liveness`).then(
      (r) => r.status,
      () => 'refused',
    );
    expect(notHere).toBe('refused');
    const mcp = await fetch(gateway.mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(mcp.status).toBe(200);
  });
});
