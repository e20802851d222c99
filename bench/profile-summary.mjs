#!/usr/bin/env node
// Summarises a V8 .cpuprofile (from `node --cpu-prof`): where the CPU time went.
//
//   node bench/profile-summary.mjs <file.cpuprofile | directory> [--top N] [--json out.json]
//        [--from-us T0 --to-us T1]   only samples taken in [T0, T1] (CLOCK_MONOTONIC µs, the
//                                    clock of process.hrtime and of the profile's startTime)
//
// Views (times in ms and % of non-idle samples):
//   self by function   the leaf frame of each sample (exclusive time)
//   self by module     the same, grouped by npm package / node core module / gateway code
//   by owner           each sample charged to the first frame up its stack that is not node
//                      core: the package (or gateway function) that caused the work, so node's
//                      stream / socket work done for undici counts as undici
//   inclusive          time with the function anywhere on the stack (gateway code and packages)
//   longest stretches  per function, the longest run of consecutive samples with it on the
//                      stack: a synchronous stretch that long blocks the event loop (stalls)
//   concerns           inclusive time per concern of a proxy hop (HTTP client, framework, timers,
//                      JSON, logging, socket writes, GC…); they overlap, so they do not add up
// The gateway is one webpack bundle (dist/apps/gateway/main.js), so its functions are named
// by function name; the line is the bundle's line.
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

const args = process.argv.slice(2);
const topN = Number(args[args.indexOf('--top') + 1]) || 25;
const option = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const jsonOut = option('--json');
const fromUs = Number(option('--from-us') ?? -Infinity);
const toUs = Number(option('--to-us') ?? Infinity);
const optionValues = new Set(
  ['--top', '--json', '--from-us', '--to-us'].map(option).filter(Boolean),
);
let file = args.find((a) => !a.startsWith('--') && !optionValues.has(a));
if (!file) {
  process.stderr.write(
    'usage: node bench/profile-summary.mjs <file.cpuprofile|dir> [--top N] [--json out]\n',
  );
  process.exit(2);
}
if (statSync(file).isDirectory()) {
  const newest = readdirSync(file)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => join(file, f))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  if (!newest) throw new Error(`no .cpuprofile in ${file}`);
  file = newest;
}

/**
 * Concerns of a proxy hop. `owner` is the sample's owner (see "by owner"), `m`/`f` a frame's
 * module and callFrame. `frame` tests every frame on the stack, `leaf` the sampled frame only,
 * `owned` the owner. Packages are charged by ownership, not by inclusive time, because the
 * framework sits at the bottom of every request's stack.
 */
const GATEWAY = 'gateway (dist/apps/gateway/main.js)';
const LOGGING = new Set([
  'sonic-boom',
  'nestjs-pino',
  'thread-stream',
  'on-exit-leak-free',
  'fast-redact',
]);
const FASTIFY = new Set([
  'fastify',
  'find-my-way',
  'light-my-request',
  'avvio',
  '@fastify/middie',
  'toad-cache',
]);
const NEST = new Set(['@nestjs/core', '@nestjs/common', 'rxjs', '@nestjs/platform-fastify']);
const CONCERNS = [
  [
    'undici client (request write, response parse, body stream)',
    { owned: (o) => o === 'undici' || o.startsWith('wasm://') },
  ],
  ['fastify (routing, hooks, reply write)', { owned: (o) => FASTIFY.has(o) }],
  ['Nest router / execution context (+ rxjs)', { owned: (o) => NEST.has(o) }],
  [
    'gateway code (+ node core work it calls directly)',
    { owned: (o) => o.startsWith('gateway: ') },
  ],
  [
    'node core with no package on the stack (HTTP server parsing, sockets)',
    { owned: (o) => o.endsWith('(no package on stack)') },
  ],
  [
    'AbortSignal.timeout + signal listeners',
    {
      frame: (m, f) =>
        m === 'node:abort_controller' || (m === 'undici' && /Signal|abort/i.test(f.functionName)),
    },
  ],
  [
    'logging (pino, sonic-boom, redact, Nest Logger, the gateway logger adapter)',
    {
      frame: (m, f) =>
        LOGGING.has(m) ||
        m.startsWith('pino') ||
        m.startsWith('@pinojs/') ||
        (m === '@nestjs/common' && /Logger|printMessages/.test(f.functionName)) ||
        // not `write`: the gateway's HTTP answer writer (libs/mcp/src/http/*) is named so too;
        // the logger adapter's write always calls into pino, which is counted above
        (m === GATEWAY && /^(log|warn|error|debug|verbose|fatal)$/.test(f.functionName)),
    },
  ],
  ['metrics (prom-client)', { frame: (m) => m === 'prom-client' }],
  ['AsyncLocalStorage / async_hooks (self)', { leaf: (m) => m === 'node:async_hooks' }],
  [
    'JSON.parse / JSON.stringify (builtins, self)',
    {
      leaf: (m, f) =>
        m === '(native/builtin)' && (f.functionName === 'parse' || f.functionName === 'stringify'),
    },
  ],
  [
    'socket writes (writev / write syscalls, self)',
    {
      leaf: (m, f) =>
        m === '(native/builtin)' &&
        /^(writev|writeBuffer|writeUtf8String|writeLatin1String|writeAsciiString)$/.test(
          f.functionName,
        ),
    },
  ],
  ['timers bookkeeping (node:timers, self)', { leaf: (m) => m === 'node:timers' }],
  [
    'promises / microtask queue (self)',
    {
      leaf: (m, f) =>
        f.functionName === 'runMicrotasks' || f.functionName === 'processTicksAndRejections',
    },
  ],
  ['garbage collector', { leaf: (m) => m === '(garbage collector)' }],
  ['(program): native code V8 cannot attribute', { leaf: (m) => m === '(program)' }],
];

