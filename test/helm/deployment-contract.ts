// class-transformer's @Type (used by loadGatewayConfig) needs the metadata polyfill Nest loads first.
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ConfigValidationError, loadGatewayConfig, type GatewayConfig } from '@app/config';
import { REPO_ROOT, scratchDir, type Manifest } from './chart';

/**
 * The deployment contract the chart must keep (bundle contract §1 and §3, ADR-0007, DESIGN
 * "Interfaces"), checked over the objects `helm template` rendered. Every check adds a line to
 * the returned list, so one run names every broken rule; [] means the rendering is sound. The
 * gateway's own config rules are not restated here: the rendered config goes through the real
 * `loadGatewayConfig`.
 */

const LIVENESS_PATH = '/actuator/health/liveness';
const READINESS_PATH = '/actuator/health/readiness';

/** What the tests need of the rendered gateway pod. */
export interface RenderedGateway {
  readonly deployment: Manifest;
  readonly pod: any;
  readonly container: any;
  readonly podLabels: Readonly<Record<string, string>>;
  /** Env variables with a literal value. */
  readonly env: Readonly<Record<string, string>>;
  /** Env variables read from a Secret: name → secret. */
  readonly secretEnv: Readonly<Record<string, { name: string; key: string }>>;
  /** The text of the file MCP_CONFIG_FILE names, taken from the mounted ConfigMap. */
  readonly configText: string;
}

function ofKind(docs: readonly Manifest[], kind: string): Manifest[] {
  return docs.filter((d) => d.kind === kind);
}

/** A label selector that is non-empty and matches the pod's labels. */
function selectsPod(matchLabels: unknown, podLabels: Readonly<Record<string, string>>): boolean {
  if (typeof matchLabels !== 'object' || matchLabels === null) return false;
  const entries = Object.entries(matchLabels as Record<string, unknown>);
  return entries.length > 0 && entries.every(([k, v]) => podLabels[k] === v);
}

/**
 * Finds the gateway Deployment, its container and the config file it reads. Throws when the
 * rendering lacks one of them: nothing else can be checked without them.
 */
export function readRenderedGateway(docs: readonly Manifest[]): RenderedGateway {
  const deployments = ofKind(docs, 'Deployment');
  if (deployments.length !== 1) {
    throw new Error(`expected exactly one Deployment, found ${deployments.length}`);
  }
  const deployment = deployments[0]!;
  const pod = deployment.spec?.template?.spec ?? {};
  const podLabels: Record<string, string> = deployment.spec?.template?.metadata?.labels ?? {};
  const containers: any[] = pod.containers ?? [];
  if (containers.length !== 1) {
    throw new Error(
      `expected exactly one container in the gateway pod, found ${containers.length}`,
    );
  }
  const container = containers[0];

  const env: Record<string, string> = {};
  const secretEnv: Record<string, { name: string; key: string }> = {};
  for (const e of container.env ?? []) {
    if (typeof e.value === 'string') env[e.name] = e.value;
    else if (e.valueFrom?.secretKeyRef !== undefined) secretEnv[e.name] = e.valueFrom.secretKeyRef;
  }

  const configFile = env.MCP_CONFIG_FILE;
  if (configFile === undefined) {
    throw new Error(
      'the container sets no literal MCP_CONFIG_FILE: the chart must point it at the ConfigMap',
    );
  }
  return {
    deployment,
    pod,
    container,
    podLabels,
    env,
    secretEnv,
    configText: mountedConfigText(docs, pod, container, configFile),
  };
}

