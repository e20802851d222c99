import { randomBytes } from 'node:crypto';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { OwnRedis } from '../support/redis';
import { callTool, rpc } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

/** Metrics on /actuator/prometheus and structured, redacted logs (docs/operations.md §3, §4). */
describe('metrics and logs', () => {
  let service: TestToolService;
  let gateway: GatewayProcess;
  let redis: OwnRedis;

  beforeAll(async () => {
    service = await TestToolService.start(
      manifest(
        'ins',
        [
          tool({ name: 'ins.ok' }),
          tool({ name: 'ins.bad' }),
          tool({ name: 'ins.slow', meta: { timeoutMillis: 200 } }),
        ],
        'r1',
      ),
    );
    service.tools.set('ins.bad', () => ({ status: 422, body: { error: 'policy number unknown' } }));
    service.tools.set('ins.slow', () => ({ delayMs: 1000, body: {} }));
    redis = await OwnRedis.start();
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([
        bundle('ins', service, 'ins.', { authorization: { mode: 'passthrough' } }),
      ]),
      env: { REDIS_URL: redis.url },
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await service?.stop();
    await redis?.stop();
  });

  async function scrape(): Promise<string> {
    const res = await fetch(`${gateway.managementUrl}/actuator/prometheus`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    return res.text();
  }

  const sample = (text: string, name: string, labels = ''): number | undefined => {
    const escaped = `${name}${labels}`.replace(/[{}.*+?^$()|[\]\\]/g, '\\$&');
    const match = new RegExp(`^${escaped} (\\S+)$`, 'm').exec(text);
    return match ? Number(match[1]) : undefined;
  };

  it('shows real values after calls: pulls, last success, catalog size, calls by outcome, durations, status classes, Redis', async () => {
    await callTool(gateway.mcpUrl, 'ins.ok');
    await callTool(gateway.mcpUrl, 'ins.ok');
    await callTool(gateway.mcpUrl, 'ins.bad');
    await callTool(gateway.mcpUrl, 'ins.slow');
    const text = await scrape();
    expect(
      sample(text, 'mcp_gateway_manifest_pulls_total', '{bundle="ins",outcome="success"}'),
    ).toBeGreaterThanOrEqual(1);
    const last = sample(
      text,
      'mcp_gateway_manifest_last_success_timestamp_seconds',
      '{bundle="ins"}',
    )!;
    expect(Math.abs(last - Date.now() / 1000)).toBeLessThan(60);
    expect(sample(text, 'mcp_gateway_catalog_tools')).toBe(3);
    expect(sample(text, 'mcp_gateway_tool_calls_total', '{tool="ins.ok",outcome="success"}')).toBe(
      2,
    );
    expect(
      sample(text, 'mcp_gateway_tool_calls_total', '{tool="ins.bad",outcome="tool_error"}'),
    ).toBe(1);
    expect(
      sample(text, 'mcp_gateway_tool_calls_total', '{tool="ins.slow",outcome="timeout"}'),
    ).toBe(1);
    expect(sample(text, 'mcp_gateway_tool_call_duration_seconds_count', '{tool="ins.ok"}')).toBe(2);
    expect(
      sample(text, 'mcp_gateway_tool_call_duration_seconds_sum', '{tool="ins.slow"}'),
    ).toBeGreaterThanOrEqual(0.19);
    expect(
      sample(text, 'mcp_gateway_tool_service_responses_total', '{bundle="ins",status_class="2xx"}'),
    ).toBe(2);
    expect(
      sample(text, 'mcp_gateway_tool_service_responses_total', '{bundle="ins",status_class="4xx"}'),
    ).toBe(1);
    expect(
      sample(
        text,
        'mcp_gateway_tool_service_responses_total',
        '{bundle="ins",status_class="timeout"}',
      ),
    ).toBe(1);
    expect(sample(text, 'mcp_gateway_refresh_round_duration_seconds_count')).toBeGreaterThanOrEqual(
      1,
    );
    expect(sample(text, 'mcp_gateway_redis_up')).toBe(1);
    expect(text).toMatch(/^mcp_gateway_process_resident_memory_bytes \d+/m);
  });

  it('counts unknown tools without ever turning the requested name into a label', async () => {
    const before = sample(await scrape(), 'mcp_gateway_tool_not_found_total') ?? 0;
    await callTool(gateway.mcpUrl, 'attacker-chosen-label-value');
    const text = await scrape();
    expect(sample(text, 'mcp_gateway_tool_not_found_total')).toBe(before + 1);
    expect(text).not.toContain('attacker-chosen-label-value');
  });

  it('exports each source in its status, and a bundle whose pull fails turns degraded', async () => {
    const status = (text: string, value: string): number | undefined =>
      sample(text, 'mcp_gateway_source_status', `{kind="bundle",source="ins",status="${value}"}`);
    expect(status(await scrape(), 'healthy')).toBe(1);
    const serving = service.manifest;
    service.manifest = () => ({ status: 503, body: { error: 'down' } });
    try {
      // a tools/call of an unknown name runs one refresh round (contract §8)
      await callTool(gateway.mcpUrl, 'ins.not-there');
      const text = await scrape();
      expect(status(text, 'degraded')).toBe(1);
      expect(status(text, 'healthy')).toBeUndefined();
    } finally {
      service.manifest = serving;
      await callTool(gateway.mcpUrl, 'ins.not-there-either');
    }
    expect(status(await scrape(), 'healthy')).toBe(1);
  });

  it('is served on the management port only', async () => {
    expect((await fetch(`http://127.0.0.1:${gateway.mcpPort}/actuator/prometheus`)).status).toBe(
      404,
    );
  });

  it('writes JSON lines, with the request id and guid on every line of a call', async () => {
    const requestId = `req-${randomBytes(4).toString('hex')}`;
    const guid = `guid-${randomBytes(4).toString('hex')}`;
    await callTool(gateway.mcpUrl, 'ins.bad', {}, { 'x-request-id': requestId, guid });
    await waitFor(() => gateway.stdout.includes(requestId), 3000);
    const lines = gateway.stdout.trim().split('\n');
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    const callLines = lines.map((l) => JSON.parse(l)).filter((l) => l.requestId === requestId);
    expect(callLines.length).toBeGreaterThanOrEqual(1);
    for (const line of callLines) expect(line.guid).toBe(guid);
    expect(callLines).toContainEqual(
      expect.objectContaining({
        msg: 'tools/call',
        tool: 'ins.bad',
        bundle: 'ins',
        outcome: 'tool_error',
        status: 422,
      }),
    );
  });

  it("copies at most 128 characters of a caller's request id and guid into a line: no caller sets a line's size", async () => {
    const requestId = `long-${randomBytes(4).toString('hex')}-${'r'.repeat(10_000)}`;
    const guid = `g-${'g'.repeat(4_000)}`;
    await callTool(gateway.mcpUrl, 'ins.bad', {}, { 'x-request-id': requestId, guid });
    const cut = requestId.slice(0, 128);
    await waitFor(() => gateway.stdout.includes(cut), 3000);
    const lines = gateway.stdout
      .trim()
      .split('\n')
      .filter((l) => l.includes(cut));
    expect(lines.map((l) => JSON.parse(l).msg)).toContain('tools/call');
    for (const line of lines) {
      expect(JSON.parse(line)).toMatchObject({ requestId: cut, guid: guid.slice(0, 128) });
      expect(line.length).toBeLessThan(1024);
    }
  });

  it('logs catalog changes as a diff summary with old and new revision', async () => {
    service.setManifest(
      manifest(
        'ins',
        [
          tool({ name: 'ins.ok' }),
          tool({ name: 'ins.new' }),
          tool({ name: 'ins.slow', meta: { timeoutMillis: 300 } }),
        ],
        'r2',
      ),
    );
    await callTool(gateway.mcpUrl, 'ins.new'); // §8 refresh
    const lastPublished = () =>
      gateway.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
        .filter((l) => l.event === 'catalog_published')
        .at(-1);
    // the child's stdout reaches this process a little after its /mcp answer
    await waitFor(() => lastPublished()?.revisions?.ins?.to === 'r2', 3000);
    const published = lastPublished();
    expect(published).toMatchObject({
      toolCount: 3,
      revisions: { ins: { from: 'r1', to: 'r2' } },
      added: ['ins.new'],
      removed: ['ins.bad'],
      changed: ['ins.slow'],
    });
  });

  it('never writes the values of employee-no, virtual-employee-no or Authorization', async () => {
    const secrets = {
      'employee-no': `EMP-${randomBytes(8).toString('hex')}`,
      'virtual-employee-no': `VEMP-${randomBytes(8).toString('hex')}`,
      authorization: `Bearer TOKEN-${randomBytes(8).toString('hex')}`,
    };
    const headers = { ...secrets, 'x-request-id': 'redaction-check', guid: 'g' };
    await callTool(gateway.mcpUrl, 'ins.ok', { a: 1 }, headers); // success line
    await callTool(gateway.mcpUrl, 'ins.slow', {}, headers); // timeout warning
    await callTool(gateway.mcpUrl, 'ins.missing', {}, headers); // not found + refresh
    await rpc(gateway.mcpUrl, 'tools/list', {}, { ...headers, 'mcp-session-id': 'v1.x.forged' }); // 404 session
    await rpc(gateway.mcpUrl, 'definitely/not', {}, headers);
    // the Tool Service did get them (passthrough), so the values were in the gateway's hands
    const seen = service.toolRequests('ins.ok').at(-1)!.headers;
    expect(seen['employee-no']).toBe(secrets['employee-no']);
    expect(seen.authorization).toBe(secrets.authorization);
    await new Promise((r) => setTimeout(r, 300));
    const output = gateway.output;
    expect(output).toContain('redaction-check');
    for (const value of Object.values(secrets)) {
      expect(output).not.toContain(value);
      expect(output).not.toContain(value.replace('Bearer ', ''));
    }
  });
});
