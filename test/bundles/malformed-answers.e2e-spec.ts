import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { callTool } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

/** The raw bytes each tool's "Tool Service" answers, whatever was asked. */
const ANSWERS: Record<string, string> = {
  'raw.bad_chunk':
    'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n{}\r\n0\r\n\r\n',
  'raw.cl_and_te':
    'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n',
  'raw.huge_header': `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Filler: ${'a'.repeat(200 * 1024)}\r\nContent-Length: 2\r\n\r\n{}`,
  'raw.cut_short':
    'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":1',
  'raw.fine':
    'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{"ok":true}',
};

/** A TCP server that reads a request's head and answers the bytes its tool name selects. */
async function rawToolService(): Promise<{ port: number; stop: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let head = '';
    socket.on('data', (d: Buffer) => {
      head += d.toString('latin1');
      const line = /^POST \/mcp\/(\S+) HTTP/.exec(head);
      if (line === null || !head.includes('\r\n\r\n')) return;
      head = '';
      const bytes = ANSWERS[line[1] ?? ''] ?? 'HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n';
      // a cut-short answer: the connection closes before the promised body is complete
      if (line[1] === 'raw.cut_short') socket.end(bytes);
      else socket.write(bytes);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    stop: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/**
 * docs/operations.md §3, outcome `invalid_answer`: a malformed HTTP answer is an invalid answer,
 * not an unreachable service.
 */
describe('malformed HTTP answers from a Tool Service', () => {
  const track = stopAfterEach();

  it.each([
    ['raw.bad_chunk', 'an invalid chunk size'],
    ['raw.cl_and_te', 'Content-Length together with Transfer-Encoding'],
    ['raw.huge_header', 'a 200 KB response header'],
    ['raw.cut_short', 'a body cut short of its Content-Length'],
  ])('reports %s (%s) as an invalid answer with its own outcome label', async (name) => {
    const raw = await rawToolService();
    track({ stop: raw.stop });
    const manifests = track(
      await TestToolService.start(
        manifest(
          'raw',
          Object.keys(ANSWERS).map((n) => tool({ name: n })),
        ),
      ),
    );
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([
          bundle(
            'raw',
            {
              manifestUrl: manifests.manifestUrl,
              baseEndpoint: `http://127.0.0.1:${raw.port}/mcp`,
            },
            'raw.',
          ),
        ]),
        waitReady: true,
      }),
    );
    const fine = await callTool(gateway.mcpUrl, 'raw.fine', {});
    expect(fine.result.content[0].text).toBe('{"ok":true}');

    const call = await callTool(gateway.mcpUrl, name, {});
    expect(call.result.isError).toBe(true);
    expect(call.result.content[0].text).toContain('not valid HTTP');
    expect(call.result.content[0].text).not.toContain('could not be reached');
    expect(call.result.content[0].text).not.toContain('127.0.0.1');

    const scrape = await (await fetch(`${gateway.managementUrl}/actuator/prometheus`)).text();
    expect(scrape).toContain(
      `mcp_gateway_tool_calls_total{tool="${name}",outcome="invalid_answer"} 1`,
    );
    expect(scrape).toContain(
      'mcp_gateway_tool_service_responses_total{bundle="raw",status_class="invalid_answer"} 1',
    );
    expect(scrape).not.toContain('status_class="connect_error"');
  });
});
