import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess, TEST_SESSION_KEYS } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { callTool } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

const LEAKY_500 =
  'java.lang.NullPointerException at com.corp.internal.Db(10.20.30.40:5432) password=hunter2';
const LEAKY_400 = 'policyNumber must look like P-123456; see http://wiki.corp.internal/policies';

const textOf = (answer: any): string => answer.result.content[0].text as string;

/**
 * docs/operations.md §1, `bundles[].serverErrorBody`: what an agent sees of a Tool Service's error
 * body.
 */
describe('Tool Service error bodies', () => {
  const track = stopAfterEach();

  async function start(
    bundleExtra: Record<string, unknown>,
    env: Record<string, string>,
  ): Promise<GatewayProcess> {
    const service = track(
      await TestToolService.start(
        manifest('ins', [tool({ name: 'ins.crash' }), tool({ name: 'ins.bad_input' })]),
      ),
    );
    service.tools.set('ins.crash', () => ({
      status: 500,
      headers: { 'content-type': 'text/plain' },
      body: LEAKY_500,
    }));
    service.tools.set('ins.bad_input', () => ({
      status: 400,
      headers: { 'content-type': 'text/plain' },
      body: LEAKY_400,
    }));
    return track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('ins', service, 'ins.', bundleExtra)]),
        env,
        waitReady: true,
      }),
    );
  }

  it('hides 5xx bodies by default outside the local profile, and keeps 4xx bodies, masked', async () => {
    const gateway = await start({}, { APP_PROFILE: 'ocp', MCP_SESSION_KEYS: TEST_SESSION_KEYS });
    const crash = await callTool(gateway.mcpUrl, 'ins.crash', {});
    expect(crash.result.isError).toBe(true);
    expect(textOf(crash)).toBe(
      'Tool ins.crash failed: the Tool Service answered HTTP 500 (a server error)',
    );
    const bad = await callTool(gateway.mcpUrl, 'ins.bad_input', {});
    expect(textOf(bad)).toContain('policyNumber must look like P-123456');
    expect(textOf(bad)).not.toContain('wiki.corp.internal');
  });

  it('shows a 5xx excerpt with serverErrorBody: show, never an address or credential', async () => {
    const gateway = await start(
      { serverErrorBody: 'show' },
      { APP_PROFILE: 'ocp', MCP_SESSION_KEYS: TEST_SESSION_KEYS },
    );
    const text = textOf(await callTool(gateway.mcpUrl, 'ins.crash', {}));
    expect(text).toContain('java.lang.NullPointerException');
    for (const leaked of ['10.20.30.40', '5432', 'hunter2']) expect(text).not.toContain(leaked);
  });

  it('shows masked 5xx excerpts by default in the local profile, and hides them when told to', async () => {
    const shown = await start({}, {});
    expect(textOf(await callTool(shown.mcpUrl, 'ins.crash', {}))).toContain('NullPointerException');
    const hidden = await start({ serverErrorBody: 'hide' }, {});
    expect(textOf(await callTool(hidden.mcpUrl, 'ins.crash', {}))).not.toContain(
      'NullPointerException',
    );
  });
});
