import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { callTool } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

/**
 * A Tool Service whose answers are `bytes` of JSON sent in two halves, `pauseMs` apart, so
 * several answers are held by the gateway at the same time.
 */
async function slowBigAnswers(
  bytes: number,
  pauseMs: number,
): Promise<{ baseEndpoint: string; stop: () => Promise<void> }> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const half = Buffer.alloc(bytes / 2, 0x61);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': bytes + 4 });
      res.write('["');
      res.write(half);
      setTimeout(() => {
        if (!res.destroyed) res.end(Buffer.concat([half, Buffer.from('"]')]));
      }, pauseMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    baseEndpoint: `http://127.0.0.1:${port}/mcp`,
    stop: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Issue 9, fault 1: a memory budget and a per-bundle call limit; over them, a prompt "busy". */
describe('overload limits', () => {
  const track = stopAfterEach();

  async function gatewayFor(execution: Record<string, unknown>): Promise<GatewayProcess> {
    const answers = await slowBigAnswers(600 * 1024, 1500);
    track({ stop: answers.stop });
    const manifests = track(
      await TestToolService.start(manifest('big', [tool({ name: 'big.report' })])),
    );
    return track(
      await GatewayProcess.start({
        mcp: gatewayConfig(
          [
            bundle(
              'big',
              { manifestUrl: manifests.manifestUrl, baseEndpoint: answers.baseEndpoint },
              'big.',
            ),
          ],
          { execution: { maxResponseBytes: 8 * 1024 * 1024, ...execution } },
        ),
        waitReady: true,
      }),
    );
  }

  it('ends calls whose answers would pass maxInFlightAnswerBytes as "busy", and serves the ones within it', async () => {
    const gateway = await gatewayFor({
      maxInFlightAnswerBytes: 1024 * 1024,
      maxResponseBytes: 1024 * 1024,
    });
    const started = Date.now();
    const answers = await Promise.all(
      [1, 2, 3].map(() => callTool(gateway.mcpUrl, 'big.report', {})),
    );
    const busy = answers.filter((a) => a.result.isError === true);
    const served = answers.filter((a) => a.result.isError === undefined);
    expect(served.length).toBeGreaterThanOrEqual(1);
    expect(busy.length).toBeGreaterThanOrEqual(1);
    for (const a of busy) expect(a.result.content[0].text).toContain('the gateway is busy');
    for (const a of served) expect(a.result.content[0].text).toHaveLength(600 * 1024 + 4);
    expect(Date.now() - started).toBeLessThan(5000); // never a hang
    // the budget is given back: a later call is served
    const later = await callTool(gateway.mcpUrl, 'big.report', {});
    expect(later.result.isError).toBeUndefined();
    const scrape = await (await fetch(`${gateway.managementUrl}/actuator/prometheus`)).text();
    expect(scrape).toMatch(/tool_calls_total\{tool="big\.report",outcome="busy"\} [1-9]/);
  });

  it('answers a call over maxConcurrentCallsPerBundle at once with "busy", without calling the Tool Service', async () => {
    const gateway = await gatewayFor({ maxConcurrentCallsPerBundle: 2 });
    const first = Promise.all([1, 2].map(() => callTool(gateway.mcpUrl, 'big.report', {})));
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    const third = await callTool(gateway.mcpUrl, 'big.report', {});
    expect(Date.now() - started).toBeLessThan(1000);
    expect(third.result.isError).toBe(true);
    expect(third.result.content[0].text).toContain('too many calls to its Tool Service in flight');
    for (const a of await first) expect(a.result.isError).toBeUndefined();
    await waitFor(
      async () => (await callTool(gateway.mcpUrl, 'big.report', {})).result.isError === undefined,
    );
  });
});
