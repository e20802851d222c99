import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gatewayConfig, upstream } from '../support/fixtures';
import { GatewayProcess, REPO_ROOT, waitFor } from '../support/gateway-process';
import { EverythingServer } from '../support/server-everything';

const INSPECTOR_BIN = join(REPO_ROOT, 'node_modules', '.bin', 'mcp-inspector');

interface InspectorRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Upstream federation (docs/operations.md §10) proved with a third-party agent and a third-party
 * server: the MCP Inspector CLI (2.x) lists and calls a tool of
 * `@modelcontextprotocol/server-everything` through the gateway, which federates that server as
 * upstream `everything` (default prefix `everything__`).
 */
describe('MCP Inspector CLI through the gateway to server-everything', () => {
  let everything: EverythingServer;
  let gateway: GatewayProcess;
  // The Inspector keeps a catalog and client config under ~/.mcp-inspector: a HOME of its own.
  let inspectorHome: string;

  /** `mcp-inspector --cli <gateway /mcp> --transport http --format json …`. */
  function inspector(args: readonly string[]): Promise<InspectorRun> {
    return new Promise((resolveRun) => {
      execFile(
        process.execPath,
        [
          INSPECTOR_BIN,
          '--cli',
          gateway.mcpUrl,
          '--transport',
          'http',
          '--format',
          'json',
          ...args,
        ],
        {
          cwd: inspectorHome,
          env: { PATH: process.env.PATH ?? '', HOME: inspectorHome, NO_COLOR: '1' },
          timeout: 60_000,
        },
        (err, stdout, stderr) => {
          const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
          resolveRun({ code, stdout, stderr });
        },
      );
    });
  }

  /** The Inspector's one JSON object on stdout; fails with everything it printed otherwise. */
  function resultOf(run: InspectorRun): any {
    const shown = `exit ${run.code}\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`;
    if (run.code !== 0) throw new Error(`mcp-inspector failed: ${shown}`);
    try {
      return JSON.parse(run.stdout).result;
    } catch {
      throw new Error(`mcp-inspector printed no JSON: ${shown}`);
    }
  }

  async function upstreams(): Promise<any> {
    const res = await fetch(`${gateway.managementUrl}/actuator/upstreams`);
    expect(res.status).toBe(200);
    return res.json();
  }

  beforeAll(async () => {
    inspectorHome = mkdtempSync(join(tmpdir(), 'mcpgw-inspector-'));
    everything = await EverythingServer.start();
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], { upstreams: [upstream('everything', everything.url)] }),
      waitReady: true,
    });
    await waitFor(
      async () =>
        (await upstreams()).upstreams.find((u: any) => u.id === 'everything')?.status === 'healthy',
      15_000,
      () => `upstream never healthy:\n${gateway.output}\n${everything.output}`,
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await everything?.stop();
    if (inspectorHome !== undefined) rmSync(inspectorHome, { recursive: true, force: true });
  });

  it('tools/list shows the federated tools under the everything__ prefix, schemas unchanged', async () => {
    const { tools } = resultOf(await inspector(['--method', 'tools/list']));
    const names: string[] = tools.map((t: { name: string }) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'everything__echo',
        'everything__get-sum',
        'everything__trigger-long-running-operation',
      ]),
    );
    expect(names.every((n) => n.startsWith('everything__'))).toBe(true);
    const echo = tools.find((t: { name: string }) => t.name === 'everything__echo');
    expect(echo).toMatchObject({
      title: 'Echo Tool',
      description: 'Echoes back the input string',
      inputSchema: {
        type: 'object',
        properties: { message: { type: 'string' } },
        required: ['message'],
      },
    });
  });

  it('tools/call of everything__echo returns the echoed text', async () => {
    const result = resultOf(
      await inspector([
        '--method',
        'tools/call',
        '--tool-name',
        'everything__echo',
        '--tool-arg',
        'message=hello through the gateway',
      ]),
    );
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([{ type: 'text', text: 'Echo: hello through the gateway' }]);
  });

  it('tools/call passes typed arguments (--tool-arg a=2 b=3 to get-sum)', async () => {
    const result = resultOf(
      await inspector([
        '--method',
        'tools/call',
        '--tool-name',
        'everything__get-sum',
        '--tool-arg',
        'a=2',
        'b=3',
      ]),
    );
    expect(result.content).toEqual([{ type: 'text', text: 'The sum of 2 and 3 is 5.' }]);
  });

  it('/actuator/upstreams shows it healthy with era and counts, and never its URL or port', async () => {
    const body = await upstreams();
    expect(body.upstreams).toHaveLength(1);
    const [status] = body.upstreams;
    const { tools } = resultOf(await inspector(['--method', 'tools/list']));
    expect(status).toMatchObject({
      id: 'everything',
      status: 'healthy',
      era: '2025',
      namePrefix: 'everything__',
      leftOut: [],
      consecutiveFailures: 0,
      lastErrorType: null,
      source: 'remote',
    });
    // The counts are of what the gateway publishes: the Inspector sees exactly those tools.
    expect(status.counts.tools).toBe(tools.length);
    expect(status.counts.prompts).toBeGreaterThan(0);
    expect(status.counts.resources).toBeGreaterThan(0);
    expect(status.counts.resourceTemplates).toBeGreaterThan(0);
    const text = JSON.stringify(body);
    for (const secret of [
      everything.url,
      '127.0.0.1',
      'localhost',
      'http',
      `:${everything.port}`,
    ]) {
      expect(text).not.toContain(secret);
    }
    // Not even as a bare number anywhere in the document.
    const numbers: number[] = [];
    JSON.parse(text, (_key, value: unknown) => {
      if (typeof value === 'number') numbers.push(value);
      return value;
    });
    expect(numbers).not.toContain(everything.port);
  });
});
