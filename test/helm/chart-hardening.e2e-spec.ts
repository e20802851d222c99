import {
  renderChart,
  removeScratchDir,
  runHelm,
  VALUES_OCP,
  writeValuesFile,
  CHART_DIR,
} from './chart';
import { loadRenderedConfig, readRenderedGateway } from './deployment-contract';
import { helmBinary } from './helm-binary';

beforeAll(() => {
  helmBinary();
}, 120_000);
afterAll(removeScratchDir);

/** `helm template` with these values; the error text when the chart refuses them. */
function refusal(name: string, values: Record<string, unknown>): string {
  const file = writeValuesFile(name, values);
  const result = runHelm(['template', 'mcp-gateway', CHART_DIR, '-f', VALUES_OCP, '-f', file]);
  expect(result.status).not.toBe(0);
  return result.stderr;
}

const kinds = (docs: ReturnType<typeof renderChart>): string[] =>
  docs.map((d) => String((d as { kind?: unknown }).kind));

/**
 * helm/mcp-gateway/README.md "Values checked before install, monitors, memory": the chart refuses
 * what cannot boot.
 */
describe('helm/mcp-gateway: values.schema.json, monitors, MANAGEMENT_HOST, heap', () => {
  it('refuses refreshIntervalSeconds given as a string', () => {
    expect(
      refusal('string-interval.yaml', {
        gateway: { config: { mcp: { registry: { refreshIntervalSeconds: '30' } } } },
      }),
    ).toContain('refreshIntervalSeconds');
  });

  // The gateway refuses these at boot (an unknown key of its config model); the schema is held
  // to that model by test/helm/values-schema-model.e2e-spec.ts.
  it.each([
    ['refreshIntervalSecond', { registry: { refreshIntervalSecond: 30 } }],
    ['mdoe', { auth: { mdoe: 'jwt' } }],
    ['manifestURL', { bundles: [{ id: 'a', manifestURL: 'http://x', namePrefix: 'a.' }] }],
    ['call', { upstreams: [{ id: 'u', url: 'http://u:1/mcp', timeouts: { call: 5 } }] }],
    ['matches', { access: { rules: [{ match: { subject: 's', matches: 'x' } }] } }],
    ['keepAlive', { listen: { keepAlive: 5 } }],
    ['rateLimit', { rateLimit: { store: 'redis' } }],
  ])('refuses a typo inside gateway.config.mcp (%s) before install', (word, mcp) => {
    const stderr = refusal(`typo-${word}.yaml`, {
      gateway: { config: { mcp: { identity: 'gw', ...mcp } } },
    });
    expect(stderr).toMatch(new RegExp(`additional properties '${word}' not allowed`, 'i'));
  });

  it('refuses an unknown key beside mcp in gateway.config', () => {
    expect(refusal('typo-root.yaml', { gateway: { config: { mpc: { identity: 'gw' } } } })).toMatch(
      /additional properties 'mpc' not allowed/i,
    );
  });

  it('refuses an empty session-key Secret key, a bad serverErrorBody and a port out of range', () => {
    expect(refusal('no-key.yaml', { sessionKeys: { key: '' } })).toContain('/sessionKeys/key');
    expect(
      refusal('bad-error-body.yaml', {
        gateway: {
          config: {
            mcp: {
              identity: 'x',
              bundles: [
                {
                  id: 'a',
                  manifestUrl: 'http://a/m',
                  baseEndpoint: 'http://a/mcp',
                  namePrefix: 'a.',
                  serverErrorBody: 'verbose',
                },
              ],
            },
          },
        },
      }),
    ).toContain('serverErrorBody');
    expect(refusal('bad-port.yaml', { gateway: { port: 70000 } })).toContain('/gateway/port');
  });

  it('renders no ServiceMonitor or PodMonitor by default, and each when enabled', () => {
    expect(kinds(renderChart([VALUES_OCP]))).not.toEqual(
      expect.arrayContaining(['ServiceMonitor']),
    );
    expect(kinds(renderChart([VALUES_OCP]))).not.toEqual(expect.arrayContaining(['PodMonitor']));
    const on = writeValuesFile('monitors.yaml', {
      metrics: {
        serviceMonitor: { enabled: true, labels: { release: 'prometheus' } },
        podMonitor: { enabled: true },
      },
    });
    const docs = renderChart([VALUES_OCP, on]);
    const monitor = docs.find(
      (d) => (d as { kind?: string }).kind === 'ServiceMonitor',
    ) as unknown as {
      metadata: { labels: Record<string, string> };
      spec: { endpoints: { port: string; path: string }[] };
    };
    expect(monitor.metadata.labels.release).toBe('prometheus');
    expect(monitor.spec.endpoints[0]).toMatchObject({
      port: 'management',
      path: '/actuator/prometheus',
    });
    expect(kinds(docs)).toContain('PodMonitor');
  });

  it('sets MANAGEMENT_HOST only when gateway.managementHost is given', () => {
    expect(readRenderedGateway(renderChart([VALUES_OCP])).env.MANAGEMENT_HOST).toBeUndefined();
    const set = writeValuesFile('mgmt-host.yaml', { gateway: { managementHost: '0.0.0.0' } });
    expect(readRenderedGateway(renderChart([VALUES_OCP, set])).env.MANAGEMENT_HOST).toBe('0.0.0.0');
  });

  it("passes mcp.management.allowedHosts through and adds the management Service's own names, never <svc>.<namespace> (a namespace may be a public TLD)", () => {
    const docs = renderChart([VALUES_OCP]);
    const service = docs.find(
      (d) =>
        d.kind === 'Service' && d.metadata.labels?.['app.kubernetes.io/component'] === 'management',
    );
    const svc = service?.metadata.name ?? 'no management Service';
    const ns = 'mcp-contract-test';
    const own = [svc, `${svc}.${ns}.svc`, `${svc}.${ns}.svc.cluster.local`];
    expect(loadRenderedConfig(docs).mcp.management.allowedHosts).toEqual(own);
    // <svc>.<ns> is a registrable public name when <ns> is a TLD (tools, dev): DNS rebinding
    expect(loadRenderedConfig(docs).mcp.management.allowedHosts).not.toContain(`${svc}.${ns}`);

    const listed = writeValuesFile('mgmt-allowed-hosts.yaml', {
      gateway: {
        config: { mcp: { management: { allowedHosts: ['console.example.com', 'ops.example:*'] } } },
      },
      managementService: { clusterDomain: 'k8s.internal' },
    });
    expect(
      loadRenderedConfig(renderChart([VALUES_OCP, listed])).mcp.management.allowedHosts,
    ).toEqual([
      'console.example.com',
      'ops.example:*',
      ...own.slice(0, 2),
      `${svc}.${ns}.svc.k8s.internal`,
    ]);

    const off = writeValuesFile('mgmt-no-service-names.yaml', {
      managementService: { allowServiceHostNames: false },
    });
    expect(loadRenderedConfig(renderChart([VALUES_OCP, off])).mcp.management.allowedHosts).toEqual(
      [],
    );
  });

  it('refuses a wildcard name in mcp.management.allowedHosts', () => {
    expect(
      refusal('mgmt-wildcard.yaml', {
        gateway: { config: { mcp: { management: { allowedHosts: ['*.example.com'] } } } },
      }),
    ).toContain('allowedHosts');
  });

  it.each([
    ['1Gi', 50, '--max-old-space-size=512'],
    ['512M', 50, '--max-old-space-size=244'],
    ['768Mi', 60, '--max-old-space-size=460'],
  ])('sizes the V8 heap from a %s memory limit at %d %%', (memory, pct, flag) => {
    const values = writeValuesFile(`heap-${memory}.yaml`, {
      resources: { limits: { memory } },
      gateway: { heapPercentOfMemoryLimit: pct },
    });
    const { env } = readRenderedGateway(renderChart([VALUES_OCP, values]));
    expect(env.NODE_OPTIONS).toBe(`--max-semi-space-size=2 ${flag}`);
  });
});

