import { readFileSync } from 'node:fs';
import { GatewayProcess } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { rpc } from '../../support/rpc';
import { ScriptedUpstream } from '../../support/scripted-upstream';

/** CPU seconds (user + system) the process has used so far. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * docs/security.md "Hostile sources: bounded work": what an upstream sends within the byte caps
 * must not cost the event loop more than its bytes. The SSE parser the gateway uses searched for
 * the next CR again from every line start of a chunk that holds one: an answer of blank lines
 * whose every read ends in a lone CR (a legal SSE line end) cost time quadratic in the chunk,
 * ~100 ms of event loop per 128 KiB read. Line ends are made LF in one pass before the parser
 * (libs/upstream/src/sse-line-ends.ts). The same answer with an `x` in place of each CR is the
 * yardstick: measured in the same test, so the machine's speed cancels out.
 */
describe('an SSE answer of blank lines, each chunk ending in a lone CR', () => {
  const CALLS = 6;
  let up: ScriptedUpstream;
  let gateway: GatewayProcess;
  /** Each answer: 56 chunks of 128 KiB (7.3 MB, under the 8 MiB answer cap), then the result. */
  let tail = '\r';

  beforeAll(async () => {
    up = await ScriptedUpstream.start({ tools: [{ name: 't', inputSchema: { type: 'object' } }] });
    up.onTool('t', (req) => ({
      headers: { 'content-type': 'text/event-stream' },
      raw: [
        ...Array.from({ length: 56 }, () => '\n'.repeat(131_071) + tail),
        `\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: req.id, result: { content: [{ type: 'text', text: 'ok' }] } })}\n\n`,
      ],
    }));
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], { upstreams: [upstream('u', up.url)] }),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await up?.stop();
  });

  /** The gateway's CPU seconds for CALLS concurrent calls, each answered correctly. */
  async function cpuFor(lineTail: string): Promise<number> {
    tail = lineTail;
    const pid = gateway.child.pid!;
    const before = cpuSeconds(pid);
    const answers = await Promise.all(
      Array.from({ length: CALLS }, () =>
        rpc(gateway.mcpUrl, 'tools/call', { name: 'u__t', arguments: {} }),
      ),
    );
    for (const answer of answers) expect(answer.json.result?.content?.[0]?.text).toBe('ok');
    return cpuSeconds(pid) - before;
  }

  it('costs the gateway about what the same bytes with no CR cost', async () => {
    await cpuFor('x'); // warm-up: code paths compiled, buffers grown
    const plain = await cpuFor('x');
    const withCr = await cpuFor('\r');
    // quadratic, it was 3–4 times the plain answer's CPU; linear, about the same
    expect(withCr).toBeLessThan(plain * 2 + 0.3);
  }, 90_000);
});
