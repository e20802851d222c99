import { removeScratchDir, runHelm, CHART_DIR } from './chart';
import { helmBinary } from './helm-binary';

beforeAll(() => {
  helmBinary();
}, 120_000);
afterAll(removeScratchDir);

/**
 * values.yaml `managementService.clusterDomain` (README "The management port's Host check"): the
 * chart adds `<svc>.<namespace>.svc.<clusterDomain>` to mcp.management.allowedHosts for clusters
 * whose DNS domain is not cluster.local. The install NOTES, which a new operator copies from,
 * print both URLs with a hard-coded `.svc.cluster.local`: in such a cluster the name does not
 * resolve (and is not a name the management port's Host check was given). Expected: NOTES use
 * clusterDomain.
 */
describe('helm/mcp-gateway NOTES with managementService.clusterDomain', () => {
  it('print the Services under the cluster domain the chart was given', () => {
    const result = runHelm([
      'install',
      'r',
      CHART_DIR,
      '--dry-run=client',
      '--namespace',
      'ns',
      '--set',
      'managementService.clusterDomain=k8s.internal',
    ]);
    expect(result.status).toBe(0);
    const notes = result.stdout.slice(result.stdout.indexOf('NOTES:'));
    expect(notes).toContain('r-mcp-gateway-management.ns.svc.k8s.internal:9090');
    expect(notes).not.toContain('cluster.local');
  });
});
