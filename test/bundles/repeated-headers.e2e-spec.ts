import { request } from 'node:http';
import { connect } from 'node:net';
import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { callTool } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

/** POST /mcp with header lines as given (an array value is sent as repeated lines). */
function post(
  url: string,
  headers: Record<string, string | string[]>,
  body: string,
): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            json: JSON.parse(Buffer.concat(chunks).toString()),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const CALL = JSON.stringify({
  jsonrpc: '2.0',
  id: 7,
  method: 'tools/call',
  params: { name: 'ins.echo', arguments: { q: 1 } },
});

/**
 * docs/operations.md §2 "Request limits on /mcp": a repeated identity header is refused, never
 * merged and forwarded.
 */
describe('repeated caller headers', () => {
  const track = stopAfterEach();

  async function start(): Promise<{ service: TestToolService; gateway: GatewayProcess }> {
    const service = track(
      await TestToolService.start(manifest('ins', [tool({ name: 'ins.echo' })])),
    );
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([
          bundle('ins', service, 'ins.', { authorization: { mode: 'passthrough' } }),
        ]),
        waitReady: true,
      }),
    );
    return { service, gateway };
  }

  it('refuses employee-no sent twice with 400 / -32600, and forwards nothing', async () => {
    const { service, gateway } = await start();
    const answer = await post(gateway.mcpUrl, { 'employee-no': ['E12345', 'ADMIN'] }, CALL);
    expect(answer.status).toBe(400);
    expect(answer.json.error.code).toBe(-32600);
    expect(answer.json.error.message).toContain('employee-no');
    expect(service.toolRequests()).toHaveLength(0);
  });

  it.each(['guid', 'x-request-id', 'virtual-employee-no', 'Authorization'])(
    'refuses %s sent twice the same way',
    async (name) => {
      const { service, gateway } = await start();
      const answer = await post(gateway.mcpUrl, { [name]: ['one', 'two'] }, CALL);
      expect(answer.status).toBe(400);
      expect(answer.json.error.code).toBe(-32600);
      expect(service.toolRequests()).toHaveLength(0);
    },
  );

  it('refuses two Host headers (RFC 9112 §3.2), whichever comes first', async () => {
    const { service, gateway } = await start();
    const port = Number(new URL(gateway.mcpUrl).port);
    const raw = (hosts: string[]): Promise<string> =>
      new Promise((resolve) => {
        const socket = connect(port, '127.0.0.1');
        let answer = '';
        socket.on('data', (d: Buffer) => {
          answer += d.toString();
          if (answer.includes('\r\n\r\n')) socket.destroy();
        });
        socket.on('close', () => resolve(answer));
        socket.write(
          `POST /mcp HTTP/1.1\r\n${hosts.map((h) => `Host: ${h}\r\n`).join('')}` +
            `Content-Type: application/json\r\nAccept: application/json\r\n` +
            `Content-Length: ${Buffer.byteLength(CALL)}\r\n\r\n${CALL}`,
        );
      });
    for (const hosts of [
      ['127.0.0.1', 'evil.example'],
      ['evil.example', '127.0.0.1'],
    ]) {
      expect(await raw(hosts)).toMatch(/^HTTP\/1\.1 400/);
    }
    expect(service.toolRequests()).toHaveLength(0);
  });

  it('forwards each header once when sent once', async () => {
    const { service, gateway } = await start();
    const answer = await post(gateway.mcpUrl, { 'employee-no': 'E12345', guid: 'g-1' }, CALL);
    expect(answer.status).toBe(200);
    expect(answer.json.result.isError).toBeUndefined();
    const [forwarded] = service.toolRequests('ins.echo');
    expect(forwarded?.headers['employee-no']).toBe('E12345');
    expect(forwarded?.headers.guid).toBe('g-1');
    expect((await callTool(gateway.mcpUrl, 'ins.echo', {})).result.isError).toBeUndefined();
  });
});
