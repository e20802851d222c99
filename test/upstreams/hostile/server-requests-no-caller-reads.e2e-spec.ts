import { Readable } from 'node:stream';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayProcess, waitFor } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { rpc } from '../../support/rpc';
import { ScriptedUpstream, upTool, type ReceivedRequest } from '../../support/scripted-upstream';

/**
 * docs/operations.md §10 "Relaying"; docs/security.md "Server→client requests": "A request that
 * belongs to no caller … is answered -32601 at once, with the gateway's own credential … A
 * `ping` is answered with an empty result wherever it comes." That holds on two streams no
 * caller reads:
 *  1. the SSE answer the upstream gives to a JSON-RPC *response* the gateway POSTs (its -32601
 *     to a GET-stream request, a ping's result, a client's relayed answer);
 *  2. a call's SSE answer AFTER the response, in the second it is given to end (the call has
 *     ended: no caller owns what comes then, and nothing of it is relayed).
 */
const frame = (m: object): string => `event: message\ndata: ${JSON.stringify(m)}\n\n`;

/** The responses (no method) the gateway POSTed to the upstream for request id `id`. */
function answersTo(up: ScriptedUpstream, id: string): ReceivedRequest[] {
  return up.requests.filter(
    (r) => r.httpMethod === 'POST' && r.method === undefined && r.message?.id === id,
  );
}

describe('server→client requests on streams no caller reads are answered', () => {
  let up: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    up = await ScriptedUpstream.start({
      tools: [upTool('after')],
      sessionId: 'late-session-1',
      getStream: true,
    });
    // the call's answer: the response first, then a ping and a request on the same stream
    up.onTool('after', (req) => ({
      headers: { 'content-type': 'text/event-stream' },
      raw: [
        frame({ jsonrpc: '2.0', id: req.id, result: { content: [{ type: 'text', text: 'ok' }] } }),
        frame({ jsonrpc: '2.0', id: 'after-ping', method: 'ping' }),
        frame({ jsonrpc: '2.0', id: 'after-ask', method: 'roots/list' }),
      ],
      chunkGapMs: 50,
    }));
    // The gateway's POST of a response to `g1`: answered with an SSE stream holding two requests.
    const original = (up as any).handle.bind(up) as (
      req: IncomingMessage,
      res: ServerResponse,
    ) => Promise<void>;
    (up as any).handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
      if (req.method !== 'POST') return original(req, res);
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      let message: Record<string, any> | undefined;
      try {
        message = JSON.parse(body.toString('utf8'));
      } catch {
        message = undefined;
      }
      if (message?.method === undefined && message?.id === 'g1') {
        up.requests.push({
          httpMethod: 'POST',
          path: req.url ?? '',
          headers: req.headers,
          body,
          message,
          id: 'g1',
          at: Date.now(),
        });
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(
          frame({ jsonrpc: '2.0', id: 'g2-ping', method: 'ping' }) +
            frame({ jsonrpc: '2.0', id: 'g3-ask', method: 'roots/list' }),
        );
        return;
      }
      const copy = Object.assign(Readable.from([body]), {
        method: req.method,
        url: req.url,
        headers: req.headers,
      });
      return original(copy as unknown as IncomingMessage, res);
    };
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], { upstreams: [upstream('late', up.url)] }),
      waitReady: true,
    });
    await waitFor(
      () => up.openStreams > 0,
      15_000,
      () => 'the gateway opened no GET stream',
    );
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await up?.stop();
  });

  it('control: a request on the shared GET stream is answered -32601', async () => {
    up.push({ jsonrpc: '2.0', id: 'g1', method: 'roots/list' });
    await waitFor(
      () => answersTo(up, 'g1').length > 0,
      10_000,
      () => 'g1 never answered',
    );
    expect(answersTo(up, 'g1')[0]?.message?.error?.code).toBe(-32601);
  });

  it('a ping and a request on the SSE answer to that POSTed response are answered too', async () => {
    await waitFor(() => answersTo(up, 'g1').length > 0, 10_000);
    // generous: an answer owed to no caller is sent "at once"
    await new Promise((r) => setTimeout(r, 4000));
    expect({
      ping: answersTo(up, 'g2-ping').map((r) => r.message),
      ask: answersTo(up, 'g3-ask').map((r) => r.message?.error?.code),
    }).toEqual({
      ping: [{ jsonrpc: '2.0', id: 'g2-ping', result: {} }],
      ask: [-32601],
    });
  });

  it("a ping and a request sent on a call's SSE answer after its response are answered", async () => {
    const answer = await rpc(gateway.mcpUrl, 'tools/call', { name: 'late__after', arguments: {} });
    expect(answer.json?.result?.content?.[0]?.text).toBe('ok');
    await new Promise((r) => setTimeout(r, 4000));
    expect({
      ping: answersTo(up, 'after-ping').map((r) => r.message),
      ask: answersTo(up, 'after-ask').map((r) => r.message?.error?.code),
    }).toEqual({
      ping: [{ jsonrpc: '2.0', id: 'after-ping', result: {} }],
      ask: [-32601],
    });
  });
});
