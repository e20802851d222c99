import { removeScratchDir, runHelm, CHART_DIR, parseManifests, writeValuesFile } from './chart';
import { helmBinary } from './helm-binary';

beforeAll(() => {
  helmBinary();
}, 120_000);
afterAll(removeScratchDir);

/**
 * helm/mcp-gateway values.yaml: `gateway.extraEnv` is "More plain env variables", and the chart
 * sets NODE_OPTIONS itself (runtimeEnv + `--max-old-space-size` from
 * heapPercentOfMemoryLimit, README "Values checked before install, monitors, memory": "V8 sizes
 * its heap from the container, not from the node"). An operator who adds a Node flag the usual
 * way (`extraEnv: [{name: NODE_OPTIONS, value: --enable-source-maps}]`) or sets PORT there gets
 * a container with two NODE_OPTIONS (two PORT) entries: Kubernetes uses the last one, so the
 * heap cap and the semi-space setting silently vanish (an OOM-kill under load instead of V8's
 * own limit), and a second PORT moves /mcp off the `http` container port the Service and
 * NetworkPolicy name. The API server only warns ("hides previous definition"); server-side apply
 * (Helm 4's default) refuses duplicate keys of the env list. The chart refuses other values that
 * would render pods that cannot work (README: "Rendering fails when …"); these should either be
 * merged or refused with a message naming the variable, never rendered twice.
 */
describe('helm/mcp-gateway: env variables the chart sets, named again in extraEnv / secretEnv', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    [
      'NODE_OPTIONS in extraEnv',
      { gateway: { extraEnv: [{ name: 'NODE_OPTIONS', value: '--enable-source-maps' }] } },
      'NODE_OPTIONS',
    ],
    ['PORT in extraEnv', { gateway: { extraEnv: [{ name: 'PORT', value: '8081' }] } }, 'PORT'],
    [
      'MCP_SESSION_KEYS in secretEnv',
      {
        gateway: { secretEnv: [{ name: 'MCP_SESSION_KEYS', secretName: 'mine', key: 'keys' }] },
      },
      'MCP_SESSION_KEYS',
    ],
  ];

  it.each(cases)('%s: rendered once (merged) or refused naming it', (_what, values, name) => {
    const file = writeValuesFile(`dup-${name}.yaml`, values);
    const result = runHelm(['template', 'r', CHART_DIR, '-f', file]);
    if (result.status !== 0) {
      expect(result.stderr).toContain(name);
      return;
    }
    const deployment = parseManifests(result.stdout).find((d) => d.kind === 'Deployment')!;
    const env = deployment.spec.template.spec.containers[0].env as { name: string }[];
    const named = env.filter((e) => e.name === name);
    expect(named).toHaveLength(1);
  });
});
