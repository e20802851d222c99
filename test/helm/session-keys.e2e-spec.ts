import {
  CHART_DIR,
  parseManifests,
  RELEASE_NAME,
  RELEASE_NAMESPACE,
  removeScratchDir,
  renderChart,
  runHelmAsync,
  VALUES_OCP,
  type Manifest,
} from './chart';
import {
  deploymentContractProblems,
  loadRenderedConfig,
  readRenderedGateway,
  renderedSecretValue,
} from './deployment-contract';
import { FakeKubeApi } from './fake-kube-api';
import { helmBinary } from './helm-binary';

/**
 * helm/mcp-gateway/README.md "Secrets": a first `helm install` must not need a hand-made Secret.
 * When the operator names no session-key Secret the chart generates one, in the gateway's own
 * format, and keeps it stable across upgrades (lookup of the Secret already in the cluster) and
 * uninstalls (helm.sh/resource-policy: keep).
 *
 * `helm template` alone never talks to a cluster, so its `lookup` always answers nothing. The
 * reuse branch is run with the real helm in `--dry-run=server` mode against FakeKubeApi, a
 * stand-in API server that answers discovery and GETs of the objects a test puts in. What that
 * does not show: a real API server's RBAC (the release's credentials must be allowed to read
 * Secrets in the namespace, which `helm upgrade` needs anyway) and the keep policy on a real
 * uninstall.
 */

const GENERATED_NAME = 'mcp-insurance-core-mcp-gateway-session-keys';
const KEY_FORMAT = /^k1:[A-Za-z0-9+/]{43}=$/;

const secrets = (docs: readonly Manifest[]): Manifest[] => docs.filter((d) => d.kind === 'Secret');

beforeAll(() => {
  helmBinary();
}, 120_000);
afterAll(removeScratchDir);

describe('helm/mcp-gateway: MCP_SESSION_KEYS when the operator names no Secret (helm/mcp-gateway/README.md "Secrets")', () => {
  let docs: Manifest[];

  beforeAll(() => {
    docs = renderChart();
  });

  it('generates the Secret <fullname>-session-keys, kept on uninstall, and the Deployment reads it', () => {
    const [secret, ...others] = secrets(docs);
    expect(others).toEqual([]);
    expect(secret?.metadata).toMatchObject({
      name: GENERATED_NAME,
      namespace: RELEASE_NAMESPACE,
      annotations: { 'helm.sh/resource-policy': 'keep' },
    });
    expect(secret?.type).toBe('Opaque');
    expect(Object.keys(secret?.data ?? {})).toEqual(['MCP_SESSION_KEYS']);
    expect(readRenderedGateway(docs).secretEnv.MCP_SESSION_KEYS).toEqual({
      name: GENERATED_NAME,
      key: 'MCP_SESSION_KEYS',
    });
  });

  it('holds one key "k1:<32 random bytes, base64>" that the gateway\'s config loader accepts', () => {
    const value = renderedSecretValue(docs, { name: GENERATED_NAME, key: 'MCP_SESSION_KEYS' });
    expect(value).toMatch(KEY_FORMAT);
    // loadRenderedConfig feeds the rendered Secret's value to the real loadGatewayConfig.
    const config = loadRenderedConfig(docs);
    expect(config.sessionKeys.map((k) => [k.kid, k.key.length])).toEqual([['k1', 32]]);
    expect(config.sessionKeys[0]?.key.equals(Buffer.from(value!.slice(3), 'base64'))).toBe(true);
    expect(config.sessionKeysEphemeral).toBe(false);
    expect(deploymentContractProblems(docs)).toEqual([]);
  });

  it('generates a new random value when there is nothing to reuse (helm template sees no cluster)', () => {
    const again = renderChart();
    const ref = { name: GENERATED_NAME, key: 'MCP_SESSION_KEYS' };
    expect(renderedSecretValue(again, ref)).toMatch(KEY_FORMAT);
    expect(renderedSecretValue(again, ref)).not.toBe(renderedSecretValue(docs, ref));
  });
});

