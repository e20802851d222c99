import { connect } from 'node:net';
import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { TestToolService } from '../support/tool-service';

/** A request to /mcp whose body arrives one byte every 2 s; resolves with the answer and when. */
function dripToMcp(port: number): Promise<{ answer: string; afterMs: number }> {
  const started = Date.now();
  const socket = connect(port, '127.0.0.1');
  let answer = '';
  socket.on('data', (d: Buffer) => (answer += d.toString()));
  socket.on('error', () => undefined);
  socket.write(
    'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{',
  );
  const drip = setInterval(() => {
    if (!socket.destroyed) socket.write(' ');
  }, 2000);
  return new Promise((resolve) =>
    socket.on('close', () => {
      clearInterval(drip);
      resolve({ answer, afterMs: Date.now() - started });
    }),
  );
}

/** The 30 s bound on sending a whole request to /mcp holds on the default listener. */
describe('a slow client on /mcp', () => {
  const track = stopAfterEach();

  it('is cut with 408 about 30 s after it started, not a minute later', async () => {
    const service = track(await TestToolService.start(manifest('ins', [tool({ name: 'ins.a' })])));
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('ins', service, 'ins.')]),
        waitReady: true,
      }),
    );
    const { answer, afterMs } = await dripToMcp(gateway.mcpPort);
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(afterMs).toBeGreaterThanOrEqual(29_000);
    expect(afterMs).toBeLessThan(42_000); // it was 44–69 s before the bound was checked every second
    expect(gateway.output).not.toMatch(/Unhandled error on \/mcp/);
  }, 60_000);
});
