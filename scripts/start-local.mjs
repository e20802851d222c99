#!/usr/bin/env node
// `npm start`: the sample Tool Service on 127.0.0.1:8081, then the gateway (local profile) on
// 127.0.0.1:8080 (/mcp) and 127.0.0.1:9090 (/actuator). Ctrl-C stops both.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

const samplePort = process.env.SAMPLE_PORT ?? '8081';
const children = [];

function run(name, entry, env) {
  const child = spawn(process.execPath, [entry], { stdio: 'inherit', env: { ...process.env, ...env } });
  child.on('exit', (code, signal) => {
    if (!stopping) {
      console.error(`[start] ${name} exited (${signal ?? code}); stopping`);
      stop(code ?? 1);
    }
  });
  children.push(child);
  return child;
}

let stopping = false;
function stop(code = 0) {
  stopping = true;
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  setTimeout(() => process.exit(code), 3000).unref();
  Promise.all(children.map((c) => (c.exitCode !== null ? null : new Promise((r) => c.once('exit', r))))).then(() =>
    process.exit(code),
  );
}
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));

run('sample-tool-service', 'dist/apps/sample-tool-service/main.js', { PORT: samplePort, HOST: '127.0.0.1' });

// Start the gateway once the sample manifest answers, so its first pull succeeds
// (otherwise it would serve the local fallback file until the next refresh).
const deadline = Date.now() + 15_000;
for (;;) {
  try {
    const res = await fetch(`http://127.0.0.1:${samplePort}/tool-manifest`);
    if (res.ok) break;
  } catch {
    // not up yet
  }
  if (Date.now() > deadline || stopping) break;
  await sleep(100);
}
// The runtime memory settings the chart deploys and the bench measures
// (scripts/gateway-runtime-env.json; docs/benchmarks.md); a variable already set wins.
const runtimeEnv = JSON.parse(
  readFileSync(new URL('./gateway-runtime-env.json', import.meta.url), 'utf8'),
);
for (const name of Object.keys(runtimeEnv)) {
  if (process.env[name] !== undefined) delete runtimeEnv[name];
}

if (!stopping) {
  run('gateway', 'dist/apps/gateway/main.js', {
    ...runtimeEnv,
    APP_PROFILE: process.env.APP_PROFILE ?? 'local',
    HOST: process.env.HOST ?? '127.0.0.1',
  });
}