describe('helm/mcp-gateway: MCP_SESSION_KEYS from a Secret the operator names', () => {
  it('values-ocp.yaml names mcp-gateway-session-keys: no Secret is generated, the Deployment reads that one', () => {
    const docs = renderChart([VALUES_OCP]);
    expect(secrets(docs)).toEqual([]);
    expect(readRenderedGateway(docs).secretEnv.MCP_SESSION_KEYS).toEqual({
      name: 'mcp-gateway-session-keys',
      key: 'MCP_SESSION_KEYS',
    });
  });

  it('any other name and key (--set): no Secret is generated', () => {
    const docs = renderChart([], ['sessionKeys.existingSecret=my-keys', 'sessionKeys.key=keys']);
    expect(secrets(docs)).toEqual([]);
    expect(readRenderedGateway(docs).secretEnv.MCP_SESSION_KEYS).toEqual({
      name: 'my-keys',
      key: 'keys',
    });
  });

  it('generate=false and no name: no Secret, no MCP_SESSION_KEYS; the gateway starts stateless', () => {
    const docs = renderChart([], ['sessionKeys.generate=false']);
    expect(secrets(docs)).toEqual([]);
    expect(readRenderedGateway(docs).secretEnv.MCP_SESSION_KEYS).toBeUndefined();
    expect(loadRenderedConfig(docs).sessionKeys).toEqual([]);
  });
});

describe('helm/mcp-gateway: an upgrade reuses the generated Secret already in the cluster (lookup)', () => {
  let api: FakeKubeApi;
  const path = `/api/v1/namespaces/${RELEASE_NAMESPACE}/secrets/${GENERATED_NAME}`;

  beforeAll(async () => {
    api = await FakeKubeApi.start();
  });
  afterAll(async () => {
    await api?.stop();
  });

  /** `helm template --dry-run=server`: lookup reads the fake cluster. */
  async function renderAgainstCluster(): Promise<Manifest[]> {
    const result = await runHelmAsync([
      'template',
      RELEASE_NAME,
      CHART_DIR,
      '--namespace',
      RELEASE_NAMESPACE,
      '--kubeconfig',
      api.kubeconfig(),
      '--dry-run=server',
      '--disable-openapi-validation',
    ]);
    if (result.status !== 0) throw new Error(`helm template failed: ${result.stderr}`);
    return parseManifests(result.stdout);
  }
  const valueOf = (docs: readonly Manifest[]) =>
    renderedSecretValue(docs, { name: GENERATED_NAME, key: 'MCP_SESSION_KEYS' });

  it('looks up exactly the Secret it renders, in the release namespace; none there: a new key', async () => {
    api.objects.clear();
    api.objectGets.length = 0;
    const docs = await renderAgainstCluster();
    expect(api.objectGets).toContain(path);
    expect(valueOf(docs)).toMatch(KEY_FORMAT);
  });

  it('keeps the value the cluster holds, render after render', async () => {
    const installed = `k1:${Buffer.alloc(32, 0x5a).toString('base64')}`;
    api.putHelmSecret(RELEASE_NAMESPACE, GENERATED_NAME, RELEASE_NAME, {
      MCP_SESSION_KEYS: Buffer.from(installed).toString('base64'),
    });
    const first = await renderAgainstCluster();
    const second = await renderAgainstCluster();
    expect(valueOf(first)).toBe(installed);
    expect(valueOf(second)).toBe(installed);
    // The Secret stays the chart's: same name, still kept on uninstall.
    expect((secrets(first)[0]?.metadata as any).annotations).toEqual({
      'helm.sh/resource-policy': 'keep',
    });
    expect(loadRenderedConfig(first).sessionKeys[0]?.key.equals(Buffer.alloc(32, 0x5a))).toBe(true);
  });

  it('a Secret without the key (emptied by hand) gets a new key rather than an empty value', async () => {
    api.putHelmSecret(RELEASE_NAMESPACE, GENERATED_NAME, RELEASE_NAME, {});
    expect(valueOf(await renderAgainstCluster())).toMatch(KEY_FORMAT);
  });
});
