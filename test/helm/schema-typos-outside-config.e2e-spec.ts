import { removeScratchDir, runHelm, CHART_DIR, writeValuesFile } from './chart';
import { helmBinary } from './helm-binary';

beforeAll(() => {
  helmBinary();
}, 120_000);
afterAll(removeScratchDir);

/**
 * values.schema.json refuses typos inside gateway.config.mcp and outside it (helm/mcp-gateway
 * README, "values.schema.json"). Outside gateway.config most keys were once open, so a misspelt
 * value was dropped without a word and the chart rendered its default instead:
 *
 * - `gateway.secretenv` for `gateway.secretEnv`: the bundle's `valueEnv` variable is never set,
 *   and the gateway refuses to boot (docs/operations.md §1: "the valueEnv of a bundle's
 *   authorization … must be set and non-empty") — the crash loop README "Values checked before
 *   install" says the schema exists to prevent;
 * - `networkpolicy.enabled: false`: the NetworkPolicy the operator turned off is rendered;
 * - `resources.limit.memory`: no limit change, and the heap size follows the default 512Mi;
 * - `managementService.allowServiceHostname: false`: the Service names stay allowed.
 */
const TYPOS: [string, Record<string, unknown>][] = [
  [
    'gateway.secretenv (valueEnv never set: boot refused)',
    {
      gateway: {
        config: {
          mcp: {
            identity: 'gw',
            bundles: [
              {
                id: 'example',
                manifestUrl: 'http://tool-service.tools.svc.cluster.local:8080/tool-manifest',
                baseEndpoint: 'http://tool-service.tools.svc.cluster.local:8080/mcp',
                namePrefix: 'example.',
                authorization: { mode: 'static', valueEnv: 'TOOL_AUTHORIZATION' },
              },
            ],
          },
        },
        secretenv: [{ name: 'TOOL_AUTHORIZATION', secretName: 'tool-auth', key: 'authorization' }],
      },
    },
  ],
  ['networkpolicy.enabled', { networkpolicy: { enabled: false } }],
  ['resources.limit.memory', { resources: { limit: { memory: '2Gi' } } }],
  [
    'managementService.allowServiceHostname',
    { managementService: { allowServiceHostname: false } },
  ],
];

describe('helm/mcp-gateway: a misspelt key outside gateway.config', () => {
  it.each(TYPOS)('%s is refused by helm template', (what, values) => {
    const file = writeValuesFile(`typo-${what.replace(/\W+/g, '-')}.yaml`, values);
    const result = runHelm(['template', 'r', CHART_DIR, '-f', file]);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/additional properties .* not allowed/i);
  });
});