/** The ConfigMap entry that the container sees at `file`. */
function mountedConfigText(
  docs: readonly Manifest[],
  pod: any,
  container: any,
  file: string,
): string {
  for (const mount of container.volumeMounts ?? []) {
    const mountPath = String(mount.mountPath).replace(/\/+$/, '');
    let relative: string | undefined;
    if (mount.subPath !== undefined) {
      if (mountPath === file) relative = String(mount.subPath);
    } else if (file.startsWith(`${mountPath}/`)) {
      relative = file.slice(mountPath.length + 1);
    }
    if (relative === undefined) continue;
    const volume = (pod.volumes ?? []).find((v: any) => v.name === mount.name);
    const configMapRef = volume?.configMap;
    if (configMapRef === undefined) continue;
    const key: string =
      (configMapRef.items ?? []).find((i: any) => i.path === relative)?.key ?? relative;
    const configMap = ofKind(docs, 'ConfigMap').find((c) => c.metadata.name === configMapRef.name);
    const text: unknown = configMap?.data?.[key];
    if (typeof text === 'string') return text;
    throw new Error(
      `MCP_CONFIG_FILE ${file}: ConfigMap ${configMapRef.name} has no data key "${key}"`,
    );
  }
  throw new Error(`MCP_CONFIG_FILE ${file}: no ConfigMap volume is mounted there`);
}

/**
 * Runs the rendered config through the gateway's own validation, with the environment the
 * Deployment gives the container: its literal env, the rendered config file as
 * MCP_CONFIG_FILE, the value of a Secret the chart rendered itself (the generated session
 * keys), else a freshly generated valid key standing in for an existing MCP_SESSION_KEYS
 * Secret, and placeholders for other Secret-sourced variables. Throws ConfigValidationError as
 * the gateway's boot would.
 */
export function loadRenderedConfig(docs: readonly Manifest[]): GatewayConfig {
  const gateway = readRenderedGateway(docs);
  const file = join(scratchDir(), `mcp-config-${randomBytes(4).toString('hex')}.yaml`);
  writeFileSync(file, gateway.configText);
  const env: Record<string, string> = { ...gateway.env, MCP_CONFIG_FILE: file };
  for (const [name, ref] of Object.entries(gateway.secretEnv)) {
    const rendered = renderedSecretValue(docs, ref);
    env[name] =
      rendered !== undefined
        ? rendered
        : name === 'MCP_SESSION_KEYS'
          ? `k1:${randomBytes(32).toString('base64')}`
          : name === 'REDIS_URL'
            ? 'redis://redis.invalid:6379'
            : `placeholder for Secret-sourced ${name}`;
  }
  // The image's WORKDIR holds config/ like the repository root does.
  return loadGatewayConfig({ env, cwd: REPO_ROOT, version: '0.0.0-helm-contract' });
}

/** The decoded value of `key` in a Secret of the rendering, when the chart renders it. */
export function renderedSecretValue(
  docs: readonly Manifest[],
  ref: { name: string; key: string },
): string | undefined {
  const secret = ofKind(docs, 'Secret').find((d) => d.metadata.name === ref.name);
  const stringValue: unknown = secret?.stringData?.[ref.key];
  if (typeof stringValue === 'string') return stringValue;
  const encoded: unknown = secret?.data?.[ref.key];
  return typeof encoded === 'string' ? Buffer.from(encoded, 'base64').toString('utf8') : undefined;
}

function containerPort(container: any, name: string): number | undefined {
  const port = (container.ports ?? []).find((p: any) => p.name === name);
  return typeof port?.containerPort === 'number' ? port.containerPort : undefined;
}

/** A Service targetPort (name or number; absent = port) as a container port number. */
function resolveTargetPort(container: any, servicePort: any): number | undefined {
  const target: unknown = servicePort.targetPort ?? servicePort.port;
  if (typeof target === 'number') return target;
  if (typeof target === 'string') {
    return /^\d+$/.test(target) ? Number(target) : containerPort(container, target);
  }
  return undefined;
}

/** Whether a NetworkPolicy rule's `ports` admit `port` (named `name`): no ports = every port. */
function rulePortsAdmit(rulePorts: any[] | undefined, port: number, name: string): boolean {
  if (rulePorts === undefined || rulePorts.length === 0) return true;
  return rulePorts.some((p) => {
    if (p.port === undefined) return true;
    if (p.port === name) return true;
    if (typeof p.port !== 'number') return false;
    return p.endPort === undefined ? p.port === port : p.port <= port && port <= p.endPort;
  });
}

