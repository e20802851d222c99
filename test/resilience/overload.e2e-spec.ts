import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool, upstream } from '../support/fixtures';
import { ScriptedUpstream, upTool } from '../support/scripted-upstream';
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

/**
 * docs/operations.md §1, `execution.*`: a memory budget and a per-bundle call limit; over them, a
 * prompt "busy".
 */
describe('overload limits', () => {
  const track = stopAfterEach();

  async function gatewayFor(
    execution: Record<string, unknown>,
    upstreams: readonly Record<string, unknown>[] = [],
  ): Promise<GatewayProcess> {
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
          { execution: { maxResponseBytes: 8 * 1024 * 1024, ...execution }, upstreams },
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

  it('variant: upstream answers take from the same budget: with a Tool Service answer held, an upstream call whose answer would pass it ends "busy", and a later one is served', async () => {
    const up = track(await ScriptedUpstream.start({ tools: [upTool('report')] }));
    // 600 KiB of text in two halves, 1.5 s apart: the first half is held meanwhile
    up.onTool('report', (req) => {
      const head = `{"jsonrpc":"2.0","id":${JSON.stringify(req.id)},"result":{"content":[{"type":"text","text":"`;
      const half = 'a'.repeat(300 * 1024);
      return {
        headers: { 'content-type': 'application/json' },
        raw: [head + half, `${half}"}]}}`],
        chunkGapMs: 1500,
      };
    });
    const gateway = await gatewayFor(
      { maxResponseBytes: 1024 * 1024, maxInFlightAnswerBytes: 1024 * 1024 },
      [upstream('up', up.url)],
    );
    await waitFor(
      async () =>
        (await callTool(gateway.mcpUrl, 'up__report', {})).result?.content?.[0]?.text?.length ===
        600 * 1024,
      15_000,
    );
    const [bundled, first, second] = await Promise.all([
      callTool(gateway.mcpUrl, 'big.report', {}),
      new Promise((r) => setTimeout(r, 200)).then(() => callTool(gateway.mcpUrl, 'up__report', {})),
      new Promise((r) => setTimeout(r, 400)).then(() => callTool(gateway.mcpUrl, 'up__report', {})),
    ]);
    // 300 KiB of each held at once, then their second halves: together they pass 1 MiB, which
    // the bundle's 600 KiB alone never does (without the upstreams' bytes no call is busy)
    const results = [bundled, first, second].map((a) => a.result);
    const busy = results.filter((r) => r.isError === true);
    expect(busy.length).toBeGreaterThanOrEqual(1);
    for (const r of busy) expect(r.content[0].text).toContain('the gateway is busy');
    expect(results.filter((r) => r.isError === undefined).length).toBeGreaterThanOrEqual(1);
    // given back: a later upstream call is served whole
    const later = await callTool(gateway.mcpUrl, 'up__report', {});
    expect(later.result.content[0].text).toHaveLength(600 * 1024);
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

/**
 * docs/operations.md §2 "Calls nobody waits for": an answer nested too deep ends its call, whatever
 * else is in flight.
 */
describe('answers nested too deep', () => {
  const track = stopAfterEach();
  const deep = (levels: number): string => `${'['.repeat(levels)}1${']'.repeat(levels)}`;
  const SIX_MB_DEEP = Buffer.from(deep(3 * 1024 * 1024));

  it('ends 6 MB of nested brackets as too deep, serves the rest alike, and counts only real calls', async () => {
    const service = track(
      await TestToolService.start(
        manifest('rep', [
          tool({ name: 'rep.deep' }),
          tool({ name: 'rep.limit' }),
          tool({ name: 'rep.plain' }),
        ]),
      ),
    );
    const json = { 'content-type': 'application/json' };
    service.tools.set('rep.deep', () => ({ headers: json, body: SIX_MB_DEEP }));
    service.tools.set('rep.limit', () => ({ headers: json, body: deep(128) }));
    service.tools.set('rep.plain', () => ({ headers: json, body: '{"rows":[1,2,3]}' }));
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('rep', service, 'rep.')], {
          execution: { maxResponseBytes: 8 * 1024 * 1024 },
        }),
        waitReady: true,
      }),
    );
    const metrics = async (): Promise<string> =>
      (await fetch(`${gateway.managementUrl}/actuator/prometheus`)).text();
    // the start-up warm-up of the Tool Service client is no call: no series, no request
    expect(await metrics()).not.toMatch(/^mcp_gateway_tool_calls_total\{/m);
    expect(service.toolRequests()).toHaveLength(0);

    const names = ['rep.deep', 'rep.limit', 'rep.plain', 'rep.deep', 'rep.deep', 'rep.plain'];
    const answers = await Promise.all(names.map((name) => callTool(gateway.mcpUrl, name, {})));
    answers.forEach((answer, i) => {
      if (names[i] === 'rep.deep') {
        expect(answer.result.isError).toBe(true);
        expect(answer.result.content[0].text).toBe(
          'Tool rep.deep failed: the Tool Service answered HTTP 200 with JSON nested deeper than 128 levels.',
        );
      } else {
        expect(answer.result.isError).toBeUndefined();
        expect(answer.result.content[0].text).toBe(
          names[i] === 'rep.limit' ? deep(128) : '{"rows":[1,2,3]}',
        );
      }
    });
    const scrape = await metrics();
    expect(scrape).toMatch(/tool_calls_total\{tool="rep\.deep",outcome="tool_error"\} 3/);
    expect(scrape).toMatch(/tool_calls_total\{tool="rep\.plain",outcome="success"\} 2/);
  });
});
