import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { helmBinary } from './helm-binary';

export const REPO_ROOT = resolve(__dirname, '..', '..');
export const CHART_DIR = join(REPO_ROOT, 'helm', 'mcp-gateway');
export const VALUES_OCP = join(CHART_DIR, 'values-ocp.yaml');
export const RELEASE_NAME = 'mcp-insurance-core';
export const RELEASE_NAMESPACE = 'mcp-contract-test';

/** One rendered Kubernetes object; the tests read it loosely. */
export type Manifest = {
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
} & Record<string, any>;

export interface HelmResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

let workDir: string | undefined;
/** Scratch dir of this test run: extra values files, rendered configs, helm's own home dirs. */
export function scratchDir(): string {
  workDir ??= mkdtempSync(join(tmpdir(), 'mcp-gateway-chart-'));
  return workDir;
}

export function removeScratchDir(): void {
  if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true });
  workDir = undefined;
}

/** helm's environment: its cache/config/data homes in the scratch dir (nothing in $HOME). */
function helmEnv(): NodeJS.ProcessEnv {
  const home = join(scratchDir(), 'helm-home');
  mkdirSync(home, { recursive: true });
  return {
    PATH: process.env.PATH,
    HOME: home,
    HELM_CACHE_HOME: join(home, 'cache'),
    HELM_CONFIG_HOME: join(home, 'config'),
    HELM_DATA_HOME: join(home, 'data'),
  };
}

/** Runs the real helm (synchronously: nothing of this process may need to answer it). */
export function runHelm(args: readonly string[]): HelmResult {
  const result = spawnSync(helmBinary(), args, {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    env: helmEnv(),
  });
  if (result.error !== undefined) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Runs the real helm without blocking this process, for helm talking to a server the test runs. */
export function runHelmAsync(args: readonly string[]): Promise<HelmResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(helmBinary(), args, { cwd: REPO_ROOT, env: helmEnv() });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** `-f file` for each values file, `--set k=v` for each entry of `set`. */
function valueArgs(valuesFiles: readonly string[], set: readonly string[]): string[] {
  return [...valuesFiles.flatMap((f) => ['-f', f]), ...set.flatMap((s) => ['--set', s])];
}

export function lintChart(
  valuesFiles: readonly string[] = [],
  set: readonly string[] = [],
): HelmResult {
  return runHelm(['lint', CHART_DIR, ...valueArgs(valuesFiles, set)]);
}

export function templateChart(
  valuesFiles: readonly string[] = [],
  set: readonly string[] = [],
): HelmResult {
  return runHelm([
    'template',
    RELEASE_NAME,
    CHART_DIR,
    '--namespace',
    RELEASE_NAMESPACE,
    ...valueArgs(valuesFiles, set),
  ]);
}

/** `helm template` that must succeed, parsed into its objects (empty documents dropped). */
export function renderChart(
  valuesFiles: readonly string[] = [],
  set: readonly string[] = [],
): Manifest[] {
  const result = templateChart(valuesFiles, set);
  if (result.status !== 0) {
    throw new Error(`helm template failed (exit ${result.status}):\n${result.stderr}`);
  }
  return parseManifests(result.stdout);
}

export function parseManifests(text: string): Manifest[] {
  return parseAllDocuments(text).flatMap((doc) => {
    if (doc.errors.length > 0)
      throw new Error(`helm rendered invalid YAML: ${doc.errors[0]?.message}`);
    const value: unknown = doc.toJS();
    return value === null || value === undefined ? [] : [value as Manifest];
  });
}

/** Writes an extra values file into the scratch dir and returns its path. */
export function writeValuesFile(name: string, values: Record<string, unknown>): string {
  const path = join(scratchDir(), name);
  writeFileSync(path, stringify(values));
  return path;
}
