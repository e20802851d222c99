#!/usr/bin/env node
// `npm run bench:profile`: CPU profile of the gateway under load, summarised.
//
// Starts the bench Tool Service and the built gateway with `--cpu-prof`, drives it after a
// warm-up, stops it (the profile is written at exit) and prints bench/profile-summary.mjs's
// summary of the measured window only (startup and warm-up excluded). The .cpuprofile stays in
// bench/results/profiles/ (open it in Chrome DevTools → Performance, or speedscope).
//
// BENCH_PROFILE_MODE:
//   call     (default) tools/call of the echo tool at 16 connections, 10 tools
//   list     tools/list of a 10,000-tool catalog at 1 connection
//   refresh  a 10,000-tool catalog swap under tools/call at 16 connections; the summary covers
//            the refresh only (from the triggering call to its answer)
//   startup  spawn → readiness 200 with 10 tools (no load); the whole profile up to readiness
//   upstream tools/call of an upstream MCP server's tool (bench/lib/mcp-upstream.mjs: v1 SDK,
//            stateful session, SSE answers; BENCH_UPSTREAM_JSON=1 for JSON) at 16 connections,
//            the gateway configured with that one upstream (the upstreamCall scenario);
//            BENCH_UPSTREAM_ANSWER_BYTES=N adds N bytes to every answer
//   live     tools/list by a 2026-07-28 client at 1 connection through a gateway whose only
//            sources are ten `lists: live` upstreams (bench/lib/mcp-fanout.mjs, 5 tools each,
//            ttlMs 0): every request fans out (the modern.liveFanout scenario;
//            docs/operations.md §11 "Live lists")
// BENCH_PROFILE_ERA=2026 (mode call): the client is a 2026-07-28 one (the modern scenario's
// wrk mode modern-call against a gateway with mcp.http.modernEra on).
// BENCH_PROFILE_TRACING_RATIO=<0..1> (mode call): tracing on, exported to a sink in the bench.
// BENCH_PROFILE_AUTH=jwt (mode call): the gateway verifies a Bearer JWT on every call
// (mcp.auth.mode jwt against a local JWKS, the auth scenario's setup).
// BENCH_PROFILE_TARGET=proxy profiles the bare proxy (bench/lib/bare-proxy.mjs) instead, for
// comparison (with BENCH_PROFILE_MODE=upstream: in front of the upstream MCP server, on a
// session the bench opens through it). BENCH_PROFILE_SECONDS (10), BENCH_PROFILE_TOOLS, BENCH_PROFILE_CONNECTIONS override
// the defaults.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { haveCommand, runLoad } from './lib/load.mjs';
import {
  REPO_ROOT,
  cleanupTemp,
  killAll,
  rpc,
  snapshotGateway,
  spawnGateway,
  startBareProxy,
  startFanoutUpstreams,
  startMcpUpstream,
  startToolService,
  waitReady,
} from './lib/processes.mjs';
import { AUDIENCE, startIssuer } from './lib/scenario-auth.mjs';
import { openSession } from './lib/scenario-upstream-call.mjs';
import { tracingSink } from './lib/tracing-sink.mjs';

const PROXY = process.env.BENCH_PROFILE_TARGET === 'proxy';
const UPSTREAM = process.env.BENCH_PROFILE_MODE === 'upstream';
const LIVE = !PROXY && process.env.BENCH_PROFILE_MODE === 'live';
/** BENCH_PROFILE_ERA=2026 (mode call): a 2026-07-28 client (wrk modern-call, modernEra on). */
const MODERN = !PROXY && !UPSTREAM && !LIVE && process.env.BENCH_PROFILE_ERA === '2026';
/**
 * BENCH_PROFILE_TRACING_RATIO=<0..1> (mode call): the gateway traces with this sampling ratio,
 * exporting to a sink in this process (what a sampled call costs, docs/benchmarks.md "Traces").
 */
const TRACING_RATIO =
  (process.env.BENCH_PROFILE_TRACING_RATIO ?? '') === ''
    ? undefined
    : Number(process.env.BENCH_PROFILE_TRACING_RATIO);
