import { connect } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool, upstream } from '../support/fixtures';
import { ScriptedUpstream, upTool } from '../support/scripted-upstream';
import { STANDARD_HEADERS } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

const slowTool = manifest('ins', [tool({ name: 'ins.slow', meta: { timeoutMillis: 30_000 } })]);

function callBody(id: number, name = 'ins.slow'): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, arguments: {} },
  });
}

/**
 * docs/operations.md §2 "Calls nobody waits for": work nobody waits for is stopped at the Tool
 * Service.
 */
describe('cancelled and abandoned calls', () => {
  const track = stopAfterEach();

  async function start(): Promise<{ service: TestToolService; gateway: GatewayProcess }> {
    const service = track(await TestToolService.start(slowTool));
    service.tools.set('ins.slow', () => ({ hang: true }));
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('ins', service, 'ins.')], {
          discovery: { maxToolTimeoutMillis: 30_000 },
        }),
        waitReady: true,
      }),
    );
    return { service, gateway };
  }

  it('closes the Tool Service request when the client drops each of many calls', async () => {
    const { service, gateway } = await start();
    const controllers = Array.from({ length: 40 }, () => new AbortController());
    const calls = controllers.map((controller, i) =>
      fetch(gateway.mcpUrl, {
        method: 'POST',
        headers: STANDARD_HEADERS,
        body: callBody(i + 1),
        signal: controller.signal,
      }).catch(() => undefined),
    );
    // the fault as reported drops each call after 50 ms; here, once each has reached the Tool
    // Service, so that the test does not depend on how fast a loaded machine dispatches
    await waitFor(() => service.toolRequests('ins.slow').length === 40, 10_000);
    await new Promise((r) => setTimeout(r, 50));
    for (const controller of controllers) controller.abort();
    await Promise.all(calls);
    // every Tool Service request is cut long before the tool's 30 s timeout
    await waitFor(() => service.openRequests === 0, 5000);
    await waitFor(async () =>
      (await (await fetch(`${gateway.managementUrl}/actuator/prometheus`)).text()).includes(
        'mcp_gateway_tool_calls_total{tool="ins.slow",outcome="cancelled"} 40',
      ),
    );
  });

  it('aborts the call named by notifications/cancelled from the same session (official SDK client)', async () => {
    const { service, gateway } = await start();
    const client = new Client({ name: 'cancel-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(gateway.mcpUrl)));
    try {
      const controller = new AbortController();
      const call = client
        .callTool({ name: 'ins.slow', arguments: {} }, undefined, { signal: controller.signal })
        .then(
          () => 'answered',
          () => 'rejected',
        );
      await waitFor(() => service.toolRequests('ins.slow').length === 1, 5000);
      expect(service.openRequests).toBeGreaterThan(0);
      controller.abort('user gave up'); // the SDK sends notifications/cancelled
      expect(await call).toBe('rejected');
      await waitFor(() => service.openRequests === 0, 5000);
    } finally {
      await client.close();
    }
  });

  it('matches notifications/cancelled without a session by request id on the same connection only', async () => {
    const { service, gateway } = await start();
    const port = Number(new URL(gateway.mcpUrl).port);
    const post = (body: string): string =>
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
      `Accept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const cancel = (id: number): string =>
      JSON.stringify({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: id },
      });

    // Another connection naming the same id cancels nothing.
    const owner = connect(port, '127.0.0.1');
    let answer = '';
    owner.on('data', (d: Buffer) => (answer += d.toString()));
    owner.write(post(callBody(5)));
    await waitFor(() => service.toolRequests('ins.slow').length === 1, 5000);
    const stranger = connect(port, '127.0.0.1');
    stranger.write(post(cancel(5)));
    await new Promise((r) => setTimeout(r, 500));
    expect(service.openRequests).toBeGreaterThan(0);
    stranger.destroy();

    // The same connection (pipelined after the call) cancels it: the call's event stream ends
    // without a response (MCP 2025-11-25 "Cancellation"), then the notification's 202 follows.
    owner.write(post(cancel(5)));
    await waitFor(() => answer.includes('HTTP/1.1 202'), 5000);
    await waitFor(() => service.openRequests === 0, 5000);
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*content-type: text\/event-stream/i);
    expect(answer).not.toContain('"id":5');
    owner.destroy();
  });

  it('matches notifications/cancelled to a request whose id no JavaScript number holds exactly (an integer past 2^53, 1.50): the id as the number it reads as', async () => {
    const { service, gateway } = await start();
    const port = Number(new URL(gateway.mcpUrl).port);
    const post = (body: string): string =>
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
      `Accept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    for (const [n, spelling] of ['9007199254740993', '1.50'].entries()) {
      const owner = connect(port, '127.0.0.1');
      let answer = '';
      owner.on('data', (d: Buffer) => (answer += d.toString()));
      owner.write(
        post(
          `{"jsonrpc":"2.0","id":${spelling},"method":"tools/call","params":{"name":"ins.slow","arguments":{}}}`,
        ),
      );
      await waitFor(() => service.toolRequests('ins.slow').length === n + 1, 5000);
      owner.write(
        post(
          `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":${spelling}}}`,
        ),
      );
      await waitFor(() => answer.includes('HTTP/1.1 202'), 5000);
      await waitFor(
        () => service.openRequests === 0,
        5000,
        () => `${spelling}: not cancelled`,
      );
      owner.destroy();
    }
  });

  it('sends no response to a cancelled call (bundle or upstream tool) on an event stream; a JSON-only client still gets its isError result', async () => {
    const { service, gateway } = await start();
    const up = track(await ScriptedUpstream.start({ tools: [upTool('wait')] }));
    up.onTool('wait', () => ({ hang: true }));
    const withUpstream = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('ins', service, 'ins.')], {
          discovery: { maxToolTimeoutMillis: 30_000 },
          upstreams: [upstream('up', up.url, { timeouts: { callMillis: 30_000 } })],
        }),
        waitReady: true,
      }),
    );
    for (const [url, name, accept] of [
      [gateway.mcpUrl, 'ins.slow', 'application/json, text/event-stream'],
      [withUpstream.mcpUrl, 'up__wait', 'application/json, text/event-stream'],
      [gateway.mcpUrl, 'ins.slow', 'application/json'],
    ] as const) {
      const seen = name === 'ins.slow' ? () => service.openRequests : () => up.calls('wait').length;
      const before = seen();
      const owner = await rawConnection(url);
      owner.send(callBody(8, name), accept);
      await waitFor(() => seen() > before, 5000);
      owner.send(
        JSON.stringify({
          jsonrpc: '2.0',
          method: 'notifications/cancelled',
          params: { requestId: 8, reason: 'gave up' },
        }),
        accept,
      );
      await waitFor(() => owner.text().includes('HTTP/1.1 202'), 5000);
      if (accept.includes('text/event-stream')) expect(owner.text()).not.toContain('"id":8');
      else expect(owner.text()).toContain('was cancelled');
      owner.close();
    }
    // the upstream was told too
    await waitFor(() => up.rpcs('notifications/cancelled').length === 1, 5000);
  });
});

/** One keep-alive connection to the gateway that pipelines raw POSTs; what came back as text. */
async function rawConnection(
  url: string,
): Promise<{ send(body: string, accept: string): void; text(): string; close(): void }> {
  const socket = connect(Number(new URL(url).port), '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  let received = '';
  socket.on('data', (d: Buffer) => (received += d.toString()));
  return {
    send: (body, accept) =>
      socket.write(
        `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
          `Accept: ${accept}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      ),
    text: () => received,
    close: () => socket.destroy(),
  };
}
