import type { ServerResponse } from 'node:http';
import { GatewayProcess, waitFor } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { ScriptedUpstream, upTool } from '../../support/scripted-upstream';

jest.setTimeout(120_000);

/**
 * docs/security.md / operations.md §10: an upstream's answer, and one event of its GET stream,
 * is capped at `execution.maxResponseBytes` (http-exchange `capScope: 'event'` on the standalone
 * stream: "per-event caps"). The per-event counter is reset on every SSE comment line
 * (http-exchange.ts onComment: `if (request.capScope === 'event') counted = 0`), but a comment in
 * the middle of an event does not end the event: eventsource-parser keeps appending `data:` lines
 * to the same pending event. A hostile 2025 upstream that writes `data: <16 KiB>\n: k\n` forever,
 * never a blank line, makes the gateway buffer one event without bound: its memory grows with
 * every byte and the stream is never closed as too large.
 */
const CAP = 256 * 1024;
const LINE = `data: ${'x'.repeat(16 * 1024)}\n: k\n`;

async function write(res: ServerResponse, text: string): Promise<boolean> {
  if (res.destroyed || res.writableEnded) return false;
  res.setMaxListeners(0);
  if (!res.write(text)) await new Promise<void>((r) => res.once('drain', r).once('close', r));
  return !res.destroyed;
}

describe('an upstream GET stream whose one event never ends, cut by comment lines', () => {
  let up: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    up = await ScriptedUpstream.start({ tools: [upTool('t')], sessionId: 'S1', getStream: true });
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], {
        upstreams: [upstream('u', up.url)],
        execution: { maxResponseBytes: CAP },
      }),
    });
    await waitFor(() => up.openStreams === 1, 20_000);
  });
  afterAll(async () => {
    await gateway?.stop();
    await up?.stop();
  });

  it('control: the same event without comment lines is dropped near the cap', async () => {
    const stream = [...((up as any).streams as Set<ServerResponse>)][0]!;
    let closed = false;
    stream.once('close', () => (closed = true));
    let sent = 0;
    const plain = `data: ${'x'.repeat(16 * 1024)}\n`;
    while (!closed && sent < 64 * 1024 * 1024) {
      if (!(await write(stream, plain.repeat(16)))) break;
      sent += plain.length * 16;
    }
    expect(sent).toBeLessThan(16 * 1024 * 1024);
    // the gateway opens its GET stream again (backoff)
    await waitFor(() => up.openStreams === 1, 20_000);
  });

  it(`the gateway drops the stream once one event passes maxResponseBytes (${CAP}), comments or not`, async () => {
    const stream = [...((up as any).streams as Set<ServerResponse>)][0]!;
    let closed = false;
    stream.once('close', () => (closed = true));
    // 64 MiB of one event's data lines, 256 times the cap, a comment after each 16 KiB line
    let sent = 0;
    while (!closed && sent < 64 * 1024 * 1024) {
      if (!(await write(stream, LINE.repeat(16)))) break;
      sent += LINE.length * 16;
    }
    // the gateway must have closed the stream long before 64 MiB: a few times the cap at most
    expect(sent).toBeLessThan(16 * 1024 * 1024);
    expect(closed).toBe(true);
  });
});
