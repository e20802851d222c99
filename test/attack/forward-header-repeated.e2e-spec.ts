/**
 * attack: the rule that a caller header reaching a source "must arrive at most once" (two values
 * would reach the source joined into one, docs/operations.md §2 "Request limits on /mcp") holds for
 * the five contract headers towards a Tool Service, but not for an upstream's `forwardHeaders`
 * (e.g. `X-Tenant`, "what the upstream tells callers apart by", §11): node:http joins two
 * `X-Tenant` lines into "acme, globex" and the gateway forwards that joined value.
 */
import { connect } from 'node:net';
import { GatewayProcess } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { ScriptedUpstream, upTool } from '../support/scripted-upstream';

/** One raw HTTP/1.1 request with exactly these header lines; resolves with the status line. */
function rawPost(port: number, lines: readonly string[], body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let got = '';
    socket.on('data', (c) => (got += c.toString('latin1')));
    socket.on('end', () => resolve(got));
    socket.on('error', reject);
    socket.write(
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n` +
        `Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n${lines.map((l) => `${l}\r\n`).join('')}\r\n${body}`,
    );
  });
}

describe('attack: a forwardHeaders header sent twice', () => {
  let up: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    up = await ScriptedUpstream.start({ tools: [upTool('who')] });
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], {
        upstreams: [upstream('tenant', up.url, { forwardHeaders: ['X-Tenant'] })],
      }),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await up?.stop();
  });

  it('is refused (400) like a repeated caller header, never forwarded joined into one value', async () => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'tenant__who', arguments: {} },
    });
    const port = Number(new URL(gateway.mcpUrl).port);
    const answer = await rawPost(port, ['X-Tenant: acme', 'X-Tenant: globex'], body);
    const forwarded = up
      .rpcs('tools/call')
      .map((r) => r.headers['x-tenant'])
      .filter((v) => v !== undefined);
    expect({ status: answer.split('\r\n', 1)[0], forwarded }).toEqual({
      status: 'HTTP/1.1 400 Bad Request',
      forwarded: [],
    });
  });
});
