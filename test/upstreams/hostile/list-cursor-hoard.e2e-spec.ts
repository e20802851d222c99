import { execFileSync } from 'node:child_process';
import { GatewayProcess } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { ScriptedUpstream, upTool } from '../../support/scripted-upstream';

jest.setTimeout(120_000);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const rssKb = (pid: number) =>
  Number(
    execFileSync('ps', ['-o', 'rss=', '-p', String(pid)])
      .toString()
      .trim(),
  );

/**
 * docs/security.md "Hostile sources: bounded work": what an upstream sends "is bounded before it
 * costs the gateway its event loop or its memory: answers by execution.maxResponseBytes".
 *
 * An upstream whose every tools/list page is `{"tools":[],"nextCursor":"<n>-<6 MiB>"}`: each page
 * is within maxResponseBytes (8 MiB), and a pull that kept every cursor it had seen whole (to spot
 * one seen twice) held ~600 MB at once over registry.maxPagesPerList (100) pages. Cursors are kept
 * as digests, and a list's pages together count as one answer (readListPages): the pull stops at
 * the second page, and the gateway stays within a few answers of memory.
 */
describe('an upstream whose list pages each carry a new multi-megabyte nextCursor', () => {
  it('one list pull does not hold every cursor: the gateway stays within a few answers of memory', async () => {
    const up = await ScriptedUpstream.start({ tools: [upTool('a')] });
    let pages = 0;
    const filler = 'c'.repeat(6 * 1024 * 1024);
    up.on('tools/list', () => ({ result: { tools: [], nextCursor: `${++pages}-${filler}` } }));
    const gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], {
        upstreams: [upstream('u', up.url, { timeouts: { listMillis: 30_000 } })],
      }),
    });
    try {
      const pid = gateway.child.pid!;
      const start = rssKb(pid);
      let peak = start;
      const until = Date.now() + 5_000;
      while (Date.now() < until && pages < 100) {
        peak = Math.max(peak, rssKb(pid));
        await sleep(50);
      }
      for (let i = 0; i < 10; i++) {
        peak = Math.max(peak, rssKb(pid));
        await sleep(50);
      }
      // two pages pass 8 MiB together: no third is asked for
      expect(pages).toBe(2);
      expect(peak - start).toBeLessThan(300 * 1024);
    } finally {
      await gateway.stop();
      await up.stop();
    }
  });
});