function isEmptySelector(selector: any): boolean {
  return (
    Object.keys(selector?.matchLabels ?? {}).length === 0 &&
    (selector?.matchExpressions ?? []).length === 0
  );
}

/** A peer that admits every namespace or every address. */
function isOpenPeer(peer: any): boolean {
  const cidr: unknown = peer?.ipBlock?.cidr;
  if (cidr === '0.0.0.0/0' || cidr === '::/0') return true;
  if (peer?.ipBlock !== undefined) return false;
  if (peer?.namespaceSelector !== undefined) {
    return isEmptySelector(peer.namespaceSelector) && isEmptySelector(peer.podSelector);
  }
  return peer?.podSelector === undefined;
}

function bundleConfigProblems(configText: string, problems: string[]): void {
  let root: any;
  try {
    root = parseYaml(configText);
  } catch (err) {
    problems.push(`the rendered mcp config is not YAML: ${(err as Error).message}`);
    return;
  }
  const mcp = root?.mcp;
  const bundles: unknown = mcp?.bundles;
  const count = Array.isArray(bundles) ? bundles.length : 0;
  if (count !== 1) {
    problems.push(`ADR-0007: a deployment serves exactly one bundle; mcp.bundles has ${count}`);
  }
  if (mcp?.discovery?.enabled !== true) {
    problems.push(
      `contract §3: mcp.discovery.enabled must be true in a deployment (rendered ${JSON.stringify(mcp?.discovery?.enabled)})`,
    );
  }
}

function gatewayValidationProblems(docs: readonly Manifest[], problems: string[]): void {
  let config: GatewayConfig;
  try {
    config = loadRenderedConfig(docs);
  } catch (err) {
    if (!(err instanceof ConfigValidationError)) throw err;
    problems.push(
      ...err.problems.map((p) => `loadGatewayConfig rejects the rendered config: ${p}`),
    );
    return;
  }
  const enabled = config.bundles.filter((b) => b.enabled).length;
  if (enabled !== 1) {
    problems.push(
      `ADR-0007: the loaded config must have exactly one enabled bundle; it has ${enabled}`,
    );
  }
}

function containerProblems(gateway: RenderedGateway, problems: string[]): void {
  const { pod, container, env, secretEnv } = gateway;
  const http = containerPort(container, 'http');
  const management = containerPort(container, 'management');
  if (http === undefined || String(http) !== env.PORT) {
    problems.push(`container port "http" (${http}) must equal the PORT env (${env.PORT})`);
  }
  if (management === undefined || String(management) !== env.MANAGEMENT_PORT) {
    problems.push(
      `container port "management" (${management}) must equal the MANAGEMENT_PORT env (${env.MANAGEMENT_PORT})`,
    );
  }
  if (env.APP_PROFILE === undefined || env.APP_PROFILE === 'local') {
    problems.push(
      `APP_PROFILE must name a deployed profile, not local (rendered ${env.APP_PROFILE})`,
    );
  }
  if (env.HOST !== '0.0.0.0') {
    problems.push(
      `HOST must be 0.0.0.0 so the Service and the kubelet reach the pod (rendered ${env.HOST})`,
    );
  }
  if (secretEnv.MCP_SESSION_KEYS === undefined) {
    problems.push(
      "MCP_SESSION_KEYS must come from a Secret: every replica opens the others' session ids",
    );
  }

  for (const [probeName, path] of [
    ['livenessProbe', LIVENESS_PATH],
    ['readinessProbe', READINESS_PATH],
  ] as const) {
    const httpGet = container[probeName]?.httpGet;
    if (httpGet?.path !== path || httpGet?.port !== 'management') {
      problems.push(
        `${probeName} must be httpGet ${path} on port "management" (rendered ${JSON.stringify(httpGet ?? container[probeName])})`,
      );
    }
  }

  const runAsNonRoot = container.securityContext?.runAsNonRoot ?? pod.securityContext?.runAsNonRoot;
  if (runAsNonRoot !== true) problems.push('securityContext.runAsNonRoot must be true');
  if (container.securityContext?.readOnlyRootFilesystem !== true) {
    problems.push('container securityContext.readOnlyRootFilesystem must be true');
  }
  if (container.securityContext?.allowPrivilegeEscalation !== false) {
    problems.push('container securityContext.allowPrivilegeEscalation must be false');
  }
  const tmpMount = (container.volumeMounts ?? []).find((m: any) => m.mountPath === '/tmp');
  const tmpVolume = (pod.volumes ?? []).find((v: any) => v.name === tmpMount?.name);
  if (tmpVolume?.emptyDir === undefined) problems.push('/tmp must be an emptyDir mount');

  for (const section of ['requests', 'limits'] as const) {
    for (const resource of ['cpu', 'memory'] as const) {
      if (container.resources?.[section]?.[resource] === undefined) {
        problems.push(`resources.${section}.${resource} must be set`);
      }
    }
  }
}

