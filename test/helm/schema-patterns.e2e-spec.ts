import { removeScratchDir, runHelm, CHART_DIR, writeValuesFile } from './chart';
import { helmBinary } from './helm-binary';
import { stopAfterEach } from '../support/cleanup';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { GatewayProcess } from '../support/gateway-process';
import { TestToolService } from '../support/tool-service';

beforeAll(() => {
  helmBinary();
}, 120_000);
afterAll(removeScratchDir);

/**
 * helm/mcp-gateway/README.md "Values checked before install": values.schema.json refuses "values
 * that would render pods that cannot boot … where the gateway would refuse it at boot and leave
 * the pod in a crash loop", and the schema is "held, key for key, type and range, to the
 * gateway's own config model". It does so for the identity, ids, prefixes, URLs, sentinels and
 * management.allowedHosts (patterns), but these strings, which the gateway refuses at boot with
 * a pattern of its own, pass `helm install` and crash-loop the pod.
 */
const CASES: [string, Record<string, unknown>, RegExp][] = [
  ['redis.keyPrefix "a b"', { redis: { keyPrefix: 'a b' } }, /mcp\.redis\.keyPrefix/],
  ['redis.keyPrefix ""', { redis: { keyPrefix: '' } }, /mcp\.redis\.keyPrefix/],
  [
    'http.allowedOrigins ["*"]',
    { http: { allowedOrigins: ['*'] } },
    /mcp\.http\.allowedOrigins\[0\]/,
  ],
  ['http.allowedHosts ["*"]', { http: { allowedHosts: ['*'] } }, /mcp\.http\.allowedHosts\[0\]/],
];

describe('gateway.config strings the gateway refuses at boot', () => {
  const track = stopAfterEach();

  it.each(CASES)('%s: the gateway refuses it', async (_what, extra, problem) => {
    const service = track(await TestToolService.start(manifest('b', [tool({ name: 'b.t' })])));
    const gateway = await GatewayProcess.start({
      mcp: { ...gatewayConfig([bundle('b', service, 'b.')]), ...extra },
      env: { APP_PROFILE: 'ocp' },
    }).catch((err: Error) => err);
    if (gateway instanceof GatewayProcess) {
      const code = await gateway.waitForExit();
      expect(code).toBe(1);
      expect(gateway.output).toMatch(problem);
      await gateway.stop();
    } else {
      expect(String(gateway.message)).toMatch(problem);
    }
  });

  it.each(CASES)('%s: helm template refuses it too', (what, extra) => {
    const file = writeValuesFile(`pattern-${what.replace(/\W+/g, '-')}.yaml`, {
      gateway: { config: { mcp: { identity: 'gw', ...extra } } },
    });
    const result = runHelm(['template', 'r', CHART_DIR, '-f', file]);
    expect(result.status).not.toBe(0);
  });
});
