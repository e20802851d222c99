import { GatewayProcess, waitFor } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { rpc } from '../../support/rpc';
import { modernRequest } from '../../support/modern-rpc';
import { ScriptedUpstream, upTool } from '../../support/scripted-upstream';

jest.setTimeout(60_000);

/**
 * SSE (WHATWG HTML §9.2.5 "Parsing an event stream"): `end-of-line = ( cr lf / cr / lf )`: a
 * lone CR ends a line, and an event is dispatched at the empty line that follows it. An
 * upstream answering a call with CR-only line endings (`data: …\r\r`) sends a complete event;
 * docs/operations.md §10 says JSON and SSE answers (B08: "messy SSE") are read.
 *
 * The gateway's reader (http-exchange.ts, eventsource-parser) holds a CR that is the last byte
 * it has seen (it might be the CR of a CRLF), and at the end of the answer feeds only
 * `decoder.end()` (''): the last event, whose empty line ends in that CR, is never dispatched.
 * The call's response is lost: "the upstream's event stream ended without the response".
 * Events earlier in the stream pass (the next chunk completes their CR).
 */
describe('an upstream answering with CR-only SSE line endings', () => {
  let leg: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    leg = await ScriptedUpstream.start({ tools: [upTool('cr')] });
    leg.onTool('cr', (req) => ({
      headers: { 'content-type': 'text/event-stream' },
      raw: [
        `event: message\rdata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'first' } })}\r\r`,
        `event: message\rdata: ${JSON.stringify({ jsonrpc: '2.0', id: req.id, result: { content: [{ type: 'text', text: 'cr ok' }] } })}\r\r`,
      ],
      chunkGapMs: 20,
    }));
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], { upstreams: [upstream('leg', leg.url)] }),
    });
    await waitFor(async () => {
      const view = (await (
        await fetch(`${gateway.managementUrl}/actuator/upstreams`)
      ).json()) as any;
      return view.upstreams.every((u: any) => u.lastAttemptAt !== null);
    }, 20_000);
  });
  afterAll(async () => {
    await gateway?.stop();
    await leg?.stop();
  });

  it('a 2025 client gets the result of the final CR-terminated event', async () => {
    const answer = await rpc(gateway.mcpUrl, 'tools/call', { name: 'leg__cr', arguments: {} });
    expect(answer.text).toContain('"first"');
    expect(answer.text).not.toContain('ended without the response');
    expect(answer.text).toContain('cr ok');
  });

  it('a 2026 client too', async () => {
    const answer = await modernRequest(
      gateway.mcpUrl,
      'tools/call',
      { name: 'leg__cr', arguments: {} },
      {},
    );
    expect(answer.text).not.toContain('ended without the response');
    expect(answer.text).toContain('cr ok');
  });
});
