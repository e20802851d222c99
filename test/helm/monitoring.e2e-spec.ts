import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { GatewayMetrics } from '../../libs/observability/src/gateway-metrics';
import {
  CHART_DIR,
  RELEASE_NAMESPACE,
  removeScratchDir,
  renderChart,
  scratchDir,
  VALUES_OCP,
  type Manifest,
} from './chart';
import { helmBinary } from './helm-binary';

/**
 * The chart's optional monitoring objects (helm/mcp-gateway/README.md "Dashboard and alerts"):
 * the PrometheusRule is checked and its alerts tried on synthetic series with the real
 * `promtool` (Debian package `prometheus`), the dashboard's queries parsed by it, and every
 * metric either names is one the gateway exports.
 */
const PROMTOOL = 'promtool';

function promtool(args: readonly string[]): { status: number | null; out: string } {
  const result = spawnSync(PROMTOOL, args, { cwd: scratchDir(), encoding: 'utf8' });
  if (result.error !== undefined)
    throw new Error(
      `promtool could not be run (${result.error.message}): install the Debian package prometheus`,
    );
  return { status: result.status, out: `${result.stdout}${result.stderr}` };
}

const monitoringOn = [
  'metrics.prometheusRule.enabled=true',
  'metrics.grafanaDashboard.enabled=true',
];

type Rule = {
  alert: string;
  expr: string;
  for: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
};
type RuleGroup = { name: string; rules: Rule[] };

let objects: Manifest[];
let groups: RuleGroup[];
let podName: string;

beforeAll(() => {
  helmBinary();
  objects = renderChart([VALUES_OCP], monitoringOn);
  const rule = objects.find((o) => o.kind === 'PrometheusRule');
  groups = (rule?.spec as { groups: RuleGroup[] }).groups;
  const deployment = objects.find((o) => o.kind === 'Deployment')!;
  podName = `${deployment.metadata.name}-6d9f7c8b5-x2x7q`;
}, 120_000);
afterAll(removeScratchDir);

/** The mcp_gateway_* metric names a PromQL text reads (histogram series to their metric). */
function metricNames(text: string): string[] {
  return [...text.matchAll(/\bmcp_gateway_[a-z0-9_]+/g)].map((m) =>
    m[0].replace(/_(bucket|count|sum)$/, ''),
  );
}

/** The annotation as Prometheus renders it for an alert with these labels. */
function rendered(template: string, labels: Record<string, string>): string {
  return template.replace(/\{\{ \$labels\.(\w+) \}\}/g, (_, name: string) => labels[name] ?? '');
}

