import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { callTool } from '../support/rpc';
import { modernRequest } from '../support/modern-rpc';
import { TestToolService } from '../support/tool-service';

/**
 * contract §10: "호출 소요 시간은 result.content[0]._meta.searchTime(ms)로 반환한다" — a bundle tool's
 * tools/call result carries its duration in content[0]._meta.searchTime; every other isError
 * result of a bundle tool has it (4xx, 5xx, timeout, unreachable, too large, busy). Agents that
 * read it must not meet a result without it when the gateway refused the arguments itself.
 */
describe('searchTime on every bundle tool result', () => {
  const track = stopAfterEach();

  it('is on the isError result of arguments refused against the inputSchema, in both eras', async () => {
    const service = track(
      await TestToolService.start(
        manifest('ins', [
          tool({
            name: 'ins.lookup',
            inputSchema: {
              type: 'object',
              properties: { policyNumber: { type: 'string' } },
              required: ['policyNumber'],
            },
          }),
        ]),
      ),
    );
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('ins', service, 'ins.')]),
        waitReady: true,
      }),
    );
    const legacy = await callTool(gateway.mcpUrl, 'ins.lookup', { policyNumber: 7 });
    const modern = (
      await modernRequest(gateway.mcpUrl, 'tools/call', { name: 'ins.lookup', arguments: {} }, {})
    ).json;
    for (const answer of [legacy, modern]) {
      expect(answer.result.isError).toBe(true);
      expect(answer.result.content[0].text).toMatch(/Invalid arguments/);
      expect(typeof answer.result.content[0]._meta?.searchTime).toBe('number');
    }
  });
});