function serviceProblems(
  docs: readonly Manifest[],
  gateway: RenderedGateway,
  problems: string[],
): void {
  const { container, podLabels } = gateway;
  const http = containerPort(container, 'http');
  const management = containerPort(container, 'management');
  const services = ofKind(docs, 'Service').filter((s) => selectsPod(s.spec?.selector, podLabels));
  const isManagement = (s: Manifest): boolean =>
    s.metadata.labels?.['app.kubernetes.io/component'] === 'management';
  const clients = services.filter((s) => !isManagement(s));
  const operators = services.filter(isManagement);

  if (clients.length !== 1) {
    problems.push(
      `expected exactly one client Service for the gateway pods, found ${clients.length}`,
    );
  }
  for (const service of clients) {
    for (const port of service.spec?.ports ?? []) {
      const target = resolveTargetPort(container, port);
      if (port.targetPort === 'management' || target === management || target !== http) {
        problems.push(
          `client Service ${service.metadata.name} port ${port.name ?? port.port} reaches container port ` +
            `${String(port.targetPort ?? port.port)}; it may expose only "http" (/mcp), never "management"`,
        );
      }
    }
  }
  if (operators.length === 0) problems.push('expected a management Service for /actuator/*');
  for (const service of operators) {
    for (const port of service.spec?.ports ?? []) {
      if (resolveTargetPort(container, port) !== management) {
        problems.push(`management Service ${service.metadata.name} may expose only "management"`);
      }
    }
  }
}

