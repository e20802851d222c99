import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { GatewayProcess } from '../support/gateway-process';
import { rpc } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

const V = '2026-07-28';
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': V,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
};

/**
 * The Tool fields of the revision served (docs/operations.md §11 "Tools for each revision"):
 * `execution` (`taskSupport`) is a 2025-11-25 Tool field that 2026-07-28 does not have, so a
 * 2026 client's tools/list leaves it out while a 2025 client's keeps it, for the whole catalog
 * and for a caller's own list alike.
 */
describe('tools/list gives each revision its own Tool fields', () => {
  let service: TestToolService;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    service = await TestToolService.start(
      manifest('jobs', [
        { ...tool({ name: 'jobs.run' }), execution: { taskSupport: 'optional' } },
        tool({ name: 'jobs.peek' }),
      ]),
    );
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('jobs', service, 'jobs.')]),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await service?.stop();
  });

  it('a 2025 client sees execution.taskSupport', async () => {
    const answer = await rpc(gateway.mcpUrl, 'tools/list');
    const run = answer.json.result.tools.find((t: { name: string }) => t.name === 'jobs.run');
    expect(run.execution).toEqual({ taskSupport: 'optional' });
  });

  it('a 2026 client does not; every other field is the same', async () => {
    const legacy = (await rpc(gateway.mcpUrl, 'tools/list')).json.result.tools;
    const answer = await rpc(
      gateway.mcpUrl,
      'tools/list',
      { _meta: ENVELOPE },
      { 'mcp-protocol-version': V, 'mcp-method': 'tools/list' },
    );
    expect(answer.status).toBe(200);
    const tools = answer.json.result.tools as Record<string, unknown>[];
    for (const t of tools) expect(t).not.toHaveProperty('execution');
    expect(tools).toEqual(
      legacy.map((t: Record<string, unknown>) => {
        const { execution: _left, ...rest } = t;
        return rest;
      }),
    );
  });
});
