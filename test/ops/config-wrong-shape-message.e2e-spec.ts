import { stopAfterEach } from '../support/cleanup';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { GatewayProcess } from '../support/gateway-process';
import { TestToolService } from '../support/tool-service';

/**
 * docs/operations.md §1: "A bad configuration stops the boot with exit code 1 and one message on
 * stderr naming every broken field and why". A newcomer writes the access rules as a list
 * directly under `mcp.access` (the model wants `access: {rules: [...]}`, §13). The message then
 * (a) quotes, as what the operator wrote, a value with a `"rules":[]` the operator never wrote
 * (the model's default was merged into the input before it was echoed), and (b) adds
 * `mcp.access[0].match: unknown key (check its spelling …)` and the same for `sources` — two keys
 * that are spelled right and are exactly the keys of a rule — sending the operator to hunt a
 * typo. The problem is the one shape error; the message should quote the input as written.
 */
describe('mcp.access written as a list of rules', () => {
  const track = stopAfterEach();

  it('is named once, quoting what was written, without calling the rule keys unknown', async () => {
    const service = track(await TestToolService.start(manifest('b', [tool({ name: 'b.t' })])));
    const gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('b', service, 'b.')]),
        auth: {
          mode: 'jwt',
          issuer: 'https://idp.test',
          audience: 'https://gw.test/mcp',
          jwksUrl: 'https://idp.test/jwks',
        },
        access: [{ match: { subject: 'alice' }, sources: ['b'] }],
      },
      env: { APP_PROFILE: 'ocp' },
    }).catch((err: Error) => err);
    const output =
      gateway instanceof GatewayProcess
        ? (await gateway.waitForExit(), gateway.output)
        : String(gateway.message);
    expect(output).toMatch(/mcp\.access: must be a mapping/);
    expect(output).not.toContain('"rules":[]');
    expect(output).not.toMatch(/mcp\.access\[0\]\.(match|sources): unknown key/);
  });
});