export function summarize(profile, top = 25, window = { fromUs: -Infinity, toUs: Infinity }) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

  const moduleOf = (frame) => {
    const url = frame.url ?? '';
    const name = frame.functionName;
    if (url === '') {
      if (name.startsWith('(')) return name; // (garbage collector), (program), (idle), (root)
      return '(native/builtin)';
    }
    const nm = url.lastIndexOf('/node_modules/');
    if (nm >= 0) {
      const rest = url.slice(nm + '/node_modules/'.length).split('/');
      return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
    }
    if (url.startsWith('node:internal/deps/undici')) return 'node:undici(bundled fetch)';
    if (url.startsWith('node:')) {
      const m = url.slice(5).replace(/^internal\//, '');
      const head = m.split('/')[0];
      if (head === 'streams') return 'node:streams';
      if (head.startsWith('_http')) return 'node:http';
      if (head === 'http' || head === 'https') return 'node:http';
      if (head === 'abort_controller') return 'node:abort_controller';
      return `node:${head.replace(/\.js$/, '')}`;
    }
    if (
      url.includes('/dist/apps/gateway/main.js') ||
      /mcpgw-bench-[^/]+\/build-[^/]+\/main\.js$/.test(url)
    ) {
      return 'gateway (dist/apps/gateway/main.js)';
    }
    if (url.includes('/bench/lib/')) return `bench:${basename(url)}`;
    return url.replace(/^file:\/\//, '');
  };
  const isCore = (m) => m.startsWith('node:') || m === '(native/builtin)';
  const fnKey = (frame) => {
    const m = moduleOf(frame);
    const name = frame.functionName || '(anonymous)';
    return m.startsWith('(') && m !== '(native/builtin)'
      ? m
      : `${name}  [${m}:${frame.lineNumber + 1}]`;
  };

  // Time per sample: timeDeltas[i] is the gap before sample i; charge it to sample i.
  const samples = profile.samples;
  const deltas = profile.timeDeltas;
  const self = new Map();
  const selfModule = new Map();
  const owner = new Map();
  const inclusive = new Map();
  const concerns = new Map(CONCERNS.map(([name]) => [name, 0]));
  const inclusiveModule = new Map();
  const runMs = new Map();
  const lastSample = new Map();
  const longest = new Map();
  let total = 0;
  let idle = 0;
  let kept = 0;
  let at = profile.startTime;
  const add = (map, key, v) => map.set(key, (map.get(key) ?? 0) + v);

  for (let i = 0; i < samples.length; i++) {
    at += deltas[i] ?? 0;
    if (at < window.fromUs || at > window.toUs) continue;
    kept++;
    const dt = (deltas[i + 1] ?? deltas[i] ?? 0) / 1000; // µs → ms
    const leaf = nodes.get(samples[i]);
    if (!leaf) continue;
    const leafModule = moduleOf(leaf.callFrame);
    if (leafModule === '(idle)') {
      idle += dt;
      continue;
    }
    total += dt;
    add(self, fnKey(leaf.callFrame), dt);
    add(selfModule, leafModule, dt);
    // Walk up: owner = first frame outside node core; inclusive = every distinct function.
    const hit = new Set();
    for (const [name, test] of CONCERNS) {
      if (test.leaf?.(leafModule, leaf.callFrame)) hit.add(name);
    }
    let ownerKey;
    const seen = new Set();
    const seenModules = new Set();
    for (let id = leaf.id; id !== undefined; id = parent.get(id)) {
      const frame = nodes.get(id).callFrame;
      const m = moduleOf(frame);
      if (m === '(root)') break;
      if (ownerKey === undefined && !isCore(m)) {
        ownerKey =
          m === 'gateway (dist/apps/gateway/main.js)'
            ? `gateway: ${frame.functionName || '(anonymous)'}`
            : m;
      }
      for (const [name, test] of CONCERNS) {
        if (test.frame?.(m, frame)) hit.add(name);
      }
      if (!seenModules.has(m)) {
        seenModules.add(m);
        add(inclusiveModule, m, dt);
      }
      const k = fnKey(frame);
      if (!seen.has(k)) {
        seen.add(k);
        add(inclusive, k, dt);
      }
    }
    if (leafModule === '(garbage collector)') seen.add('(garbage collector)');
    for (const k of seen) {
      const run = (lastSample.get(k) === i - 1 ? runMs.get(k) : 0) + dt;
      runMs.set(k, run);
      lastSample.set(k, i);
      if (run > (longest.get(k) ?? 0)) longest.set(k, run);
    }
    ownerKey ??= `${leafModule} (no package on stack)`;
    add(owner, ownerKey, dt);
    for (const [name, test] of CONCERNS) {
      if (hit.has(name) || test.owned?.(ownerKey)) add(concerns, name, dt);
    }
  }

  const rows = (map, n) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([key, ms]) => ({
        key,
        ms: Number(ms.toFixed(1)),
        pct: Number(((100 * ms) / total).toFixed(1)),
      }));
  const inclusiveInteresting = new Map(
    [...inclusive.entries()].filter(
      ([k]) =>
        !k.startsWith('(') &&
        !/^\(anonymous\)|^processTicksAndRejections|^listOnTimeout|^processTimers/.test(k),
    ),
  );
  const from = Math.max(profile.startTime, window.fromUs);
  const to = Math.min(profile.endTime, window.toUs);
  return {
    durationMs: Number(((to - from) / 1000).toFixed(1)),
    busyMs: Number(total.toFixed(1)),
    idleMs: Number(idle.toFixed(1)),
    samples: kept,
    selfByFunction: rows(self, top),
    selfByModule: rows(selfModule, top),
    byOwner: rows(owner, top),
    inclusive: rows(inclusiveInteresting, top),
    inclusiveByModule: rows(
      new Map([...inclusiveModule].filter(([m]) => !m.startsWith('node:') && !m.startsWith('('))),
      top,
    ),
    concerns: rows(concerns, CONCERNS.length),
    longestStretches: rows(
      new Map(
        [...longest.entries()].filter(
          ([k]) =>
            !/^(\(anonymous\)|runMicrotasks|processTicksAndRejections|processImmediate|listOnTimeout|processTimers|runNextTicks|emit) /.test(
              k,
            ),
        ),
      ),
      15,
    ),
  };
}

