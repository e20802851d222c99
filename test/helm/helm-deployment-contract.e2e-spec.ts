import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ConfigValidationError } from '@app/config';
import {
  lintChart,
  removeScratchDir,
  renderChart,
  REPO_ROOT,
  templateChart,
  VALUES_OCP,
  writeValuesFile,
  type Manifest,
} from './chart';
import {
  deploymentContractProblems,
  loadRenderedConfig,
  readRenderedGateway,
} from './deployment-contract';
import { helmBinary } from './helm-binary';

/**
 * HelmDeploymentContractTest (bundle contract §1: "배포 정의가 1개로 잠그며, 그 사실은
 * HelmDeploymentContractTest가 검사한다"). Renders helm/mcp-gateway with the real helm binary and
 * checks what production runs: one bundle (ADR-0007), discovery on, no fallbackManifestFile
 * (§3), the §6 refresh settings, probes and Services split by port, a NetworkPolicy, a
 * hardened pod, and a config the gateway's own `loadGatewayConfig` accepts.
 */

const clone = (docs: readonly Manifest[]): Manifest[] => structuredClone(docs) as Manifest[];
const ofKind = (docs: readonly Manifest[], kind: string): Manifest[] =>
  docs.filter((d) => d.kind === kind);
const gatewayContainer = (docs: readonly Manifest[]): any =>
  ofKind(docs, 'Deployment')[0]!.spec.template.spec.containers[0];

/** values-ocp.yaml as an object, for override files that change one thing of it. */
function ocpValues(): any {
  return parseYaml(readFileSync(VALUES_OCP, 'utf8'));
}

beforeAll(() => {
  helmBinary(); // extract once, before the first timed test
}, 120_000);
afterAll(removeScratchDir);

