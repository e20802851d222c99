import { GatewayProcess } from '../support/gateway-process';
import { gatewayConfig } from '../support/fixtures';

/**
 * docs/operations.md §1: a bad config stops the boot with one message naming every broken
 * field. The gateway's own URL rule says what was given "without what could be credentials
 * (user:password@)" (libs/config/src/config-rules.ts urlProblem), and a manifestUrl with
 * credentials is refused naming only the rule. The same secret must not reach the log through
 * another line of the same message. Values reach the config through ${ENV} placeholders (the Helm
 * chart fills them from Secrets), so the boot log must not print them back.
 */
describe('boot error message and credentials in the config', () => {
  it("never prints a manifestUrl's user:password, whatever else in mcp.bundles is broken", async () => {
    const gateway = GatewayProcess.spawn({
      mcp: gatewayConfig([
        null as unknown as Record<string, unknown>,
        {
          id: 'b',
          manifestUrl: 'http://svc:${TOOL_SECRET}@tools.internal/m',
          baseEndpoint: 'http://tools.internal/mcp',
          namePrefix: 'b.',
        },
      ]),
      env: { TOOL_SECRET: 'S3cr3tPw' },
    });
    expect(await gateway.waitForExit()).not.toBe(0);
    // the rule itself is reported
    expect(gateway.stderr).toContain('mcp.bundles[1].manifestUrl: must not carry credentials');
    expect(gateway.stderr).not.toContain('S3cr3tPw');
  });
});
