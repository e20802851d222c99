import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeScratchDir, renderChart, REPO_ROOT, VALUES_OCP, writeValuesFile } from './chart';
import { readRenderedGateway } from './deployment-contract';
import { helmBinary } from './helm-binary';

/**
 * The gateway's runtime memory settings
 * (docs/benchmarks.md "Memory: how the two targets were met"): the chart deploys the ones `npm run
 * bench` measured and `npm start` uses, all read from scripts/gateway-runtime-env.json, so the
 * recorded figures are the deployed gateway's.
 */
const RUNTIME_ENV_FILE = join(REPO_ROOT, 'scripts', 'gateway-runtime-env.json');
const runtimeEnv = (): Record<string, string> =>
  JSON.parse(readFileSync(RUNTIME_ENV_FILE, 'utf8')) as Record<string, string>;

beforeAll(() => {
  helmBinary();
}, 120_000);
afterAll(removeScratchDir);

describe('helm/mcp-gateway: the runtime settings the bench measured', () => {
  it('are 2 MB semi-spaces, a 128 KiB malloc trim threshold and a heap growing factor of 2', () => {
    expect(runtimeEnv()).toEqual({
      NODE_OPTIONS: '--max-semi-space-size=2',
      MALLOC_TRIM_THRESHOLD_: '131072',
      MCP_HEAP_GROWING_PERCENT: '100',
    });
  });

  // The chart adds the heap limit sized from the container
  // (helm/mcp-gateway/README.md "Values checked before install, monitors, memory"): 50 % of 512Mi.
  const deployed = (): Record<string, string> => ({
    ...runtimeEnv(),
    NODE_OPTIONS: `${runtimeEnv().NODE_OPTIONS} --max-old-space-size=256`,
  });

  it('are the container env of the production rendering (values-ocp.yaml)', () => {
    const { env } = readRenderedGateway(renderChart([VALUES_OCP]));
    expect(env).toMatchObject(deployed());
  });

  it("are the chart's defaults (values.yaml alone)", () => {
    const { env } = readRenderedGateway(renderChart([]));
    expect(env).toMatchObject(deployed());
  });

  it('leave a variable unset when its value is emptied and no heap limit applies, and keep the others', () => {
    const off = writeValuesFile('no-node-options.yaml', {
      gateway: { runtimeEnv: { NODE_OPTIONS: '' }, heapPercentOfMemoryLimit: 0 },
    });
    const { container } = readRenderedGateway(renderChart([VALUES_OCP, off]));
    const names = (container.env as { name: string }[]).map((e) => e.name);
    expect(names).not.toContain('NODE_OPTIONS');
    expect(names).toContain('MALLOC_TRIM_THRESHOLD_');
  });
});
