// The load generator: wrk (with bench/lib/jsonrpc.lua) when installed, else autocannon.
// Both give every request a unique number and check that each response carries its own.
import { spawn, spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const LUA = join(here, 'jsonrpc.lua');

export function haveCommand(name) {
  return spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0;
}

/**
 * Runs one bounded load: `connections` keep-alive connections for `seconds` seconds.
 * mode: 'rest' (POST {"nonce":N} to the URL as is), 'call' (tools/call on /mcp), 'list',
 * 'mcp' (tools/call of `tool` on any MCP endpoint; JSON or SSE answers). `headers`: extra
 * request headers (e.g. a session's Mcp-Session-Id).
 * Returns the normalized figures (latencies in ms).
 */
export async function runLoad({ generator, url, mode, connections, seconds, core, tool, headers }) {
  const run = generator === 'wrk' ? runWrk : runAutocannon;
  return run({ url, mode, connections, seconds, core, tool: tool ?? 'bench.echo', headers });
}

function runWrk({ url, mode, connections, seconds, core, tool, headers = {} }) {
  const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', '5s', '-s', LUA, url];
  const [cmd, argv] =
    core === undefined ? ['wrk', args] : ['taskset', ['-c', String(core), 'wrk', ...args]];
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, {
      env: {
        ...process.env,
        BENCH_MODE: mode,
        BENCH_TOOL: tool,
        BENCH_HEADERS: Object.entries(headers)
          .map(([k, v]) => `${k}: ${v}`)
          .join('\n'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
    // Hard bound: wrk stops itself after `seconds`; this is the safety net.
    const killer = setTimeout(() => child.kill('SIGKILL'), (seconds + 20) * 1000);
    // 'close', not 'exit': stdout may still hold the figures when the process has exited
    child.on('close', (code) => {
      clearTimeout(killer);
      const line = out.split('\n').find((l) => l.startsWith('BENCHJSON '));
      if (!line) {
        reject(new Error(`wrk gave no figures (exit ${code}): ${err || out}`));
        return;
      }
      const r = JSON.parse(line.slice('BENCHJSON '.length));
      const secs = r.durationUs / 1e6;
      resolve({
        generator: 'wrk',
        requests: r.requests,
        seconds: secs,
        rps: r.requests / secs,
        p50Ms: r.p50Us / 1000,
        p90Ms: r.p90Us / 1000,
        p99Ms: r.p99Us / 1000,
        maxMs: r.maxUs / 1000,
        meanMs: r.meanUs / 1000,
        bytesPerResponse: r.requests > 0 ? r.bytes / r.requests : 0,
        errors: r.errConnect + r.errRead + r.errWrite + r.errStatus + r.errTimeout + r.rpcErrors,
        errorDetail: {
          connect: r.errConnect,
          read: r.errRead,
          write: r.errWrite,
          status: r.errStatus,
          timeout: r.errTimeout,
          rpc: r.rpcErrors,
        },
        matched: r.matched,
        mismatches: r.mismatches,
      });
    });
    child.on('error', reject);
  });
}

/** The `_meta` envelope of a 2026-07-28 request (wire notes §2.0), as JSON text. */
const MODERN_ENVELOPE = JSON.stringify({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'bench-autocannon', version: '1' },
});

async function runAutocannon({ url, mode, connections, seconds, tool, headers = {} }) {
  const { default: autocannon } = await import('autocannon');
  let counter = 0;
  let matched = 0;
  let mismatches = 0;
  let rpcErrors = 0;
  const request = {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(mode === 'modern-call' || mode === 'modern-list'
        ? {
            'mcp-protocol-version': '2026-07-28',
            'mcp-method': mode === 'modern-call' ? 'tools/call' : 'tools/list',
            ...(mode === 'modern-call' ? { 'mcp-name': tool } : {}),
          }
        : {}),
      ...headers,
    },
    // context is per connection: the id sent on this connection is the one its response must carry.
    setupRequest(req, context) {
      const id = ++counter;
      context.expected = id;
      if (mode === 'rest') req.body = `{"nonce":${id}}`;
      else if (mode === 'list' || mode === 'list-gzip')
        req.body = `{"jsonrpc":"2.0","id":${id},"method":"tools/list"}`;
      else if (mode === 'modern-list')
        req.body = `{"jsonrpc":"2.0","id":${id},"method":"tools/list","params":{"_meta":${MODERN_ENVELOPE}}}`;
      else if (mode === 'modern-call')
        req.body = `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${tool}","arguments":{"nonce":${id}},"_meta":${MODERN_ENVELOPE}}}`;
      else
        req.body = `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${tool}","arguments":{"nonce":${id}}}}`;
      return req;
    },
    onResponse(status, body, context) {
      const text = String(body);
      const expected = String(context.expected);
      const got =
        mode === 'rest'
          ? /"nonce":(\d+)/.exec(text)?.[1]
          : mode === 'mcp' || mode === 'modern-call' || mode === 'modern-list'
            ? /"jsonrpc":"2\.0","id":(\d+)/.exec(text)?.[1]
            : /^\{"jsonrpc":"2\.0","id":(\d+)/.exec(text)?.[1];
      const nonce =
        mode === 'call' || mode === 'mcp' || mode === 'modern-call'
          ? /nonce\W+(\d+)/.exec(text)?.[1]
          : got;
      if (got === expected && nonce === expected) matched++;
      else mismatches++;
      if (mode !== 'rest' && (!text.includes('"result":') || text.includes('"isError":true')))
        rpcErrors++;
    },
  };
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    timeout: 5,
    requests: [request],
  });
  const secs = seconds;
  return {
    generator: 'autocannon',
    requests: result.requests.total,
    seconds: secs,
    rps: result.requests.total / secs,
    p50Ms: result.latency.p50,
    p90Ms: result.latency.p90,
    p99Ms: result.latency.p99,
    maxMs: result.latency.max,
    meanMs: result.latency.average,
    bytesPerResponse:
      result.requests.total > 0 ? result.throughput.total / result.requests.total : 0,
    errors: result.errors + result.timeouts + result.non2xx + rpcErrors,
    errorDetail: {
      errors: result.errors,
      timeout: result.timeouts,
      status: result.non2xx,
      rpc: rpcErrors,
    },
    matched,
    mismatches,
  };
}