export function render(summary) {
  const lines = [];
  const section = (title, list) => {
    lines.push('', title);
    for (const r of list)
      lines.push(`${r.ms.toFixed(1).padStart(9)} ms ${r.pct.toFixed(1).padStart(5)}%  ${r.key}`);
  };
  lines.push(
    `profile: ${summary.durationMs} ms wall, ${summary.busyMs} ms busy (non-idle samples), ${summary.idleMs} ms idle, ${summary.samples} samples`,
  );
  section('concerns (overlapping views; they do not add up)', summary.concerns);
  lines.push(
    '',
    'longest stretches (ms of consecutive samples with the function on the stack; % column: of busy time)',
  );
  for (const r of summary.longestStretches)
    lines.push(`${r.ms.toFixed(1).padStart(9)} ms         ${r.key}`);
  section('self time by module', summary.selfByModule);
  section('by owner (first non-node-core frame up the stack)', summary.byOwner);
  section('self time by function', summary.selfByFunction);
  section('inclusive time (function anywhere on the stack)', summary.inclusive);
  section(
    'inclusive time by package (a frame of it anywhere on the stack)',
    summary.inclusiveByModule,
  );
  return lines.join('\n');
}

const summary = summarize(JSON.parse(readFileSync(file, 'utf8')), topN, { fromUs, toUs });
process.stdout.write(`${file}\n${render(summary)}\n`);
if (jsonOut)
  writeFileSync(
    jsonOut,
    `${JSON.stringify({ file, window: { fromUs, toUs }, ...summary }, null, 2)}\n`,
  );