const sink = tracingSink();
const KIND =
  PROXY && UPSTREAM
    ? 'proxy-upstream'
    : PROXY
      ? 'proxy'
      : ['list', 'refresh', 'startup', 'upstream', 'live'].includes(process.env.BENCH_PROFILE_MODE)
        ? process.env.BENCH_PROFILE_MODE
        : 'call';
const MODE = UPSTREAM
  ? 'mcp'
  : LIVE
    ? 'modern-list'
    : PROXY
      ? 'rest'
      : KIND === 'list'
        ? 'list'
        : MODERN
          ? 'modern-call'
          : 'call';
const SECONDS = Number(process.env.BENCH_PROFILE_SECONDS) || (KIND === 'refresh' ? 4 : 10);
const TOOLS =
  Number(process.env.BENCH_PROFILE_TOOLS) || (KIND === 'list' || KIND === 'refresh' ? 10000 : 10);
const CONNECTIONS =
  Number(process.env.BENCH_PROFILE_CONNECTIONS) || (KIND === 'list' || LIVE ? 1 : 16);
const generator =
  haveCommand('wrk') && process.env.BENCH_GENERATOR !== 'autocannon' ? 'wrk' : 'autocannon';
const pin = haveCommand('taskset') && os.availableParallelism() >= 2;
const dir = join(
  REPO_ROOT,
  'bench',
  'results',
  'profiles',
  `${KIND}-${new Date().toISOString().replace(/[:.]/g, '-')}`,
);
const nowUs = () => Number(process.hrtime.bigint() / 1000n); // CLOCK_MONOTONIC: the profile's clock
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
mkdirSync(dir, { recursive: true });

const ts = UPSTREAM
  ? await startMcpUpstream({
      core: pin ? 1 : undefined,
      json: process.env.BENCH_UPSTREAM_JSON === '1',
      answerBytes: Number(process.env.BENCH_UPSTREAM_ANSWER_BYTES) || 0,
    })
  : LIVE
    ? await startFanoutUpstreams({ core: pin ? 1 : undefined, servers: 10, tools: 5, silent: 0 })
    : await startToolService({ core: pin ? 1 : undefined });
