import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { jwtAuthConfig, TestAuthorizationServer } from '../support/oidc-provider';
import { rpc, type RawAnswer } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

const RESOURCE = 'https://gateway.test/mcp';
/** How long an export holds its answer open after sending most of it. */
const STALL_MS = 6_000;
const EXPORT_BYTES = 800_000;

/**
 * One caller's answers hold at most its share of `execution.maxInFlightAnswerBytes` (a quarter,
 * or one largest answer where that is more; docs/operations.md §1): caller B's slow, large
 * exports of its own tool cannot leave caller A's answer of another tool no room. Here the
 * budget is 4 MiB and the largest answer 1 MiB, so B holds at most 1 MiB: before the share, B's
 * five exports held 4 MB and A's 300 kB report was "busy".
 */
describe("a caller's share of the answer bytes in flight", () => {
  let as: TestAuthorizationServer;
  let manifests: TestToolService;
  let slow: Server;
  let gateway: GatewayProcess;
  let alice: Record<string, string>;
  let bob: Record<string, string>;
  let streaming = 0;

  beforeAll(async () => {
    as = await TestAuthorizationServer.start({
      resources: { [RESOURCE]: { scope: 'mcp' } },
      defaultResource: RESOURCE,
    });
    manifests = await TestToolService.start(
      manifest('w', [
        tool({ name: 'w.export', meta: { timeoutMillis: 20_000 } }),
        tool({ name: 'w.report', meta: { timeoutMillis: 20_000 } }),
      ]),
    );
    // a Tool Service whose export sends most of its answer at once, then finishes slowly
    slow = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        if (req.url?.endsWith('/w.report')) {
          res.end(JSON.stringify({ report: 'r'.repeat(300_000) }));
          return;
        }
        streaming += 1;
        res.write(`{"pad":"${'x'.repeat(EXPORT_BYTES)}`);
        setTimeout(() => {
          streaming -= 1;
          if (!res.destroyed) res.end('"}');
        }, STALL_MS);
      });
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const baseEndpoint = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/mcp`;
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig(
          [bundle('w', { manifestUrl: manifests.manifestUrl, baseEndpoint }, 'w.')],
          {
            discovery: { maxToolTimeoutMillis: 20_000 },
            execution: { maxInFlightAnswerBytes: 4 * 1_048_576, maxResponseBytes: 1_048_576 },
          },
        ),
        auth: jwtAuthConfig(as, RESOURCE),
        access: {
          rules: [
            { match: { claim: 'groups', value: 'dev' }, tools: ['w.report'] },
            { match: { claim: 'groups', value: 'ops' }, tools: ['w.export'] },
          ],
        },
      },
      waitReady: true,
    });
    const mint = async (subject: string, group: string) => ({
      authorization: `Bearer ${(await as.mint({ subject, claims: { groups: [group] } })).access_token}`,
    });
    [alice, bob] = await Promise.all([mint('alice', 'dev'), mint('bob', 'ops')]);
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    slow?.closeAllConnections();
    await new Promise((resolve) => slow?.close(resolve));
    await Promise.all([as?.stop(), manifests?.stop()]);
  });

  const textOf = (answer: RawAnswer): string =>
    (answer.json?.result?.content?.[0]?.text as string | undefined) ?? answer.text;

  it("B's slow large answers take at most its share: A's answer of another tool is served, B's past its share are busy", async () => {
    const exports = [1, 2, 3, 4, 5].map((id) =>
      rpc(gateway.mcpUrl, 'tools/call', { name: 'w.export', arguments: {} }, bob, id),
    );
    // every export has sent its bytes (or been cut for them)
    await waitFor(() => streaming >= 5, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const report = await rpc(
      gateway.mcpUrl,
      'tools/call',
      { name: 'w.report', arguments: {} },
      alice,
      6,
    );
    expect(report.json.result.isError).not.toBe(true);
    expect(textOf(report)).toContain('rrrr');
    const done = await Promise.all(exports);
    const busy = done.filter((answer) => /the gateway is busy/.test(textOf(answer)));
    // one fits in B's 1 MiB share; the others were ended as busy when their bytes passed it
    expect(busy.length).toBe(4);
    expect(done.filter((answer) => answer.json.result.isError !== true)).toHaveLength(1);
  }, 40_000);
});
