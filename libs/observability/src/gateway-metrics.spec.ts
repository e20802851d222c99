import { GatewayMetrics } from './gateway-metrics';

describe('GatewayMetrics: series of tools that left the catalog', () => {
  it('drops every call and duration series of a forgotten tool and keeps the others', async () => {
    const metrics = new GatewayMetrics();
    metrics.toolCall('a.v1.search', 'a', 'success', '2xx', 0.01);
    metrics.toolCall('a.v1.search', 'a', 'timeout', 'timeout', 5);
    metrics.toolCall('a.v2.search', 'a', 'success', '2xx', 0.02);
    const before = (await metrics.exposition()).body;
    expect(before).toContain('tool="a.v1.search"');

    metrics.forgetTools(['a.v1.search', 'a.never-called']);
    const after = (await metrics.exposition()).body;
    expect(after).not.toContain('a.v1.search');
    expect(after).toMatch(
      /^mcp_gateway_tool_calls_total\{tool="a\.v2\.search",outcome="success"\} 1$/m,
    );
    expect(after).toMatch(
      /^mcp_gateway_tool_call_duration_seconds_count\{tool="a\.v2\.search"\} 1$/m,
    );
    // the per-bundle status-class counter is bounded by config and stays
    expect(after).toMatch(
      /^mcp_gateway_tool_service_responses_total\{bundle="a",status_class="timeout"\} 1$/m,
    );
  });

  it('counts a tool again from zero if it comes back', async () => {
    const metrics = new GatewayMetrics();
    metrics.toolCall('a.t', 'a', 'success', '2xx', 0.01);
    metrics.toolCall('a.t', 'a', 'success', '2xx', 0.01);
    metrics.forgetTools(['a.t']);
    // a call of the tool back in the catalog starts after it left (one in flight then is
    // not counted: the next case)
    await new Promise((resolve) => setTimeout(resolve, 30));
    metrics.toolCall('a.t', 'a', 'success', '2xx', 0.01);
    expect((await metrics.exposition()).body).toMatch(
      /^mcp_gateway_tool_calls_total\{tool="a\.t",outcome="success"\} 1$/m,
    );
  });

  it('does not count a call that was in flight when the tool left the catalog', async () => {
    const metrics = new GatewayMetrics();
    metrics.toolCall('a.t', 'a', 'success', '2xx', 0.01);
    metrics.forgetTools(['a.t']);
    // ended just now after 2 s: it started before the tool left
    metrics.toolCall('a.t', 'a', 'success', '2xx', 2);
    expect((await metrics.exposition()).body).not.toMatch(/tool="a\.t"/);
  });
});

describe('GatewayMetrics: series of an upstream removed at runtime', () => {
  it('drops every series labelled with the upstream and keeps the others', async () => {
    const metrics = new GatewayMetrics();
    for (const up of ['gone', 'kept']) {
      metrics.upstreamPull(up, 'success');
      metrics.upstreamCall(up, 'tools/call', 'success', 0.01);
      metrics.upstreamLiveFailure(up, 'tools/list');
      metrics.upstreamListChanged(up, 'refreshed');
    }
    expect((await metrics.exposition()).body).toContain('upstream="gone"');
    await metrics.forgetUpstream('gone');
    const after = (await metrics.exposition()).body;
    expect(after).not.toContain('upstream="gone"');
    for (const name of [
      'upstream_pulls_total',
      'upstream_calls_total',
      'upstream_call_duration_seconds_count',
      'upstream_live_failures_total',
      'upstream_list_changed_total',
    ])
      expect(after).toMatch(new RegExp(`^mcp_gateway_${name}\\{upstream="kept"`, 'm'));
  });
});

describe('GatewayMetrics: mcp_gateway_source_status', () => {
  it('exports each source in the status the registry reports at the scrape, and drops a source that left', async () => {
    const metrics = new GatewayMetrics();
    let sources = [
      { kind: 'bundle' as const, source: 'orders', status: 'healthy' },
      { kind: 'upstream' as const, source: 'github', status: 'unreachable' },
    ];
    metrics.readSourceStatusesFrom(() => sources);
    const first = (await metrics.exposition()).body;
    expect(first).toMatch(
      /^mcp_gateway_source_status\{kind="bundle",source="orders",status="healthy"\} 1$/m,
    );
    expect(first).toMatch(
      /^mcp_gateway_source_status\{kind="upstream",source="github",status="unreachable"\} 1$/m,
    );

    sources = [{ kind: 'bundle', source: 'orders', status: 'degraded' }];
    const second = (await metrics.exposition()).body;
    expect(second).toMatch(
      /^mcp_gateway_source_status\{kind="bundle",source="orders",status="degraded"\} 1$/m,
    );
    expect(second).not.toContain('status="healthy"');
    expect(second).not.toContain('source="github"');
  });
});

describe('GatewayMetrics: series an alert needs from the start', () => {
  it('every catalog rejection reason is a series at 0 before the first rejection, so increase() sees the first', async () => {
    const metrics = new GatewayMetrics();
    const body = (await metrics.exposition()).body;
    expect(body).toMatch(
      /^mcp_gateway_catalog_rejections_total\{reason="ToolNameCollisionError"\} 0$/m,
    );
    expect(body).toMatch(
      /^mcp_gateway_catalog_rejections_total\{reason="CatalogTooLargeError"\} 0$/m,
    );
    metrics.catalogRejected('ToolNameCollisionError');
    expect((await metrics.exposition()).body).toMatch(
      /^mcp_gateway_catalog_rejections_total\{reason="ToolNameCollisionError"\} 1$/m,
    );
  });
});
