/**
 * docs/operations.md §2 "Request limits on /mcp": a caller header that a source forwards as it
 * came (an upstream's `forwardHeaders`, configured or registered, and `Mcp-Param-*`) must arrive
 * at most once. node:http would join two `X-Tenant` lines into "acme, globex", and the upstream
 * would get that joined value: refused with 400 / -32600 on POST, GET and DELETE alike, on both
 * listeners (jest.config.js runs this suite under node:http too).
 */
import { connect } from 'node:net';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { ScriptedUpstream, upTool } from '../support/scripted-upstream';
import { admin, ADMIN_TOKEN, waitForTool } from '../admin/admin-support';

/** One raw HTTP/1.1 request with exactly these header lines; resolves with the whole answer. */
function raw(
  port: number,
  method: string,
  lines: readonly string[],
  body = '',
): Promise<{ status: string; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let got = '';
    socket.on('data', (c) => (got += c.toString('latin1')));
    socket.on('end', () => resolve({ status: got.split('\r\n', 1)[0] ?? '', text: got }));
    socket.on('error', reject);
    socket.write(
      `${method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n` +
        `Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n${lines.map((l) => `${l}\r\n`).join('')}\r\n${body}`,
    );
  });
}

function call(name: string): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name, arguments: {} },
  });
}

const REFUSED = 'HTTP/1.1 400 Bad Request';

describe('a header a source forwards, sent twice', () => {
  let up: ScriptedUpstream;
  let registered: ScriptedUpstream;
  let gateway: GatewayProcess;
  let port: number;

  beforeAll(async () => {
    up = await ScriptedUpstream.start({ tools: [upTool('who')] });
    registered = await ScriptedUpstream.start({ tools: [upTool('where')] });
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], {
        upstreams: [upstream('tenant', up.url, { forwardHeaders: ['X-Tenant'] })],
      }),
      env: { MCP_ADMIN_TOKEN: ADMIN_TOKEN },
      waitReady: true,
    });
    port = Number(new URL(gateway.mcpUrl).port);
  });

  afterAll(async () => {
    await gateway?.stop();
    await up?.stop();
    await registered?.stop();
  });

  it('is refused (400) like a repeated caller header, never forwarded joined into one value', async () => {
    const answer = await raw(
      port,
      'POST',
      ['X-Tenant: acme', 'x-tenant: globex'],
      call('tenant__who'),
    );
    const forwarded = up
      .rpcs('tools/call')
      .map((r) => r.headers['x-tenant'])
      .filter((v) => v !== undefined);
    expect({ status: answer.status, forwarded }).toEqual({ status: REFUSED, forwarded: [] });
    expect(answer.text).toContain('-32600');
    expect(answer.text).toContain('x-tenant');
  });

  it('is refused on GET (a listen) and DELETE too', async () => {
    for (const method of ['GET', 'DELETE'])
      expect((await raw(port, method, ['X-Tenant: acme', 'X-Tenant: globex'])).status).toBe(
        REFUSED,
      );
  });

  it('refuses an Mcp-Param-* header sent twice (a 2026 upstream gets those as sent)', async () => {
    const answer = await raw(
      port,
      'POST',
      ['Mcp-Param-Region: eu', 'Mcp-Param-Region: us'],
      call('tenant__who'),
    );
    expect(answer.status).toBe(REFUSED);
  });

  it("follows runtime registrations: a registered upstream's forwardHeaders are refused repeated while it is registered", async () => {
    const twice = ['X-Region: eu', 'X-Region: us'];
    // nobody forwards X-Region yet: node joins it, and nothing reaches a source by it
    expect((await raw(port, 'POST', twice, call('tenant__who'))).status).toBe('HTTP/1.1 200 OK');
    const posted = await admin(gateway, 'POST', '/admin/upstreams', {
      id: 'region',
      url: registered.url,
      forwardHeaders: ['X-Region'],
    });
    expect(posted.status).toBe(202);
    await waitForTool(gateway, 'region__where');
    expect((await raw(port, 'POST', twice, call('region__where'))).status).toBe(REFUSED);
    expect(registered.rpcs('tools/call')).toHaveLength(0);
    // once is fine
    expect((await raw(port, 'POST', ['X-Region: eu'], call('region__where'))).status).toBe(
      'HTTP/1.1 200 OK',
    );
    expect(registered.rpcs('tools/call').map((r) => r.headers['x-region'])).toEqual(['eu']);

    expect((await admin(gateway, 'DELETE', '/admin/upstreams/region')).status).toBeLessThan(300);
    await waitFor(
      async () => (await raw(port, 'POST', twice, call('tenant__who'))).status !== REFUSED,
      20_000,
    );
  });
});