describe('HelmDeploymentContractTest: helm/mcp-gateway with values-ocp.yaml', () => {
  let docs: Manifest[];

  beforeAll(() => {
    docs = renderChart([VALUES_OCP]);
  });

  it('passes helm lint', () => {
    const result = lintChart([VALUES_OCP]);
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' });
    expect(result.stdout).toContain('0 chart(s) failed');
  });

  it('keeps every rule of the deployment contract', () => {
    expect(deploymentContractProblems(docs)).toEqual([]);
  });

  it('renders exactly one bundle, insurance-processing, with the configured routing addresses (ADR-0007, §3)', () => {
    const mcp = parseYaml(readRenderedGateway(docs).configText).mcp;
    expect(mcp.bundles).toEqual([
      {
        id: 'insurance-processing',
        manifestUrl: 'http://tool-processing.ax-hub.svc.cluster.local:8080/tool-manifest',
        baseEndpoint: 'http://tool-processing.ax-hub.svc.cluster.local:8080/mcp',
        namePrefix: 'processing.',
        enabled: true,
      },
    ]);
  });

  it('never renders fallbackManifestFile: it is for local checks only (§3)', () => {
    expect(JSON.stringify(docs)).not.toContain('fallbackManifestFile');
  });

  it('passes the gateway own validation with profile ocp, discovery on, the §6 refresh settings and one enabled bundle', () => {
    const gateway = readRenderedGateway(docs);
    expect(gateway.env.APP_PROFILE).toBe('ocp');
    const config = loadRenderedConfig(docs);
    expect(config.profile).toBe('ocp');
    expect(config.mcp.identity).toBe('mcp-insurance-core');
    expect(config.mcp.discovery.enabled).toBe(true);
    expect(config.mcp.registry).toMatchObject({
      refreshIntervalSeconds: 30,
      refreshJitterSeconds: 5,
    });
    expect(config.mcp.discovery).toMatchObject({
      connectTimeoutMillis: 1000,
      readTimeoutMillis: 3000,
    });
    expect(config.bundles.filter((b) => b.enabled).map((b) => b.id)).toEqual([
      'insurance-processing',
    ]);
    expect(config.bundles[0]?.fallbackManifestFile).toBeUndefined();
    expect(config.server).toMatchObject({
      host: '0.0.0.0',
      port: 8080,
      managementPort: 9090,
      managementHost: '0.0.0.0',
      mcpListener: 'fastify',
    });
  });

  it('probes liveness and readiness with httpGet on the named port "management" = MANAGEMENT_PORT', () => {
    const container = gatewayContainer(docs);
    const gateway = readRenderedGateway(docs);
    const managementPort = container.ports.find((p: any) => p.name === 'management');
    expect(String(managementPort.containerPort)).toBe(gateway.env.MANAGEMENT_PORT);
    expect(container.livenessProbe.httpGet).toEqual({
      path: '/actuator/health/liveness',
      port: 'management',
    });
    expect(container.readinessProbe.httpGet).toEqual({
      path: '/actuator/health/readiness',
      port: 'management',
    });
  });

  it('exposes only "http" through the client Service and "management" through its own Service', () => {
    const services = ofKind(docs, 'Service');
    const client = services.find(
      (s) => s.metadata.labels?.['app.kubernetes.io/component'] === 'gateway',
    );
    const operator = services.find(
      (s) => s.metadata.labels?.['app.kubernetes.io/component'] === 'management',
    );
    expect(client?.spec.ports).toEqual([
      { name: 'http', port: 8080, targetPort: 'http', protocol: 'TCP' },
    ]);
    expect(operator?.spec.ports).toEqual([
      { name: 'management', port: 9090, targetPort: 'management', protocol: 'TCP' },
    ]);
  });

  it('admits monitoring, and only monitoring, to "management" through the NetworkPolicy', () => {
    const [policy] = ofKind(docs, 'NetworkPolicy');
    expect(policy?.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    const toManagement = policy?.spec.ingress.filter((r: any) =>
      r.ports.some((p: any) => p.port === 9090),
    );
    expect(toManagement).toEqual([
      {
        from: [
          {
            namespaceSelector: {
              matchLabels: { 'kubernetes.io/metadata.name': 'openshift-user-workload-monitoring' },
            },
          },
        ],
        ports: [{ port: 9090, protocol: 'TCP' }],
      },
    ]);
  });

  it('runs as non-root with a read-only root filesystem, an emptyDir /tmp and resource bounds', () => {
    const deployment = ofKind(docs, 'Deployment')[0]!;
    const container = gatewayContainer(docs);
    expect(deployment.spec.template.spec.securityContext.runAsNonRoot).toBe(true);
    expect(container.securityContext).toMatchObject({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
    });
    expect(Object.keys(container.resources.requests).sort()).toEqual(['cpu', 'memory']);
    expect(Object.keys(container.resources.limits).sort()).toEqual(['cpu', 'memory']);
    // OpenShift's restricted SCC picks the uid: values-ocp.yaml must not pin one.
    expect(deployment.spec.template.spec.securityContext.runAsUser).toBeUndefined();
  });

  it('has a PodDisruptionBudget and a grace period longer than preStop sleep + the 30 s drain', () => {
    expect(ofKind(docs, 'PodDisruptionBudget')).toHaveLength(1);
    const pod = ofKind(docs, 'Deployment')[0]!.spec.template.spec;
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(30 + 5);
  });

  it("renders the drain period into the gateway's own SIGTERM grace period, below the pod's", () => {
    const config = loadRenderedConfig(docs);
    const pod = ofKind(docs, 'Deployment')[0]!.spec.template.spec;
    expect(config.mcp.shutdown.gracePeriodSeconds).toBe(30);
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(
      config.mcp.shutdown.gracePeriodSeconds,
    );
  });
});

describe('HelmDeploymentContractTest rejects a rendering that breaks the contract', () => {
  it('a second bundle: the contract check names ADR-0007, and the loaded config has two enabled bundles', () => {
    const values = ocpValues();
    const first = values.gateway.config.mcp.bundles[0];
    values.gateway.config.mcp.bundles.push({
      ...first,
      id: 'insurance-claims',
      namePrefix: 'claims.',
    });
    const docs = renderChart([VALUES_OCP, writeValuesFile('two-bundles.yaml', values)]);

    expect(deploymentContractProblems(docs)).toEqual(
      expect.arrayContaining([
        'ADR-0007: a deployment serves exactly one bundle; mcp.bundles has 2',
        'ADR-0007: the loaded config must have exactly one enabled bundle; it has 2',
      ]),
    );
    // The gateway itself accepts N bundles (the schema allows them); only the deployment locks 1.
    expect(loadRenderedConfig(docs).bundles.filter((b) => b.enabled)).toHaveLength(2);
  });

  it('a fallbackManifestFile: the contract check and loadGatewayConfig both refuse it', () => {
    const values = ocpValues();
    values.gateway.config.mcp.bundles[0].fallbackManifestFile =
      'file:./config/local-process-tools-manifest-sample-v1.json';
    const docs = renderChart([VALUES_OCP, writeValuesFile('fallback.yaml', values)]);

    const problems = deploymentContractProblems(docs);
    expect(problems).toContain('contract §3: fallbackManifestFile must not appear in a deployment');
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^loadGatewayConfig rejects the rendered config: mcp\.bundles\[0\]\.fallbackManifestFile: is only allowed in the local profile/,
        ),
      ]),
    );
    expect(() => loadRenderedConfig(docs)).toThrow(ConfigValidationError);
  });

  it('discovery disabled (--set): the contract check and loadGatewayConfig both refuse it', () => {
    const docs = renderChart([VALUES_OCP], ['gateway.config.mcp.discovery.enabled=false']);

    const problems = deploymentContractProblems(docs);
    expect(problems).toContain(
      'contract §3: mcp.discovery.enabled must be true in a deployment (rendered false)',
    );
    expect(() => loadRenderedConfig(docs)).toThrow(
      /mcp\.discovery\.enabled: is false under profile "ocp"/,
    );
  });

  it('no MCP_SESSION_KEYS at all (none named, none generated): the contract check refuses it; the gateway itself would start stateless', () => {
    const docs = renderChart(
      [VALUES_OCP],
      ['sessionKeys.existingSecret=', 'sessionKeys.generate=false'],
    );

    expect(deploymentContractProblems(docs)).toEqual([
      "MCP_SESSION_KEYS must come from a Secret: every replica opens the others' session ids",
    ]);
    // docs/operations.md §9: outside local an unset MCP_SESSION_KEYS is stateless legacy mode, not
    // a refusal.
    expect(loadRenderedConfig(docs).sessionKeys).toEqual([]);
  });

  describe('on a tampered rendering of values-ocp.yaml', () => {
    let rendered: Manifest[];

    beforeAll(() => {
      rendered = renderChart([VALUES_OCP]);
    });

    it('a readiness probe on "http" or a liveness probe on another path', () => {
      const docs = clone(rendered);
      gatewayContainer(docs).readinessProbe.httpGet.port = 'http';
      gatewayContainer(docs).livenessProbe.httpGet.path = '/actuator/health';
      expect(deploymentContractProblems(docs)).toEqual([
        expect.stringMatching(
          /^livenessProbe must be httpGet \/actuator\/health\/liveness on port "management"/,
        ),
        expect.stringMatching(
          /^readinessProbe must be httpGet \/actuator\/health\/readiness on port "management"/,
        ),
      ]);
    });

    it('a "management" container port that differs from MANAGEMENT_PORT', () => {
      const docs = clone(rendered);
      gatewayContainer(docs).ports[1].containerPort = 9191;
      expect(deploymentContractProblems(docs)).toContain(
        'container port "management" (9191) must equal the MANAGEMENT_PORT env (9090)',
      );
    });

    it('a client Service port that reaches "management", by name or by number', () => {
      for (const targetPort of ['management', 9090]) {
        const docs = clone(rendered);
        const client = ofKind(docs, 'Service').find(
          (s) => s.metadata.name === 'mcp-insurance-core-mcp-gateway',
        )!;
        client.spec.ports.push({ name: 'actuator', port: 9090, targetPort, protocol: 'TCP' });
        expect(deploymentContractProblems(docs)).toEqual([
          expect.stringMatching(
            /^client Service mcp-insurance-core-mcp-gateway port actuator reaches container port/,
          ),
        ]);
      }
    });

    it('a NetworkPolicy that opens "management" to every source', () => {
      const docs = clone(rendered);
      const policy = ofKind(docs, 'NetworkPolicy')[0]!;
      policy.spec.ingress[1].from = [{ namespaceSelector: {} }];
      expect(deploymentContractProblems(docs)).toEqual([
        'NetworkPolicy ingress rule 1 admits every source to "management"; only monitoring may reach /actuator/*',
      ]);
    });

    it('a NetworkPolicy ingress rule without ports for the agents', () => {
      const docs = clone(rendered);
      delete ofKind(docs, 'NetworkPolicy')[0]!.spec.ingress[0].ports;
      expect(deploymentContractProblems(docs)).toEqual([
        'NetworkPolicy ingress rule 0 admits the same peers to "http" and "management"; management must have its own rule',
      ]);
    });

    it('no NetworkPolicy, no PodDisruptionBudget', () => {
      const docs = clone(rendered).filter(
        (d) => d.kind !== 'NetworkPolicy' && d.kind !== 'PodDisruptionBudget',
      );
      expect(deploymentContractProblems(docs)).toEqual([
        'expected a NetworkPolicy selecting the gateway pods',
        'expected a PodDisruptionBudget selecting the gateway pods',
      ]);
    });

    it('a writable root filesystem, root allowed, no resource limits', () => {
      const docs = clone(rendered);
      const container = gatewayContainer(docs);
      container.securityContext.readOnlyRootFilesystem = false;
      container.securityContext.runAsNonRoot = false;
      delete container.resources.limits;
      expect(deploymentContractProblems(docs)).toEqual([
        'securityContext.runAsNonRoot must be true',
        'container securityContext.readOnlyRootFilesystem must be true',
        'resources.limits.cpu must be set',
        'resources.limits.memory must be set',
      ]);
    });
  });
});

describe('helm/mcp-gateway with the default values.yaml', () => {
  it('passes helm lint', () => {
    const result = lintChart();
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' });
  });

  it('renders, and keeps the deployment contract too', () => {
    const docs = renderChart();
    expect(docs.map((d) => d.kind).sort()).toEqual([
      'ConfigMap',
      'Deployment',
      'NetworkPolicy',
      'PodDisruptionBudget',
      'Secret',
      'Service',
      'Service',
      'ServiceAccount',
    ]);
    expect(deploymentContractProblems(docs)).toEqual([]);
    // The image the Dockerfile builds, tagged with the chart appVersion = package.json version.
    const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));
    expect(gatewayContainer(docs).image).toBe(`mcp-gateway:${version}`);
  });

  it('refuses at render time a grace period that would cut the drain short', () => {
    const result = templateChart([], ['shutdown.terminationGracePeriodSeconds=30']);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain(
      'shutdown.terminationGracePeriodSeconds (30) must be larger than shutdown.drainPeriodSeconds + shutdown.preStopSleepSeconds (35)',
    );
  });
});
