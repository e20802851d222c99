import { connect, type Socket } from 'node:net';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { callTool, rpc } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

/**
 * SIGTERM (docs/operations.md §1, `shutdown.gracePeriodSeconds`): readiness down first, no new
 * requests, in-flight calls finish, then exit.
 */
describe('graceful shutdown', () => {
  let service: TestToolService;
  beforeEach(async () => {
    service = await TestToolService.start(
      manifest('ins', [
        tool({ name: 'ins.slow', meta: { timeoutMillis: 5000 } }),
        tool({ name: 'ins.fast' }),
      ]),
    );
    service.tools.set('ins.slow', () => ({ delayMs: 2000, body: { done: true } }));
  });
  afterEach(async () => {
    await service.stop();
  });

  it('lets a slow tool call started before SIGTERM complete, refuses new work, and exits 0', async () => {
    const gateway = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('ins', service, 'ins.')]),
      waitReady: true,
    });
    const inFlight = callTool(gateway.mcpUrl, 'ins.slow');
    await waitFor(() => service.toolRequests('ins.slow').length === 1);
    gateway.child.kill('SIGTERM');

    await waitFor(async () => (await gateway.readiness()).status === 503, 2000);
    expect((await gateway.readiness()).body.details.catalog.draining).toBe(true);
    // a new request is refused: the listener is closed (connection refused) or answers 503
    const late = await rpc(gateway.mcpUrl, 'tools/list').then(
      (answer) => String(answer.status),
      () => 'refused',
    );
    expect(late).toMatch(/refused|503/);
    expect(service.toolRequests('ins.fast')).toHaveLength(0);

    const response = await inFlight;
    expect(response.result.isError).toBeUndefined();
    expect(response.result.content[0].text).toBe('{"done":true}');
    expect(await gateway.waitForExit(10_000)).toBe(0);
    expect(gateway.output).toContain('SIGTERM received: draining');
    expect(gateway.output).toContain('Stopped');
  });

  it('answers calls still running when the grace period is over with an isError saying so, then exits', async () => {
    service.tools.set('ins.slow', () => ({ delayMs: 4000, body: { done: true } }));
    const gateway = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('ins', service, 'ins.')], { shutdown: { gracePeriodSeconds: 1 } }),
      waitReady: true,
    });
    const inFlight = Promise.all([
      callTool(gateway.mcpUrl, 'ins.slow'),
      callTool(gateway.mcpUrl, 'ins.slow'),
    ]);
    await waitFor(() => service.toolRequests('ins.slow').length === 2);
    const signalled = Date.now();
    gateway.child.kill('SIGTERM');
    // docs/operations.md §2 "Calls nobody waits for": an answer, not a TCP reset that reads as an
    // unreachable Tool Service
    for (const answer of await inFlight) {
      expect(answer.error).toBeUndefined();
      expect(answer.result.isError).toBe(true);
      expect(answer.result.content[0].text).toContain('the gateway is shutting down');
    }
    expect(await gateway.waitForExit(10_000)).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(3500);
    expect(gateway.output).toContain('Grace period of 1000 ms is over');
    // counted as shutdown, never as an unreachable Tool Service
    expect(gateway.output).toMatch(/"outcome":"shutdown"/);
    expect(gateway.output).not.toMatch(/"outcome":"unreachable"/);
  });

  it('does not wait out the grace period for connections that serve no request: never used (a pre-opened socket) or idle, on either port', async () => {
    const gateway = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('ins', service, 'ins.')]),
      waitReady: true,
    });
    /** A TCP connection that sends nothing, and whether the gateway closed it. */
    const unused = async (url: string): Promise<{ socket: Socket; closed: Promise<void> }> => {
      const { hostname, port } = new URL(url);
      const socket = connect(Number(port), hostname);
      await new Promise<void>((resolve, reject) =>
        socket.once('connect', resolve).once('error', reject),
      );
      socket.on('error', () => undefined);
      return { socket, closed: new Promise<void>((resolve) => socket.once('close', resolve)) };
    };
    const opened = [await unused(gateway.mcpUrl), await unused(gateway.managementUrl)];
    // and a keep-alive connection of each port that served a request
    expect((await callTool(gateway.mcpUrl, 'ins.fast')).result.isError).toBeUndefined();
    expect((await gateway.readiness()).status).toBe(200);

    gateway.child.kill('SIGTERM');
    // the default grace period is 30 s: an exit well within it did not wait it out
    expect(await gateway.waitForExit(20_000)).toBe(0);
    await Promise.all(opened.map((o) => o.closed));
    expect(gateway.output).toContain('Stopped');
    expect(gateway.output).not.toContain('Grace period of');
    expect(gateway.output).not.toContain('Management requests still open');
  }, 40_000);
});
