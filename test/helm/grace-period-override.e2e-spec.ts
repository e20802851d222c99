import { removeScratchDir, runHelm, CHART_DIR, parseManifests, writeValuesFile } from './chart';
import { loadRenderedConfig } from './deployment-contract';
import { helmBinary } from './helm-binary';

beforeAll(() => {
  helmBinary();
}, 120_000);
afterAll(removeScratchDir);

/**
 * values.yaml: `gateway.config` is "The whole `mcp:` tree of the bundle contract §3, rendered as
 * is (toYaml)", and docs/operations.md §1 documents `shutdown.gracePeriodSeconds` as a key of that
 * tree; values.schema.json accepts it there. The chart silently replaces it with
 * `shutdown.drainPeriodSeconds` (30): an operator who sets gateway.config.mcp.shutdown.
 * gracePeriodSeconds: 120 for long tool calls gets a gateway that cuts them after 30 s, and no
 * word about it. Expected: either the value is honoured (and terminationGracePeriodSeconds
 * derived from it) or `helm template` refuses it, naming shutdown.drainPeriodSeconds.
 */
describe('helm/mcp-gateway: gateway.config.mcp.shutdown.gracePeriodSeconds', () => {
  it('is honoured or refused, never silently replaced', () => {
    const file = writeValuesFile('grace.yaml', {
      gateway: { config: { mcp: { shutdown: { gracePeriodSeconds: 120 } } } },
    });
    const result = runHelm(['template', 'r', CHART_DIR, '-f', file]);
    if (result.status !== 0) {
      expect(result.stderr).toMatch(/drainPeriodSeconds/);
      return;
    }
    const docs = parseManifests(result.stdout);
    const config = loadRenderedConfig(docs) as {
      mcp: { shutdown: { gracePeriodSeconds: number } };
    };
    expect(config.mcp.shutdown.gracePeriodSeconds).toBe(120);
    const deployment = docs.find((d) => d.kind === 'Deployment')!;
    expect(deployment.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(120);
  });
});
