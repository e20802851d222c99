import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { callTool } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

/**
 * contract §5: inputSchema/outputSchema are JSON Schema 2020-12. Validation §6.2.1: "A numeric
 * instance is valid only if division by this keyword's value results in an integer." 19.99 is
 * 1999 × 0.01 and 0.07 is 7 × 0.01: both are valid against `multipleOf: 0.01` (the usual way to
 * say "an amount in cents"). docs/tool-service.md §4 and operations.md §6: the gateway checks
 * arguments (and answers, with an outputSchema) against the schema; it must not refuse what
 * the schema accepts because of binary floating-point rounding.
 */
describe('multipleOf with a decimal step', () => {
  const track = stopAfterEach();

  async function start(): Promise<GatewayProcess> {
    const amount = { type: 'number', multipleOf: 0.01 };
    const service = track(
      await TestToolService.start(
        manifest('ins', [
          tool({
            name: 'ins.premium',
            inputSchema: { type: 'object', properties: { amount }, required: ['amount'] },
            outputSchema: {
              type: 'object',
              properties: { premium: amount },
              required: ['premium'],
            },
          }),
        ]),
      ),
    );
    service.tools.set('ins.premium', () => ({ body: { premium: 19.99 } }));
    return track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('ins', service, 'ins.')]),
        waitReady: true,
      }),
    );
  }

  it('passes arguments that are exact multiples of 0.01 (0.07) to the Tool Service', async () => {
    const gateway = await start();
    const answer = await callTool(gateway.mcpUrl, 'ins.premium', { amount: 0.07 });
    expect(answer.result.content[0].text).not.toMatch(/Invalid arguments/);
  });

  it('returns an answer that is an exact multiple of 0.01 (19.99) as structuredContent, not isError', async () => {
    const gateway = await start();
    const answer = await callTool(gateway.mcpUrl, 'ins.premium', { amount: 1 });
    expect({
      isError: answer.result.isError ?? false,
      text: answer.result.content[0].text,
    }).toEqual({
      isError: false,
      text: '{"premium":19.99}',
    });
    expect(answer.result.structuredContent).toEqual({ premium: 19.99 });
  });
});
