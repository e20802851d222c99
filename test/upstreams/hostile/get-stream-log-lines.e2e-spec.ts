import { GatewayProcess, waitFor } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { ScriptedUpstream } from '../../support/scripted-upstream';

/** One more than `mcp.execution.maxResponseBytes` by default (8 MiB): one event over the cap. */
const OVER_CAP = 8 * 1024 * 1024 + 1;

/**
 * A 2025 upstream's standalone GET stream (the gateway's own, one per session) that carries
 * messages the gateway cannot read, or an event over the byte cap that cuts the stream (it is
 * re-opened with backoff): what a 2026 listen held on an upstream says in the log, this says
 * too, at most one line a minute each however often the upstream does it (docs/operations.md
 * §10 "Nesting", §4 "What outsiders can make the gateway log"). Silent, an operator could not
 * tell why an upstream's list changes or resource updates never arrive.
 */
describe('an upstream whose GET stream carries what the gateway cannot read', () => {
  let up: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    up = await ScriptedUpstream.start({
      sessionId: 'sess-1',
      getStream: true,
      tools: [{ name: 't', inputSchema: { type: 'object' } }],
    });
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], { upstreams: [upstream('up', up.url)] }),
      waitReady: true,
    });
    await waitFor(
      () => up.openStreams > 0,
      10_000,
      () => 'no GET stream opened',
    );
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await up?.stop();
  });

  const lines = (pattern: RegExp): string[] =>
    gateway.output.split('\n').filter((line) => pattern.test(line));

  it('messages dropped unread are counted in one line; the stream goes on', async () => {
    const deep = '['.repeat(200) + ']'.repeat(200);
    up.pushRaw(
      `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"data":${deep}}}\n\n` +
        'data: not json\n\n' +
        'data: [1,2]\n\n',
    );
    // the stream goes on: a list_changed after them is still seen (the upstream is pulled)
    const pulls = up.rpcs('tools/list').length;
    up.push({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    await waitFor(
      () => up.rpcs('tools/list').length > pulls,
      10_000,
      () => 'no pull after it',
    );
    await waitFor(
      () => lines(/Upstream up: \d+ message\(s\) on its GET stream dropped unread/).length > 0,
      10_000,
      () => 'no line for the dropped messages',
    );
    // one line for the first; the others wait for the end of its minute
    expect(lines(/on its GET stream dropped unread/)).toHaveLength(1);
  });

  it('an event over the byte cap cuts the stream; its re-opening is written once however often it fails', async () => {
    const opened = up.requests.filter((r) => r.httpMethod === 'GET').length;
    // every GET stream opened from now on gets an event over the cap at once
    const timer = setInterval(() => up.pushRaw(`data: ${'x'.repeat(OVER_CAP)}\n\n`), 100);
    try {
      await waitFor(
        () => up.requests.filter((r) => r.httpMethod === 'GET').length >= opened + 3,
        20_000,
        () => 'the GET stream was not re-opened three times',
      );
    } finally {
      clearInterval(timer);
    }
    await waitFor(
      () => lines(/Upstream up: its GET stream failed \(.*exceeded the limit/).length > 0,
      10_000,
      () => 'no line for the failed GET stream',
    );
    expect(lines(/its GET stream failed/)).toHaveLength(1);
    expect(lines(/its GET stream failed/)[0]).toMatch(/re-opening it in \d+ ms/);
  });
});
