import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { scratchDir } from './chart';

/**
 * Just enough of a Kubernetes API server, on 127.0.0.1, for the real `helm template
 * --dry-run=server` to run the chart's `lookup` calls: the discovery documents of the kinds the
 * chart renders, GET of single objects (404 unless the test put the object in), nothing else.
 * `helm template` without a cluster answers every lookup with nothing, so this is how a test
 * reaches a template's "the object already exists" branch without a cluster.
 */

/** Kinds the chart renders: group/version → [resource, kind]. */
const RESOURCES: Readonly<Record<string, readonly (readonly [string, string])[]>> = {
  v1: [
    ['secrets', 'Secret'],
    ['configmaps', 'ConfigMap'],
    ['services', 'Service'],
    ['serviceaccounts', 'ServiceAccount'],
  ],
  'apps/v1': [['deployments', 'Deployment']],
  'policy/v1': [['poddisruptionbudgets', 'PodDisruptionBudget']],
  'networking.k8s.io/v1': [['networkpolicies', 'NetworkPolicy']],
  'autoscaling/v2': [['horizontalpodautoscalers', 'HorizontalPodAutoscaler']],
};

function resourceList(groupVersion: string): object {
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion,
    resources: (RESOURCES[groupVersion] ?? []).map(([name, kind]) => ({
      name,
      singularName: '',
      namespaced: true,
      kind,
      verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'],
    })),
  };
}

function groupList(): object {
  const groups = Object.keys(RESOURCES)
    .filter((gv) => gv.includes('/'))
    .map((gv) => {
      const [name, version] = gv.split('/') as [string, string];
      const entry = { groupVersion: gv, version };
      return { name, versions: [entry], preferredVersion: entry };
    });
  return { kind: 'APIGroupList', apiVersion: 'v1', groups };
}

export class FakeKubeApi {
  /** Objects GET answers, by API path (`/api/v1/namespaces/<ns>/secrets/<name>`). */
  readonly objects = new Map<string, object>();
  /** Every GET of a single object, by path. */
  readonly objectGets: string[] = [];
  private server?: Server;
  private port = 0;

  static async start(): Promise<FakeKubeApi> {
    const api = new FakeKubeApi();
    const server = createServer((req, res) => {
      const path = (req.url ?? '').split('?', 1)[0] ?? '';
      const send = (status: number, body: object): void => {
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      };
      if (req.method !== 'GET') return send(405, { kind: 'Status', code: 405 });
      if (path === '/version') return send(200, { major: '1', minor: '33', gitVersion: 'v1.33.0' });
      if (path === '/api') return send(200, { kind: 'APIVersions', versions: ['v1'] });
      if (path === '/apis') return send(200, groupList());
      if (path === '/api/v1') return send(200, resourceList('v1'));
      const group = /^\/apis\/(.+\/v\d+)$/.exec(path);
      if (group !== null) return send(200, resourceList(group[1]!));
      api.objectGets.push(path);
      const object = api.objects.get(path);
      if (object !== undefined) return send(200, object);
      return send(404, {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        reason: 'NotFound',
        code: 404,
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    api.server = server;
    api.port = (server.address() as AddressInfo).port;
    return api;
  }

  /** A kubeconfig file pointing at this server. */
  kubeconfig(): string {
    const file = join(scratchDir(), `kubeconfig-${this.port}`);
    writeFileSync(
      file,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{name: fake, cluster: {server: "http://127.0.0.1:' + this.port + '"}}]',
        'users: [{name: fake, user: {token: fake}}]',
        'contexts: [{name: fake, context: {cluster: fake, user: fake}}]',
        'current-context: fake',
        '',
      ].join('\n'),
    );
    return file;
  }

  /** Puts a Secret into the fake cluster, as `helm install` of `release` would have left it. */
  putHelmSecret(
    namespace: string,
    name: string,
    release: string,
    data: Record<string, string>,
  ): void {
    this.objects.set(`/api/v1/namespaces/${namespace}/secrets/${name}`, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name,
        namespace,
        // Helm adopts an existing object only when it carries the release's ownership marks.
        labels: { 'app.kubernetes.io/managed-by': 'Helm' },
        annotations: {
          'meta.helm.sh/release-name': release,
          'meta.helm.sh/release-namespace': namespace,
          'helm.sh/resource-policy': 'keep',
        },
      },
      type: 'Opaque',
      data,
    });
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections(); // helm's keep-alive connections would hold close() open
    await closed;
  }
}