function networkPolicyProblems(
  docs: readonly Manifest[],
  gateway: RenderedGateway,
  config: string,
  problems: string[],
): void {
  const { container, podLabels } = gateway;
  const http = containerPort(container, 'http') ?? -1;
  const management = containerPort(container, 'management') ?? -1;
  const policies = ofKind(docs, 'NetworkPolicy').filter(
    (p) =>
      isEmptySelector(p.spec?.podSelector) ||
      selectsPod(p.spec?.podSelector?.matchLabels, podLabels),
  );
  if (policies.length === 0) {
    problems.push('expected a NetworkPolicy selecting the gateway pods');
    return;
  }
  const types = new Set(policies.flatMap((p) => p.spec?.policyTypes ?? []));
  if (!types.has('Ingress')) problems.push('the NetworkPolicy must restrict Ingress');
  if (!types.has('Egress')) problems.push('the NetworkPolicy must restrict Egress');

  // Policies add up: every rule of every selecting policy counts.
  const ingress: any[] = policies.flatMap((p) => p.spec?.ingress ?? []);
  if (!ingress.some((r) => rulePortsAdmit(r.ports, http, 'http'))) {
    problems.push('no NetworkPolicy ingress rule admits the agents to "http"');
  }
  ingress.forEach((rule, i) => {
    const peers: any[] = rule.from ?? [];
    const reachesManagement = rulePortsAdmit(rule.ports, management, 'management');
    if (peers.length === 0 || peers.some(isOpenPeer)) {
      problems.push(
        `NetworkPolicy ingress rule ${i} admits every source` +
          (reachesManagement ? ' to "management"; only monitoring may reach /actuator/*' : ''),
      );
    }
    if (reachesManagement && rulePortsAdmit(rule.ports, http, 'http')) {
      problems.push(
        `NetworkPolicy ingress rule ${i} admits the same peers to "http" and "management"; management must have its own rule`,
      );
    }
  });

  const egress: any[] = policies.flatMap((p) => p.spec?.egress ?? []);
  egress.forEach((rule, i) => {
    if ((rule.to ?? []).length === 0 || (rule.to as any[]).some(isOpenPeer)) {
      problems.push(`NetworkPolicy egress rule ${i} admits every destination`);
    }
    if ((rule.ports ?? []).length === 0)
      problems.push(`NetworkPolicy egress rule ${i} admits every port`);
  });
  const egressPorts = egress.flatMap((r) => (r.ports ?? []) as any[]);
  if (!egressPorts.some((p) => p.protocol === 'UDP' && (p.port === 53 || p.port === 5353))) {
    problems.push('NetworkPolicy egress must admit DNS (UDP 53, or 5353 on OpenShift)');
  }
  let bundles: any[] = [];
  try {
    bundles = (parseYaml(config)?.mcp?.bundles as any[]) ?? [];
  } catch {
    // Reported by bundleConfigProblems.
  }
  for (const bundle of bundles) {
    for (const field of ['manifestUrl', 'baseEndpoint'] as const) {
      let port: number;
      try {
        const url = new URL(String(bundle?.[field]));
        port = url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
      } catch {
        continue; // loadGatewayConfig names the bad URL
      }
      if (!egressPorts.some((p) => p.port === port)) {
        problems.push(
          `NetworkPolicy egress admits no traffic to port ${port} of bundle ${bundle?.id} ${field}`,
        );
      }
    }
  }
}

function availabilityProblems(
  docs: readonly Manifest[],
  gateway: RenderedGateway,
  problems: string[],
): void {
  const pdbs = ofKind(docs, 'PodDisruptionBudget').filter((p) =>
    selectsPod(p.spec?.selector?.matchLabels, gateway.podLabels),
  );
  if (pdbs.length === 0) problems.push('expected a PodDisruptionBudget selecting the gateway pods');
  for (const pdb of pdbs) {
    if (pdb.spec?.minAvailable === undefined && pdb.spec?.maxUnavailable === undefined) {
      problems.push(
        `PodDisruptionBudget ${pdb.metadata.name} sets neither minAvailable nor maxUnavailable`,
      );
    }
  }
  const hpa = ofKind(docs, 'HorizontalPodAutoscaler').find(
    (h) =>
      h.spec?.scaleTargetRef?.kind === 'Deployment' &&
      h.spec?.scaleTargetRef?.name === gateway.deployment.metadata.name,
  );
  const replicas: unknown =
    hpa !== undefined ? hpa.spec?.minReplicas : gateway.deployment.spec?.replicas;
  if (typeof replicas !== 'number' || replicas < 2) {
    problems.push(
      `several replicas behind the Service (DESIGN): at least 2, rendered ${String(replicas)}`,
    );
  }
}

/** Every way the rendered chart breaks the deployment contract; [] when it keeps it. */
export function deploymentContractProblems(docs: readonly Manifest[]): string[] {
  const problems: string[] = [];
  let gateway: RenderedGateway;
  try {
    gateway = readRenderedGateway(docs);
  } catch (err) {
    return [(err as Error).message];
  }
  // contract §3: "운영 Helm에는 넣지 않는다" — not in the config, nor anywhere else in the release.
  if (JSON.stringify(docs).includes('fallbackManifestFile')) {
    problems.push('contract §3: fallbackManifestFile must not appear in a deployment');
  }
  bundleConfigProblems(gateway.configText, problems);
  gatewayValidationProblems(docs, problems);
  containerProblems(gateway, problems);
  serviceProblems(docs, gateway, problems);
  networkPolicyProblems(docs, gateway, gateway.configText, problems);
  availabilityProblems(docs, gateway, problems);
  return problems;
}