let target;
let issuer;
try {
  if (!UPSTREAM && !LIVE) await ts.setCatalog('profile', TOOLS, 'r1', 'A');
  // The default sampling interval is 1000 µs; 250 µs gives 4× the samples.
  const nodeArgs = ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval=250'];
  let url;
  let tool;
  let headers;
  if (UPSTREAM && PROXY) {
    target = await startBareProxy({ core: pin ? 0 : undefined, upstream: ts.url, nodeArgs });
    url = `http://127.0.0.1:${target.port}/mcp`;
    tool = 'echo';
    headers = await openSession(url);
  } else if (LIVE) {
    snapshotGateway();
    target = await spawnGateway({
      core: pin ? 0 : undefined,
      nodeArgs,
      mcp: {
        identity: 'bench',
        registry: { refreshIntervalSeconds: 3600, refreshJitterSeconds: 0 },
        discovery: { enabled: true },
        http: { modernEra: true },
        upstreams: ts.servers.map((u, i) => ({ id: `u${i}`, url: u, lists: 'live' })),
      },
    });
    await waitReady(target);
    url = target.mcpUrl;
  } else if (UPSTREAM) {
    snapshotGateway();
    target = await spawnGateway({
      core: pin ? 0 : undefined,
      nodeArgs,
      mcp: {
        identity: 'bench',
        registry: { refreshIntervalSeconds: 3600, refreshJitterSeconds: 0 },
        discovery: { enabled: true },
        upstreams: [{ id: 'up', url: ts.url }],
      },
    });
    await waitReady(target);
    url = target.mcpUrl;
    tool = 'up__echo';
  } else if (PROXY) {
    target = await startBareProxy({ core: pin ? 0 : undefined, upstream: ts.url, nodeArgs });
    url = `http://127.0.0.1:${target.port}/mcp/bench.echo`;
  } else {
    snapshotGateway();
    if (process.env.BENCH_PROFILE_AUTH === 'jwt') issuer = await startIssuer();
    target = await spawnGateway({
      core: pin ? 0 : undefined,
      toolService: ts,
      catalog: 'profile',
      nodeArgs,
      mcpExtra: {
        ...(MODERN ? { http: { modernEra: true } } : {}),
        ...(TRACING_RATIO === undefined
          ? {}
          : { tracing: { endpoint: await sink.endpoint(), samplingRatio: TRACING_RATIO } }),
        ...(issuer === undefined
          ? {}
          : {
              auth: {
                mode: 'jwt',
                issuer: issuer.issuer,
                audience: AUDIENCE,
                jwksUrl: issuer.jwksUrl,
              },
            }),
      },
    });
    if (issuer !== undefined) headers = { authorization: `Bearer ${issuer.token}` };
    const readyMs = await waitReady(target);
    url = target.mcpUrl;
    if (KIND === 'startup') {
      const readyAtUs = nowUs();
      process.stderr.write(
        `profiled the gateway's startup: ready ${readyMs.toFixed(0)} ms after spawn (under the profiler)\n`,
      );
      await target.stop(30_000);
      await ts.stop();
      cleanupTemp();
      const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
      if (!file) throw new Error(`no profile written in ${dir}`);
      process.stdout.write(
        execFileSync(
          process.execPath,
          [
            join(REPO_ROOT, 'bench', 'profile-summary.mjs'),
            join(dir, file),
            '--top',
            '30',
            '--json',
            join(dir, 'summary.json'),
            '--to-us',
            String(readyAtUs),
          ],
          { encoding: 'utf8' },
        ),
      );
      process.exit(0);
    }
  }
  const load = {
    generator,
    url,
    mode: MODE,
    connections: CONNECTIONS,
    core: pin ? 1 : undefined,
    tool,
    headers,
  };
  const warm = await runLoad({ ...load, seconds: 3 });
  let fromUs;
  let toUs;
  let r;
  let note = '';
  if (KIND === 'refresh') {
    await ts.setCatalog('profile', TOOLS, 'b2', 'B');
    const running = runLoad({ ...load, seconds: SECONDS });
    await sleep(1000);
    fromUs = nowUs();
    const answer = await rpc(target, 'swap', 'tools/call', {
      name: 'bench.not-yet-published',
      arguments: {},
    });
    toUs = nowUs();
    r = await running;
    note = `refresh (trigger → answer ${answer.json?.error?.code}) took ${((toUs - fromUs) / 1000).toFixed(0)} ms; `;
  } else {
    fromUs = nowUs();
    r = await runLoad({ ...load, seconds: SECONDS });
    toUs = nowUs();
  }
  process.stderr.write(
    `profiled ${PROXY ? 'the bare proxy' : 'the gateway'} (${KIND}, ${UPSTREAM ? 'one upstream MCP server' : LIVE ? 'ten live upstreams × 5 tools' : `${TOOLS} tools`}, ${CONNECTIONS} connections): ${note}` +
      `${r.requests} requests, ${r.rps.toFixed(0)} req/s, p50 ${r.p50Ms.toFixed(3)} ms, errors ${r.errors}, id mismatches ${r.mismatches}\n`,
  );
  const lastOutput = target.output();
  await target.stop(30_000);
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error(`no profile written in ${dir}:\n${lastOutput}`);
  const out = execFileSync(
    process.execPath,
    [
      join(REPO_ROOT, 'bench', 'profile-summary.mjs'),
      join(dir, file),
      '--top',
      '30',
      '--json',
      join(dir, 'summary.json'),
      '--from-us',
      String(fromUs),
      '--to-us',
      String(toUs),
    ],
    { encoding: 'utf8' },
  );
  process.stdout.write(out);
  if (KIND !== 'refresh') {
    process.stdout.write(
      `\nthe summary covers the measured run only (startup and the ${warm.requests}-request warm-up excluded): ` +
        `${r.requests} requests, so CPU per request = busy ms ÷ ${r.requests}\n`,
    );
  }
} catch (err) {
  process.stderr.write(`profile failed: ${err instanceof Error ? err.stack : err}\n`);
  killAll();
  process.exitCode = 1;
} finally {
  if (target) await target.stop();
  await ts.stop();
  await issuer?.stop();
  sink.close();
  cleanupTemp();
  if (process.exitCode) rmSync(dir, { recursive: true, force: true });
}
