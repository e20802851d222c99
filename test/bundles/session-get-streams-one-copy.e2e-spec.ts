import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { GatewayProcess, TEST_SESSION_KEYS } from '../support/gateway-process';
import { openLegacySession } from '../support/rpc';
import { SseReader } from '../support/sse-reader';
import { TestToolService } from '../support/tool-service';

const LIST_CHANGED = 'notifications/tools/list_changed';

/**
 * MCP 2025-11-25, basic/transports, Streamable HTTP, "Multiple Connections": "The client MAY
 * remain connected to multiple SSE streams simultaneously. The server MUST send each of its
 * JSON-RPC messages on only one of the connected streams; that is, it MUST NOT broadcast the
 * same message across multiple streams."
 *
 * The gateway accepts any number of GET streams for one 2025 session (docs/operations.md §11
 * "2025 GET stream"), but writes a session's list_changed on every one of them
 * (NotificationHub.toSession, and the catalog publication loop over all streams): a client
 * holding two streams gets every notification twice.
 */
describe.each(['fastify', 'node'])(
  'two GET streams of one 2025 session (MCP_HTTP_SERVER=%s)',
  (listener) => {
    let service: TestToolService;
    let gateway: GatewayProcess;

    beforeAll(async () => {
      service = await TestToolService.start(
        manifest('svc', [tool({ name: 'svc.echo' }), tool({ name: 'svc.other' })]),
      );
      gateway = await GatewayProcess.start({
        mcp: {
          ...gatewayConfig([bundle('svc', service, 'svc.')]),
          toolSearch: { enabled: true, select: true },
        },
        env: { MCP_SESSION_KEYS: TEST_SESSION_KEYS, MCP_HTTP_SERVER: listener },
        waitReady: true,
      });
    }, 60_000);
    afterAll(async () => {
      await gateway?.stop();
      await service?.stop();
    });

    it("carry each of the session's notifications on one stream only, never on both", async () => {
      const session = await openLegacySession(gateway.mcpUrl);
      const streams = [
        await SseReader.open(gateway.mcpUrl, 'GET', { ...session, accept: 'text/event-stream' }),
        await SseReader.open(gateway.mcpUrl, 'GET', { ...session, accept: 'text/event-stream' }),
      ];
      try {
        // both are accepted (the spec lets a client hold several)
        expect(streams.map((s) => s.status)).toEqual([200, 200]);
        // a selection tells the session list_changed on its GET stream when the call's answer
        // is JSON only (docs/operations.md §16 "Tool selection")
        const selected = await fetch(gateway.mcpUrl, {
          method: 'POST',
          headers: { ...session, 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: { name: 'gateway__select_tools', arguments: { names: ['svc.echo'] } },
          }),
        });
        expect(selected.status).toBe(200);
        await Promise.race(streams.map((s) => s.waitForMessage((m) => m.method === LIST_CHANGED)));
        // time for a second copy to arrive, if one is sent
        await new Promise((resolve) => setTimeout(resolve, 1500));
        const copies = streams.map(
          (s) => s.messages.filter((m) => m.method === LIST_CHANGED).length,
        );
        // one message, one stream: [1, 0] or [0, 1]
        expect(copies.reduce((a, b) => a + b, 0)).toBe(1);
      } finally {
        for (const s of streams) s.close();
      }
    }, 60_000);
  },
);
