import { copyFileSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { stopAfterEach } from '../support/cleanup';
import { GATEWAY_ENTRY, GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { rpc } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

/**
 * A manifest validation worker that dies (registry/src/manifest/worker-validator.ts): the
 * gateway logs Node's code and message, retries at once in a new worker, then validates on the
 * main thread in slices, counts every crash, and publishes the catalog in the same round.
 *
 * The workers here really die: the built gateway is copied to a temp dir with a worker entry
 * of the test's beside it (the registry loads `manifest-worker.js` from beside main.js), which
 * exits or throws before loading the real worker. No switch in the gateway makes it crash.
 */

const REAL_WORKER = join(dirname(GATEWAY_ENTRY), 'manifest-worker.js');

/** The built gateway, copied beside a worker entry whose body is `script`. */
function gatewayWithWorker(script: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcpgw-worker-'));
  const entry = join(dir, 'main.js');
  copyFileSync(GATEWAY_ENTRY, entry);
  if (existsSync(`${GATEWAY_ENTRY}.map`)) copyFileSync(`${GATEWAY_ENTRY}.map`, `${entry}.map`);
  writeFileSync(join(dir, 'manifest-worker.js'), script);
  return entry;
}

/** A worker entry that exits (code 7) the first time it runs, and is the real worker after. */
function diesOnce(): string {
  const marker = join(mkdtempSync(join(tmpdir(), 'mcpgw-marker-')), 'died');
  return (
    `const fs = require('node:fs');\n` +
    `if (!fs.existsSync(${JSON.stringify(marker)})) {\n` +
    `  fs.writeFileSync(${JSON.stringify(marker)}, '');\n` +
    `  process.exit(7);\n` +
    `}\n` +
    `require(${JSON.stringify(REAL_WORKER)});\n`
  );
}

/** A worker entry that always dies of an uncaught error with a code. */
const ALWAYS_THROWS =
  `const err = new Error('the test worker ran out of luck');\n` +
  `err.code = 'ERR_TEST_WORKER_DIED';\n` +
  `throw err;\n`;

/** 100 tools of ~3 KB each: a manifest over the 256 KB the worker is used for. */
const TOOLS = Array.from({ length: 100 }, (_, i) =>
  tool({
    name: `big.t${String(i).padStart(3, '0')}`,
    description: `tool ${i} `.repeat(400),
    inputSchema: { type: 'object', properties: { [`p${i}`]: { type: 'string' } } },
  }),
);

/** A worker entry that never answers and never exits: it hangs. */
const HANGS = `setInterval(() => {}, 1000);\n`;

async function crashes(
  gateway: GatewayProcess,
  reason: 'crash' | 'timeout' = 'crash',
): Promise<Record<string, number>> {
  const text = await (await fetch(`${gateway.managementUrl}/actuator/prometheus`)).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(
    /^mcp_gateway_manifest_validation_worker_crashes_total\{bundle="big",then="([a-z-]+)",reason="([a-z]+)"\} (\d+)$/gm,
  ))
    if (m[2] === reason) out[m[1]!] = Number(m[3]);
  return out;
}

async function toolCount(gateway: GatewayProcess): Promise<number> {
  const answer = await rpc(gateway.mcpUrl, 'tools/list');
  return (answer.json.result?.tools ?? []).length;
}

describe('a validation worker that dies does not take the catalog with it', () => {
  const track = stopAfterEach();
  let service: TestToolService;

  beforeEach(async () => {
    service = track(await TestToolService.start(manifest('big', TOOLS)));
    expect(JSON.stringify(manifest('big', TOOLS)).length).toBeGreaterThan(256 * 1024);
  });

  // Readiness is awaited patiently: on a loaded CI the first pull can miss a short read
  // timeout, and the catalog then comes from a later round.
  const start = async (
    entry: string,
    overrides: { discovery?: Record<string, unknown>; registry?: Record<string, unknown> } = {},
  ): Promise<GatewayProcess> => {
    const gateway = track(
      await GatewayProcess.start({
        entry,
        mcp: gatewayConfig([bundle('big', service, 'big.')], overrides),
      }),
    );
    await gateway.waitForReady(40_000);
    return gateway;
  };

  it('a worker that dies once: logged with its code and message, retried at once in a new worker, the catalog published in that first round', async () => {
    const gateway = await start(gatewayWithWorker(diesOnce()));
    expect(await toolCount(gateway)).toBe(100);
    await gateway.waitForOutput('the validation worker of its remote manifest died');
    expect(gateway.output).toContain(
      '(WorkerExit 7: the worker exited with code 7 before it answered); validating it again in a new worker',
    );
    expect(gateway.output).not.toContain('validating it on the main thread');
    expect(gateway.output).not.toContain('could not be validated');
    expect(await crashes(gateway)).toEqual({ retry: 1 });
    const status = await (await fetch(`${gateway.managementUrl}/actuator/toolBundles`)).json();
    expect(JSON.stringify(status)).not.toContain('UnexpectedPullError');
  });

  it('a worker that dies every time: both crashes logged with the error code and message, then validated on the main thread in slices; the catalog is published in that first round', async () => {
    const gateway = await start(gatewayWithWorker(ALWAYS_THROWS));
    expect(await toolCount(gateway)).toBe(100);
    await gateway.waitForOutput('validating it on the main thread, in slices');
    expect(gateway.output).toContain(
      '(Error ERR_TEST_WORKER_DIED: the test worker ran out of luck); validating it again in a new worker',
    );
    expect(gateway.output).toContain(
      '(Error ERR_TEST_WORKER_DIED: the test worker ran out of luck); validating it on the main thread, in slices',
    );
    expect(await crashes(gateway)).toEqual({ retry: 1, 'main-thread': 1 });
    // a changed manifest is validated again the same way: the crashes are counted per validation
    service.setManifest(manifest('big', TOOLS.slice(0, 99), 'r2'));
    const miss = await rpc(gateway.mcpUrl, 'tools/call', { name: 'big.none', arguments: {} });
    expect(miss.json.error.code).toBe(-32001);
    expect(await toolCount(gateway)).toBe(99);
    expect(await crashes(gateway)).toEqual({ retry: 2, 'main-thread': 2 });
  });

  it('a worker that hangs: terminated at its deadline, logged as hung, retried, then validated on the main thread; the catalog is published in that first round', async () => {
    // deadline: ten times the read timeout (2 s here) plus 2 s per MiB of manifest. A pull
    // that misses the 200 ms read timeout on a loaded machine is tried again a second later (an
    // unchanged manifest is not validated again, so the crashes below stay counted once).
    const gateway = await start(gatewayWithWorker(HANGS), {
      discovery: { readTimeoutMillis: 200 },
      registry: { refreshIntervalSeconds: 1 },
    });
    expect(await toolCount(gateway)).toBe(100);
    await gateway.waitForOutput('validating it on the main thread, in slices');
    expect(gateway.output).toMatch(
      /remote manifest hung \(WorkerTimeout \d+: the worker did not answer within \d+ ms and was terminated\); validating it again in a new worker/,
    );
    expect(gateway.output).toMatch(
      /remote manifest hung \(WorkerTimeout \d+: [^)]*\); validating it on the main thread, in slices/,
    );
    expect(await crashes(gateway, 'timeout')).toEqual({ retry: 1, 'main-thread': 1 });
    expect(await crashes(gateway, 'crash')).toEqual({});
  });
});
