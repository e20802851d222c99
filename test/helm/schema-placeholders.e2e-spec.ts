import { removeScratchDir, runHelm, CHART_DIR, writeValuesFile } from './chart';
import { helmBinary } from './helm-binary';
import { stopAfterEach } from '../support/cleanup';
import { gatewayConfig, manifest, tool } from '../support/fixtures';
import { GatewayProcess } from '../support/gateway-process';
import { TestToolService } from '../support/tool-service';

beforeAll(() => {
  helmBinary();
}, 120_000);
afterAll(removeScratchDir);

/**
 * docs/operations.md §1 "Environment placeholders": "A string value may read an environment
 * variable as `${NAME}` or `${NAME:default}` … resolved before validation". The chart's
 * values.schema.json applies the gateway's *resolved* rules (`^https?://`, the id pattern) to
 * the raw strings, so a gateway.config the gateway boots on — a Tool Service URL or identity
 * taken from an env variable set through gateway.extraEnv / secretEnv — is refused by
 * `helm install`. helm/mcp-gateway/README.md says the schema refuses "values that would render
 * pods that cannot boot"; these boot.
 */
describe('gateway.config strings with ${ENV} placeholders', () => {
  const track = stopAfterEach();
  const mcp = (service: { manifestUrl: string; baseEndpoint: string }) => ({
    ...gatewayConfig([
      {
        id: 'tools',
        manifestUrl: '${TOOL_SERVICE_URL}/tool-manifest',
        baseEndpoint: '${TOOL_SERVICE_URL}/mcp',
        namePrefix: 'tools.',
      },
    ]),
    identity: '${MCP_IDENTITY:mcp-gateway}',
    _service: service,
  });

  it('boot the gateway', async () => {
    const service = track(
      await TestToolService.start(manifest('tools', [tool({ name: 'tools.t' })])),
    );
    const { _service, ...tree } = mcp(service);
    void _service;
    const gateway = track(
      await GatewayProcess.start({
        mcp: tree,
        env: { TOOL_SERVICE_URL: service.manifestUrl.replace(/\/tool-manifest$/, '') },
        waitReady: true,
      }),
    );
    const status: any = await (await fetch(`${gateway.managementUrl}/actuator/toolBundles`)).json();
    expect(status.bundles[0].status).toBe('healthy');
    expect(status.identity).toBe('mcp-gateway');
  });

  it('are accepted by helm template', () => {
    const { _service, ...tree } = mcp({ manifestUrl: 'x', baseEndpoint: 'x' });
    void _service;
    const file = writeValuesFile('placeholders.yaml', {
      gateway: {
        config: { mcp: tree },
        extraEnv: [{ name: 'TOOL_SERVICE_URL', value: 'http://tool-service.tools.svc:8080' }],
      },
    });
    const result = runHelm(['template', 'r', CHART_DIR, '-f', file]);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });
});