/** helm/mcp-gateway/README.md "NetworkPolicy": an egress group for each kind of destination. */
describe('helm/mcp-gateway: egress for upstreams, the identity provider and registered servers', () => {
  const UPSTREAM = { id: 'gh', url: 'https://mcp.github.internal/mcp' };
  const only = (ns: string, port: number) => [
    {
      to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } } }],
      ports: [{ port, protocol: 'TCP' }],
    },
  ];
  const egressOf = (docs: ReturnType<typeof renderChart>): unknown[] =>
    (docs.find((d) => (d as { kind?: string }).kind === 'NetworkPolicy') as any).spec.egress;

  it('an upstream-only deployment installs, and its upstreams group is in the policy', () => {
    const file = writeValuesFile('upstream-only.yaml', {
      gateway: { config: { mcp: { identity: 'gw', bundles: [], upstreams: [UPSTREAM] } } },
      networkPolicy: { egress: { toolServices: [], upstreams: only('github', 443) } },
    });
    const egress = egressOf(renderChart([VALUES_OCP, file]));
    expect(egress).toEqual(expect.arrayContaining(only('github', 443)));
  });

  it('refuses upstreams without an upstreams egress group, and mcp.auth jwt without identityProvider', () => {
    expect(
      refusal('no-upstream-egress.yaml', {
        gateway: { config: { mcp: { identity: 'gw', bundles: [], upstreams: [UPSTREAM] } } },
        networkPolicy: { egress: { toolServices: [] } },
      }),
    ).toContain('networkPolicy.egress.upstreams is empty');
    // The refusal says what an unreachable JWKS does: 503 with Retry-After (docs/operations.md
    // §13 "Refusals"), not 401, which would send an operator after the tokens instead.
    const noIdp = refusal('no-idp-egress.yaml', {
      gateway: {
        config: {
          mcp: {
            identity: 'gw',
            auth: {
              mode: 'jwt',
              issuer: 'https://idp',
              audience: 'https://gw.example/mcp',
              jwksUrl: 'https://idp/jwks',
            },
          },
        },
      },
    });
    expect(noIdp).toContain('networkPolicy.egress.identityProvider is empty');
    expect(noIdp).toContain('answered 503');
    expect(noIdp).not.toContain('401');
  });

  it('refuses a source whose authorization names a tokenEndpoint without identityProvider, and renders it with one', () => {
    const exchanging = {
      ...UPSTREAM,
      authorization: {
        mode: 'tokenExchange',
        tokenEndpoint: 'https://idp.example.com/oauth2/token',
        clientId: 'gateway',
        clientSecretEnv: 'GH_EXCHANGE_SECRET',
      },
    };
    const mcp = { identity: 'gw', bundles: [], upstreams: [exchanging] };
    expect(
      refusal('no-idp-egress-exchange.yaml', {
        gateway: { config: { mcp } },
        networkPolicy: { egress: { toolServices: [], upstreams: only('github', 443) } },
      }),
    ).toContain('networkPolicy.egress.identityProvider is empty but a source');
    const file = writeValuesFile('idp-egress-exchange.yaml', {
      gateway: { config: { mcp } },
      networkPolicy: {
        egress: {
          toolServices: [],
          upstreams: only('github', 443),
          identityProvider: only('idp', 443),
        },
      },
    });
    expect(egressOf(renderChart([VALUES_OCP, file]))).toEqual(
      expect.arrayContaining(only('idp', 443)),
    );
  });

  it('refuses Redis Sentinel or Cluster nodes without a redis egress group, and renders the group given', () => {
    for (const redis of [
      { sentinels: ['redis-sentinel.data:26379'], masterName: 'gw' },
      { clusterNodes: ['redis-0.redis.data:6379'] },
    ])
      expect(
        refusal(`no-redis-egress-${Object.keys(redis)[0]}.yaml`, {
          gateway: { config: { mcp: { identity: 'gw', redis } } },
        }),
      ).toContain('networkPolicy.egress.redis is empty but gateway.config.mcp.redis names');
    // two Redis at once: the gateway would refuse them at boot
    expect(
      refusal('redis-twice.yaml', {
        redis: { existingSecret: 'redis-url' },
        gateway: { config: { mcp: { identity: 'gw', redis: { clusterNodes: ['r:6379'] } } } },
        networkPolicy: {
          egress: {
            redis: [{ to: [{ ipBlock: { cidr: '10.0.0.0/8' } }], ports: [{ port: 6379 }] }],
          },
        },
      }),
    ).toContain('the gateway takes one Redis');
    // a port the gateway refuses is refused before install
    for (const entry of ['r:0', 'r:65536', 'r:99999'])
      expect(
        refusal(`redis-port-${entry.slice(2)}.yaml`, {
          gateway: { config: { mcp: { identity: 'gw', redis: { clusterNodes: [entry] } } } },
        }),
      ).toContain('clusterNodes');
    const group = [
      { to: [{ ipBlock: { cidr: '10.30.0.0/24' } }], ports: [{ port: 26379, protocol: 'TCP' }] },
    ];
    const file = writeValuesFile('sentinel-egress.yaml', {
      gateway: {
        config: {
          mcp: { identity: 'gw', redis: { sentinels: ['10.30.0.5:26379'], masterName: 'gw' } },
        },
      },
      networkPolicy: { egress: { redis: group } },
    });
    expect(egressOf(renderChart([VALUES_OCP, file]))).toEqual(expect.arrayContaining(group));
  });

  it('refuses mcp.tracing.endpoint without a telemetry egress group, and renders the group given', () => {
    const tracing = { endpoint: 'http://otel-collector.observability:4318/v1/traces' };
    expect(
      refusal('no-telemetry-egress.yaml', {
        gateway: { config: { mcp: { identity: 'gw', tracing } } },
      }),
    ).toContain('networkPolicy.egress.telemetry is empty but gateway.config.mcp.tracing.endpoint');
    const group = [
      {
        to: [
          {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'observability' } },
          },
        ],
        ports: [{ port: 4318, protocol: 'TCP' }],
      },
    ];
    const file = writeValuesFile('telemetry-egress.yaml', {
      gateway: { config: { mcp: { identity: 'gw', tracing } } },
      networkPolicy: { egress: { telemetry: group } },
    });
    expect(egressOf(renderChart([VALUES_OCP, file]))).toEqual(expect.arrayContaining(group));
  });

  it('registered servers get their own group, rendered as given', () => {
    const registered = [
      { to: [{ ipBlock: { cidr: '10.20.0.0/16' } }], ports: [{ port: 443, protocol: 'TCP' }] },
    ];
    const file = writeValuesFile('registered.yaml', {
      networkPolicy: { egress: { registeredServers: registered } },
    });
    expect(egressOf(renderChart([VALUES_OCP, file]))).toEqual(expect.arrayContaining(registered));
  });
});
