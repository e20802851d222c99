import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { rpc } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

/**
 * docs/tool-service.md §2 "Schema dialects": a Tool Service may declare draft-07 ("what the
 * official TypeScript SDK emits"), and "each schema is compiled in its own dialect". In draft-07
 * a `pattern` is an ECMA-262 regular expression without the Unicode flag (draft-07 Validation
 * §4.3 / §6.3.3; the "u" flag is a 2019-09/2020-12 recommendation), where `\-` is a valid escape
 * of "-". A draft-07 schema that is valid in its dialect must not reject the manifest:
 * contract §7 rejects a bundle for a rule it breaks, and one rejected tool takes every tool of
 * the bundle with it.
 */
describe('a draft-07 schema with a pattern valid in draft-07', () => {
  const track = stopAfterEach();

  it('is accepted: the bundle is healthy and the tool listed', async () => {
    const service = track(
      await TestToolService.start(
        manifest('ins', [
          tool({ name: 'ins.other' }),
          tool({
            name: 'ins.phone',
            inputSchema: {
              $schema: 'http://json-schema.org/draft-07/schema#',
              type: 'object',
              properties: { phone: { type: 'string', pattern: '^\\d{2,3}\\-\\d{3,4}\\-\\d{4}$' } },
              required: ['phone'],
            },
          }),
        ]),
      ),
    );
    const gateway = track(
      await GatewayProcess.start({ mcp: gatewayConfig([bundle('ins', service, 'ins.')]) }),
    );
    await waitFor(
      async () =>
        ((await gateway.bundleStatus('ins')).lastAttemptAt !== null &&
          (await gateway.bundleStatus('ins')).status !== 'unreachable') ||
        (await gateway.bundleStatus('ins')).consecutiveFailures > 0,
    );
    const status = await gateway.bundleStatus('ins');
    const listed = await rpc(gateway.mcpUrl, 'tools/list');
    expect({
      status: status.status,
      reason: status.lastFailureReason,
      detail: status.detail ?? null,
      tools: listed.json?.result?.tools?.map((t: any) => t.name) ?? null,
    }).toEqual({
      status: 'healthy',
      reason: null,
      detail: null,
      tools: ['ins.other', 'ins.phone'],
    });
  });
});
