import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { GatewayProcess, TEST_SESSION_KEYS } from '../support/gateway-process';
import { openLegacySession, postRaw, rpc, STANDARD_HEADERS } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

/**
 * MCP 2025-11-25, basic/transports, "Protocol Version Header": the client MUST send
 * `MCP-Protocol-Version` "on all subsequent requests to the MCP server", and "If the server
 * receives a request with an invalid or unsupported MCP-Protocol-Version, it MUST respond with
 * 400 Bad Request." The gateway does so for a POSTed request, a GET and a DELETE
 * (docs/operations.md §9, §11; test/bundles/jsonrpc-wire), but a POSTed notification or
 * response with the same header is accepted, 202: LegacyCodec checks the header in `request`
 * only.
 */
describe.each(['fastify', 'node'])(
  'an unsupported MCP-Protocol-Version on a 2025 notification or response (MCP_HTTP_SERVER=%s)',
  (listener) => {
    let service: TestToolService;
    let gateway: GatewayProcess;

    beforeAll(async () => {
      service = await TestToolService.start(manifest('svc', [tool({ name: 'svc.echo' })]));
      gateway = await GatewayProcess.start({
        mcp: gatewayConfig([bundle('svc', service, 'svc.')]),
        env: { MCP_SESSION_KEYS: TEST_SESSION_KEYS, MCP_HTTP_SERVER: listener },
        waitReady: true,
      });
    }, 60_000);
    afterAll(async () => {
      await gateway?.stop();
      await service?.stop();
    });

    it('a request with it is 400 (as documented and tested)', async () => {
      const session = await openLegacySession(gateway.mcpUrl);
      const answer = await rpc(gateway.mcpUrl, 'ping', undefined, {
        ...session,
        'mcp-protocol-version': '1999-01-01',
      });
      expect(answer.status).toBe(400);
    });

    it.each([
      ['notifications/initialized', { jsonrpc: '2.0', method: 'notifications/initialized' }],
      [
        'notifications/cancelled',
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } },
      ],
      ['a response', { jsonrpc: '2.0', id: 'srv-1', result: {} }],
    ])('%s with it is 400 too, on a session and without one', async (_label, message) => {
      const session = await openLegacySession(gateway.mcpUrl);
      for (const headers of [session, {}]) {
        const answer = await postRaw(gateway.mcpUrl, JSON.stringify(message), {
          ...STANDARD_HEADERS,
          ...headers,
          'mcp-protocol-version': '1999-01-01',
        });
        expect([Object.keys(headers).length > 0, answer.status]).toEqual([
          Object.keys(headers).length > 0,
          400,
        ]);
      }
    });
  },
);
