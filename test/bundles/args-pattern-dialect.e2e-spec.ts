import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { callTool } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

/**
 * contract §5: inputSchema is JSON Schema 2020-12, whose `pattern` is an ECMA-262 regular
 * expression (JSON Schema Validation 2020-12 §6.3.3; Core §6.4). docs/tool-service.md §4: the
 * gateway checks arguments against the inputSchema, "arguments that do not match never reach
 * you … you can count on the schema's types, required properties and bounds". The gateway
 * matches patterns with RE2 (for linear time), whose `.` and `\s` differ from ECMA-262: RE2's `.`
 * matches \r, U+2028 and U+2029, and its `\s`/`\S` know only ASCII white space. The outcome of a
 * check must be the schema's (ECMA-262), whatever engine runs it.
 */
describe('argument patterns keep ECMA-262 semantics', () => {
  const track = stopAfterEach();

  it('refuses what the pattern refuses and passes what it passes', async () => {
    const service = track(
      await TestToolService.start(
        manifest('ins', [
          tool({
            name: 'ins.claim',
            inputSchema: {
              type: 'object',
              properties: {
                title: { type: 'string', pattern: '^.{1,40}$' }, // one line
                policyId: { type: 'string', pattern: '^\\S+$' }, // no white space
                padding: { type: 'string', pattern: '^\\s*$' }, // white space only
              },
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
    const refused = async (args: Record<string, unknown>): Promise<boolean> => {
      const answer = await callTool(gateway.mcpUrl, 'ins.claim', args);
      return /Invalid arguments/.test(answer.result.content[0].text);
    };
    const outcome = {
      // ECMA-262: "." never matches CR or U+2028: invalid
      titleWithCR: await refused({ title: 'line one\rline two' }),
      titleWithLS: await refused({ title: 'line one\u2028line two' }),
      // ECMA-262: U+00A0 is white space, so \S does not match it: invalid
      policyIdWithNbsp: await refused({ policyId: 'P-1\u00a0OR\u00a01' }),
      // ECMA-262: \s matches U+00A0 and U+FEFF: valid
      paddingNbsp: await refused({ padding: '\u00a0\ufeff' }),
    };
    expect(outcome).toEqual({
      titleWithCR: true,
      titleWithLS: true,
      policyIdWithNbsp: true,
      paddingNbsp: false,
    });
  });

  it('checks a Tool Service answer against its outputSchema patterns with the same semantics', async () => {
    const service = track(
      await TestToolService.start(
        manifest('ins', [
          tool({
            name: 'ins.policy',
            outputSchema: {
              type: 'object',
              properties: { policyId: { type: 'string', pattern: '^\\S+$' } },
              required: ['policyId'],
            },
          }),
        ]),
      ),
    );
    // the answer breaks the pattern under ECMA-262 (U+00A0 is white space)
    service.tools.set('ins.policy', () => ({ body: { policyId: 'P-1\u00a0X' } }));
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('ins', service, 'ins.')]),
        waitReady: true,
      }),
    );
    const answer = await callTool(gateway.mcpUrl, 'ins.policy', {});
    // docs/operations.md §6 "Structured output": an answer that does not match becomes isError
    expect({
      isError: answer.result.isError ?? false,
      structured: answer.result.structuredContent ?? null,
    }).toEqual({
      isError: true,
      structured: null,
    });
  });
});
