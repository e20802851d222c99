import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { RELEASE_NAMESPACE, removeScratchDir, renderChart, scratchDir, VALUES_OCP } from './chart';
import { helmBinary } from './helm-binary';

type Rule = { alert: string; expr: string; annotations: Record<string, string> };

/**
 * helm/mcp-gateway/README.md "Dashboard and alerts": "Each expression is scoped to the release's
 * namespace and pods". The expressions aggregate with `max by (kind, source)`, `max by (pod)`,
 * `sum by (bundle)` and `sum by (upstream)`, which drop the `namespace` label the scrape added:
 * the alerts Alertmanager receives carry no namespace (nor, for the source alert, the pod), so
 * a route that sends each team its own namespace's alerts (the usual `matchers: namespace=…`;
 * kube-prometheus' own rules keep `namespace` in every `by`) never matches them, and two
 * releases in two namespaces alerting on the same source id (`github`) are indistinguishable
 * in the notification. Expected: every alert keeps `namespace`.
 */
describe('PrometheusRule alerts', () => {
  let rules: Rule[];
  beforeAll(() => {
    helmBinary();
    const objects = renderChart([VALUES_OCP], ['metrics.prometheusRule.enabled=true']);
    const rule = objects.find((o) => o.kind === 'PrometheusRule')!;
    rules = (rule.spec as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);
    writeFileSync(join(scratchDir(), 'ns-rules.yaml'), stringify(rule.spec));
  }, 120_000);
  afterAll(removeScratchDir);

  it('carry the namespace label of the gateway they are about (promtool test rules)', () => {
    const deployment = renderChart([VALUES_OCP]).find((o) => o.kind === 'Deployment')!;
    const at = `namespace="${RELEASE_NAMESPACE}",pod="${deployment.metadata.name}-6d9f7c8b5-x2x7q"`;
    const tests = {
      rule_files: ['ns-rules.yaml'],
      evaluation_interval: '1m',
      tests: [
        {
          interval: '1m',
          input_series: [
            {
              series: `mcp_gateway_source_status{${at},kind="bundle",source="orders",status="degraded"}`,
              values: '1x30',
            },
          ],
          alert_rule_test: [
            {
              eval_time: '20m',
              alertname: 'McpGatewaySourceDegraded',
              exp_alerts: [
                {
                  exp_labels: {
                    severity: 'warning',
                    namespace: RELEASE_NAMESPACE,
                    kind: 'bundle',
                    source: 'orders',
                  },
                  exp_annotations: Object.fromEntries(
                    Object.entries(
                      rules.find((r) => r.alert === 'McpGatewaySourceDegraded')!.annotations,
                    ).map(([k, v]) => [
                      k,
                      v.replace(/\{\{ \$labels\.(\w+) \}\}/g, (_, n: string) =>
                        n === 'kind' ? 'bundle' : n === 'source' ? 'orders' : '',
                      ),
                    ]),
                  ),
                },
              ],
            },
          ],
        },
      ],
    };
    writeFileSync(join(scratchDir(), 'ns-tests.yaml'), stringify(tests));
    const result = spawnSync('promtool', ['test', 'rules', 'ns-tests.yaml'], {
      cwd: scratchDir(),
      encoding: 'utf8',
    });
    expect(result.error).toBeUndefined();
    expect(`${result.stdout}${result.stderr}`).not.toMatch(/FAILED/);
    expect(result.status).toBe(0);
  });

  it('keep namespace in every aggregation', () => {
    for (const rule of rules) {
      for (const by of rule.expr.matchAll(/\bby \(([^)]*)\)/g))
        expect({ alert: rule.alert, by: by[1] }).toEqual({
          alert: rule.alert,
          by: expect.stringContaining('namespace'),
        });
    }
  });
});
