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
 * readListPages (libs/upstream/src/list-pages.ts) keeps every `nextCursor` it has seen, whole,
 * in a Set (to spot a cursor seen twice), for up to registry.maxPagesPerList (100) pages. Each
 * page is within maxResponseBytes (8 MiB), but an upstream whose every tools/list page is
 * `{"tools":[],"nextCursor":"<n>-<6 MiB>"}` makes one list pull hold ~600 MB of cursors at once
 * (and send each back as a 6 MiB request): memory grows with maxPagesPerList ×
 * maxResponseBytes, per list, per upstream (and per caller request for a `lists: live` one).
 * Found: gateway RSS +~700 MB during one pull.
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
      const until = Date.now() + 20_000;
      while (Date.now() < until && pages < 100) {
        peak = Math.max(peak, rssKb(pid));
        await sleep(50);
      }
      for (let i = 0; i < 10; i++) {
        peak = Math.max(peak, rssKb(pid));
        await sleep(50);
      }
      expect(pages).toBeGreaterThan(50);
      expect(peak - start).toBeLessThan(300 * 1024);
    } finally {
      await gateway.stop();
      await up.stop();
    }
  });
});
