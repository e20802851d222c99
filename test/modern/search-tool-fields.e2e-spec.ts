import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool, upstream } from '../support/fixtures';
import { modernRequest } from '../support/modern-rpc';
import { rpc } from '../support/rpc';
import { ScriptedUpstream, upTool } from '../support/scripted-upstream';
import { connectV1 } from '../support/sdk-clients';
import { TestToolService } from '../support/tool-service';

const LIST_OUTPUT = { type: 'array', items: { type: 'string' } };
/** What a 2025 client is listed for LIST_OUTPUT (docs/operations.md §11 "Tools for each revision"). */
const WRAPPED_OUTPUT = {
  type: 'object',
  properties: { result: LIST_OUTPUT },
  required: ['result'],
};

/**
 * docs/operations.md §11 "Tools for each revision": a tool is given to a client with the Tool
 * fields of the revision it speaks — through tool search's describe and a 2025 session's
 * selection (§16) as in a plain `tools/list`: a 2025 client gets an outputSchema whose root is
 * not an object wrapped as `result` (as its call's structuredContent is), a 2026 client never
 * gets `execution`.
 */
describe('tool search and selection give each revision its own Tool fields', () => {
  let up: ScriptedUpstream;
  let jobs: TestToolService;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    up = await ScriptedUpstream.start({
      tools: [upTool('names', { description: 'Lists the names', outputSchema: LIST_OUTPUT })],
    });
    up.onTool('names', () => ({
      result: { content: [{ type: 'text', text: '["a","b"]' }], structuredContent: ['a', 'b'] },
    }));
    jobs = await TestToolService.start(
      manifest('jobs', [{ ...tool({ name: 'jobs.run' }), execution: { taskSupport: 'optional' } }]),
    );
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('jobs', jobs, 'jobs.')], {
          upstreams: [upstream('up', up.url)],
        }),
        http: { modernEra: true },
        toolSearch: { enabled: true, select: true },
      },
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([up?.stop(), jobs?.stop()]);
  });

  it('a v1 client lists its selection with the 2025 outputSchema, and calls the tool', async () => {
    const client = await connectV1(gateway.mcpUrl);
    try {
      const selected = await client.callTool({
        name: 'gateway__select_tools',
        arguments: { names: ['up__names'] },
      });
      expect(selected.structuredContent).toEqual({ selected: ['up__names'], unknown: [] });
      const listed = (await client.listTools()).tools;
      expect(listed.find((t) => t.name === 'up__names')?.outputSchema).toEqual(WRAPPED_OUTPUT);
      const called = await client.callTool({ name: 'up__names', arguments: {} });
      expect(called.structuredContent).toEqual({ result: ['a', 'b'] });
    } finally {
      await client.close();
    }
  });

  it('describe gives a 2025 client the wrapped outputSchema, a 2026 client no execution', async () => {
    const names = ['up__names', 'jobs.run'];
    const legacy = await rpc(gateway.mcpUrl, 'tools/call', {
      name: 'gateway__describe_tools',
      arguments: { names },
    });
    const [legacyNames, legacyRun] = legacy.json.result.structuredContent.tools;
    expect(legacyNames.outputSchema).toEqual(WRAPPED_OUTPUT);
    expect(legacyRun.execution).toEqual({ taskSupport: 'optional' });
    expect(JSON.parse(legacy.json.result.content[0].text)).toEqual(
      legacy.json.result.structuredContent,
    );
    const modern = await modernRequest(
      gateway.mcpUrl,
      'tools/call',
      { name: 'gateway__describe_tools', arguments: { names } },
      {},
    );
    const [modernNames, modernRun] = modern.json.result.structuredContent.tools;
    expect(modernNames.outputSchema).toEqual(LIST_OUTPUT);
    expect(modernRun).not.toHaveProperty('execution');
    expect(modernRun).toMatchObject({ name: 'jobs.run', inputSchema: { type: 'object' } });
  });
});
