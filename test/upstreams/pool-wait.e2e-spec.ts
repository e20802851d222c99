import { GatewayProcess } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { rpc } from '../support/rpc';
import { ScriptedUpstream, upTool } from '../support/scripted-upstream';

/**
 * docs/operations.md §1 `execution.maxConnectionsPerOrigin`: "more calls wait for a free one,
 * within their own timeout". With 4 connections, 12 calls of 1 s each to one reachable upstream
 * (connectMillis 500, callMillis 10 s): the 8 past the pool wait up to ~2 s and succeed; they
 * failed after 500 ms with "could not connect to the upstream within 500 ms", the connect bound
 * counting the wait for a free connection.
 */
describe('calls past the connections to one upstream', () => {
  let up: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    up = await ScriptedUpstream.start({ tools: [upTool('slow')] });
    up.onTool('slow', async () => {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      return { result: { content: [{ type: 'text', text: 'ok' }] } };
    });
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], {
        execution: { maxConnectionsPerOrigin: 4 },
        upstreams: [
          upstream('u', up.url, { timeouts: { connectMillis: 500, callMillis: 10_000 } }),
        ],
      }),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await up?.stop();
  });

  it('wait for a free connection within their own timeout, and all succeed', async () => {
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        rpc(gateway.mcpUrl, 'tools/call', { name: 'u__slow', arguments: {} }, {}, i + 1),
      ),
    );
    const texts = answers.map((a) => a.json.result?.content?.[0]?.text as string | undefined);
    expect(texts).toEqual(Array.from({ length: 12 }, () => 'ok'));
  });
});
