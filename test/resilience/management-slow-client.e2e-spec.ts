import { connect, type Socket } from 'node:net';
import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { TestToolService } from '../support/tool-service';

/** Opens a request on the management port whose body arrives one byte every 2 s. */
function dripRequest(port: number): { socket: Socket; closed: Promise<string> } {
  const socket = connect(port, '127.0.0.1');
  let answer = '';
  socket.on('data', (d: Buffer) => (answer += d.toString()));
  const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(answer)));
  socket.on('error', () => undefined);
  socket.write(
    'POST /actuator/toolBundles HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{',
  );
  const drip = setInterval(() => {
    if (!socket.destroyed) socket.write(' ');
  }, 2000);
  socket.on('close', () => clearInterval(drip));
  return { socket, closed };
}

/**
 * docs/operations.md §2 "Request limits on the management port": the management port cuts slow
 * requests and does not hold a shutdown.
 */
describe('a slow client on the management port', () => {
  let service: TestToolService;
  let gateway: GatewayProcess | undefined;
  beforeEach(async () => {
    service = await TestToolService.start(manifest('ins', [tool({ name: 'ins.a' })]));
  });
  afterEach(async () => {
    await gateway?.stop();
    await service.stop();
  });

  it('cuts a body dripped one byte every 2 s within the request timeout, and keeps answering probes', async () => {
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('ins', service, 'ins.')]),
      waitReady: true,
    });
    const started = Date.now();
    const { closed } = dripRequest(gateway.managementPort);
    expect((await fetch(`${gateway.managementUrl}/actuator/health/liveness`)).status).toBe(200);
    const answer = await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(Date.now() - started).toBeLessThan(15_000); // 10 s timeout, checked every second
  }, 30_000);

  it('does not hold SIGTERM beyond the grace period', async () => {
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('ins', service, 'ins.')], { shutdown: { gracePeriodSeconds: 2 } }),
      waitReady: true,
    });
    const { closed } = dripRequest(gateway.managementPort);
    await new Promise((r) => setTimeout(r, 300));
    const signalled = Date.now();
    gateway.child.kill('SIGTERM');
    expect(await gateway.waitForExit(10_000)).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(4_000);
    await closed;
  }, 30_000);
});
