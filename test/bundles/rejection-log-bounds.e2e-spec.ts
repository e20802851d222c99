import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { TestToolService } from '../support/tool-service';

/**
 * The warn line of a rejected manifest lists every problem with its cause (docs/operations.md
 * §2 "detail"): a name that broke the pattern, the declared `$schema`, ajv's message. These are
 * fragments of the Tool Service's answer, and the line comes back every round while it serves
 * that manifest: a cause must be quoted short, as a broken name or pattern already is, so the
 * service cannot set the size of the gateway's log lines (docs/security.md "Hostile sources:
 * bounded work").
 */
describe('the causes in the warn line of a rejected manifest', () => {
  const track = stopAfterEach();

  it.each([
    ['a declared $schema', { $schema: `https://x/${'s'.repeat(300_000)}`, type: 'object' }],
    ['an ajv message quoting a $ref', { type: 'object', $ref: `#/$defs/${'k'.repeat(300_000)}` }],
  ])('is quoted short: %s of 300,000 characters', async (_what, inputSchema) => {
    const service = track(
      await TestToolService.start(manifest('big', [tool({ name: 'big.a', inputSchema })])),
    );
    const gateway = track(
      await GatewayProcess.start({ mcp: gatewayConfig([bundle('big', service, 'big.')]) }),
    );
    await gateway.waitForOutput(
      /Bundle big revision r1: remote manifest rejected \(InputSchemaError\)/,
      30_000,
    );
    expect(await gateway.bundleStatus('big')).toMatchObject({
      lastFailureReason: 'InputSchemaError',
    });
    const longest = Math.max(...gateway.output.split('\n').map((line) => line.length));
    expect(longest).toBeLessThan(16 * 1024);
  });
});
