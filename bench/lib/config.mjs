// The bench's settings (env), the load generator and the core layout, read once.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { haveCommand } from './load.mjs';
import { GATEWAY_ENTRY, REPO_ROOT } from './processes.mjs';

export const int = (name, fallback) => {
  const v = Number(process.env[name]);
  return Number.isInteger(v) && v > 0 ? v : fallback;
};
export const ROUNDS = int('BENCH_ROUNDS', 5);
export const SECONDS = int('BENCH_SECONDS', 5);
export const WARMUP = int('BENCH_WARMUP_SECONDS', Math.min(3, SECONDS));
export const COLD_RUNS = int('BENCH_COLD_RUNS', ROUNDS >= 5 ? 5 : 1);
export const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? '1,16,64')
  .split(',')
  .map(Number)
  .filter((n) => n > 0);
export const SCENARIOS = new Set(
  (
    process.env.BENCH_SCENARIOS ??
    'call,list,memory,refresh,cold,overload,upstream,fanout,modern,auth,capacity,soak'
  ).split(','),
);
/**
 * Gateway variants measured beside the gateway in toolsCall, in the same rounds:
 * BENCH_VARIANTS="name:KEY=value,KEY2=value;name2:…" (an empty value unsets the variable;
 * "none" runs no variant). The default prices the deployed runtime settings (a gateway
 * without them) and the opt-in node:http listener for /mcp (McpHttpServer).
 */
export const VARIANTS = parseVariants(
  process.env.BENCH_VARIANTS ??
    'gwNoRuntimeEnv:NODE_OPTIONS=,MALLOC_TRIM_THRESHOLD_=;gwNodeHttp:MCP_HTTP_SERVER=node',
);
/** The connection counts the variants run at (BENCH_VARIANT_CONNECTIONS, default 16). */
export const VARIANT_CONNECTIONS = (process.env.BENCH_VARIANT_CONNECTIONS ?? '16')
  .split(',')
  .map(Number)
  .filter((n) => CONNECTIONS.includes(n));

function parseVariants(spec) {
  if (spec.trim() === '' || spec.trim() === 'none') return [];
  return spec.split(';').map((part) => {
    const i = part.indexOf(':');
    const name = (i < 0 ? part : part.slice(0, i)).trim();
    const env = {};
    for (const pair of (i < 0 ? '' : part.slice(i + 1)).split(',').filter(Boolean)) {
      const j = pair.indexOf('=');
      if (j > 0) env[pair.slice(0, j).trim()] = pair.slice(j + 1);
    }
    if (!/^[A-Za-z][A-Za-z0-9]*$/.test(name)) throw new Error(`BENCH_VARIANTS: bad name "${name}"`);
    return { name, env };
  });
}

export const OUT = process.env.BENCH_OUT ?? join(REPO_ROOT, 'bench', 'results', 'latest.json');

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const log = (msg) =>
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

// ---------------------------------------------------------------- setup

function chooseGenerator() {
  if (process.env.BENCH_GENERATOR === 'autocannon') return 'autocannon';
  if (haveCommand('wrk')) return 'wrk';
  if (process.env.BENCH_INSTALL_WRK === '1' && process.getuid?.() === 0 && haveCommand('apt-get')) {
    log('wrk missing: apt-get install -y wrk (BENCH_INSTALL_WRK=1)');
    spawnSync('apt-get', ['install', '-y', 'wrk'], { stdio: 'inherit', timeout: 300_000 });
    if (haveCommand('wrk')) return 'wrk';
  }
  log(
    'wrk not found: using autocannon. For steadier figures install wrk (`apt-get install -y wrk`,',
  );
  log('or run with BENCH_INSTALL_WRK=1 as root to let the bench do it).');
  return 'autocannon';
}

export const GENERATOR = chooseGenerator();
if (GENERATOR === 'autocannon') {
  log(
    'Note: autocannon records latency in whole milliseconds, so sub-ms p50s and addedP50Ms read 0 or 1.',
  );
}
export const CPUS = os.availableParallelism();
export const PIN = process.env.BENCH_PIN !== '0' && CPUS >= 2 && haveCommand('taskset');
// The measured process (gateway, proxy) on core 0; the Tool Service on core 1. The load
// generator always runs on the core the target is not on.
export const CORE_TARGET = PIN ? 0 : undefined;
export const CORE_SIDE = PIN ? 1 : undefined;

if (!existsSync(GATEWAY_ENTRY)) {
  process.stderr.write(`${GATEWAY_ENTRY} is missing: run \`npm run build\` first.\n`);
  process.exit(1);
}