describe('helm/mcp-gateway: dashboard and alerts', () => {
  it('renders neither by default', () => {
    const kinds = renderChart([VALUES_OCP]).map((o) => o.kind);
    expect(kinds).not.toContain('PrometheusRule');
    expect(renderChart([VALUES_OCP]).some((o) => o.metadata.name.endsWith('-dashboard'))).toBe(
      false,
    );
  });

  it('the PrometheusRule passes promtool check rules', () => {
    const file = join(scratchDir(), 'rules.yaml');
    writeFileSync(file, stringify({ groups }));
    const check = promtool(['check', 'rules', file]);
    expect(check.out).toContain('SUCCESS: 4 rules found');
    expect(check.status).toBe(0);
  });

  it('its alerts fire on synthetic series, and only where they should (promtool test rules)', () => {
    writeFileSync(join(scratchDir(), 'rules.yaml'), stringify({ groups }));
    const rules = new Map(groups.flatMap((g) => g.rules).map((r) => [r.alert, r]));
    const at = `namespace="${RELEASE_NAMESPACE}",pod="${podName}"`;
    const elsewhere = `namespace="another-team",pod="${podName}"`;
    const expected = (alert: string, labels: Record<string, string>) => ({
      // every alert keeps the namespace of the gateway it is about (Alertmanager routes by it)
      exp_labels: { severity: 'warning', namespace: RELEASE_NAMESPACE, ...labels },
      exp_annotations: Object.fromEntries(
        Object.entries(rules.get(alert)!.annotations).map(([k, v]) => [k, rendered(v, labels)]),
      ),
    });
    const tests = {
      rule_files: ['rules.yaml'],
      evaluation_interval: '1m',
      tests: [
        {
          interval: '1m',
          input_series: [
            // degraded from the start; fallback and healthy sources; another namespace's gateway
            {
              series: `mcp_gateway_source_status{${at},kind="bundle",source="orders",status="degraded"}`,
              values: '1x30',
            },
            {
              series: `mcp_gateway_source_status{${at},kind="upstream",source="github",status="healthy"}`,
              values: '1x30',
            },
            {
              series: `mcp_gateway_source_status{${elsewhere},kind="bundle",source="theirs",status="unreachable"}`,
              values: '1x30',
            },
            { series: `mcp_gateway_catalog_tools{${at}}`, values: '0x30' },
            // bundle "pay": a third of the answers time out; bundle "quotes": 4xx only (input refused)
            {
              series: `mcp_gateway_tool_service_responses_total{${at},bundle="pay",status_class="2xx"}`,
              values: '0+20x30',
            },
            {
              series: `mcp_gateway_tool_service_responses_total{${at},bundle="pay",status_class="timeout"}`,
              values: '0+10x30',
            },
            {
              series: `mcp_gateway_tool_service_responses_total{${at},bundle="quotes",status_class="4xx"}`,
              values: '0+10x30',
            },
            // upstream "search": unreachable half the time; "docs": JSON-RPC errors and cancellations only
            {
              series: `mcp_gateway_upstream_calls_total{${at},upstream="search",method="tools/call",outcome="success"}`,
              values: '0+10x30',
            },
            {
              series: `mcp_gateway_upstream_calls_total{${at},upstream="search",method="tools/call",outcome="unreachable"}`,
              values: '0+10x30',
            },
            {
              series: `mcp_gateway_upstream_calls_total{${at},upstream="docs",method="tools/call",outcome="error"}`,
              values: '0+10x30',
            },
            {
              series: `mcp_gateway_upstream_calls_total{${at},upstream="docs",method="tools/call",outcome="cancelled"}`,
              values: '0+10x30',
            },
          ],
          alert_rule_test: [
            { eval_time: '9m', alertname: 'McpGatewaySourceDegraded', exp_alerts: [] },
            {
              eval_time: '11m',
              alertname: 'McpGatewaySourceDegraded',
              exp_alerts: [
                expected('McpGatewaySourceDegraded', { kind: 'bundle', source: 'orders' }),
              ],
            },
            { eval_time: '4m', alertname: 'McpGatewayCatalogNotPublished', exp_alerts: [] },
            {
              eval_time: '6m',
              alertname: 'McpGatewayCatalogNotPublished',
              exp_alerts: [expected('McpGatewayCatalogNotPublished', { pod: podName })],
            },
            {
              eval_time: '20m',
              alertname: 'McpGatewayBundleCallErrors',
              exp_alerts: [expected('McpGatewayBundleCallErrors', { bundle: 'pay' })],
            },
            {
              eval_time: '20m',
              alertname: 'McpGatewayUpstreamCallErrors',
              exp_alerts: [expected('McpGatewayUpstreamCallErrors', { upstream: 'search' })],
            },
          ],
        },
      ],
    };
    writeFileSync(join(scratchDir(), 'rules-test.yaml'), stringify(tests));
    const run = promtool(['test', 'rules', 'rules-test.yaml']);
    expect(run.out).toContain('SUCCESS');
    expect(run.status).toBe(0);
  });

  it('the dashboard is a ConfigMap for the Grafana sidecar whose every query promtool parses', () => {
    const map = objects.find(
      (o) => o.kind === 'ConfigMap' && o.metadata.name.endsWith('-dashboard'),
    );
    expect(map?.metadata.labels?.grafana_dashboard).toBe('1');
    const data = (map?.data as Record<string, string> | undefined)?.['mcp-gateway.json'] ?? '';
    expect(data).toBe(
      readFileSync(join(CHART_DIR, 'dashboards', 'mcp-gateway.json'), 'utf8').trimEnd(),
    );
    const dashboard = JSON.parse(data) as {
      uid: string;
      panels: { title: string; targets?: { expr: string }[] }[];
    };
    expect(dashboard.uid).toBe('mcp-gateway');
    const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
    expect(exprs.length).toBeGreaterThanOrEqual(15);
    // Grafana's variables, as Grafana substitutes them, and each query as a recording rule
    const concrete = exprs.map((e) =>
      e
        .replaceAll('$__rate_interval', '2m')
        .replaceAll('$namespace', RELEASE_NAMESPACE)
        .replaceAll('$pod', '.*'),
    );
    const file = join(scratchDir(), 'dashboard-queries.yaml');
    writeFileSync(
      file,
      stringify({
        groups: [
          {
            name: 'dashboard',
            rules: concrete.map((expr, i) => ({ record: `dashboard:query_${i}`, expr })),
          },
        ],
      }),
    );
    const check = promtool(['check', 'rules', file]);
    expect(check.out).toContain(`SUCCESS: ${exprs.length} rules found`);
    // what the issue asks to see: calls, errors, latency per source and tool, refresh rounds,
    // catalog size, stream counts
    const all = exprs.join('\n');
    for (const metric of [
      'mcp_gateway_tool_calls_total',
      'mcp_gateway_tool_call_duration_seconds_bucket',
      'mcp_gateway_tool_service_responses_total',
      'mcp_gateway_upstream_calls_total',
      'mcp_gateway_upstream_call_duration_seconds_bucket',
      'mcp_gateway_refresh_round_duration_seconds_count',
      'mcp_gateway_catalog_tools',
      'mcp_gateway_notification_streams_open',
      'mcp_gateway_source_status',
    ])
      expect(all).toContain(metric);
  });

  it('every metric the alerts and the dashboard read is one the gateway exports', async () => {
    const exported = new Set(
      [...(await new GatewayMetrics().exposition()).body.matchAll(/^# TYPE (\S+) /gm)].map(
        (m) => m[1],
      ),
    );
    expect(exported.has('mcp_gateway_source_status')).toBe(true);
    const map = objects.find(
      (o) => o.kind === 'ConfigMap' && o.metadata.name.endsWith('-dashboard'),
    );
    const read = new Set([
      ...groups.flatMap((g) => g.rules).flatMap((r) => metricNames(r.expr)),
      ...metricNames((map?.data as Record<string, string> | undefined)?.['mcp-gateway.json'] ?? ''),
    ]);
    expect(read.size).toBeGreaterThanOrEqual(10);
    expect([...read].filter((name) => !exported.has(name))).toEqual([]);
  });
});
