// auth: tools/call with JWT validation on (mcp.auth.mode jwt; issue 12 §1) against the same
// gateway build without auth, at 16 connections, alternating rounds. The bench mints an ES256
// token locally with jose and serves its JWKS on 127.0.0.1; the gateway fetches the key set
// once and verifies every request's token (signature, iss, aud, exp). A third gateway without
// the audit line (mcp.audit.enabled false) prices that line (auditCpuPerRequestRatio).
// Key: auth.toolsCall.c16.cpuPerRequestRatioVsNoAuth (target ≤ 1.15): the ratio of the
// medians of the kept rounds (BENCH_AUTH_ROUNDS, default 9, round 1 dropped).
import { createServer } from 'node:http';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { CORE_SIDE, CORE_TARGET, ROUNDS, SECONDS, WARMUP, int, log } from './config.mjs';
import { account, measured } from './measure.mjs';
import { spawnGateway, waitReady } from './processes.mjs';
import { fmt, median, round } from './stats.mjs';

const CONNECTIONS = 16;
/**
 * Rounds of this scenario (BENCH_AUTH_ROUNDS; default 9 when BENCH_ROUNDS ≥ 5): single rounds
 * of one gateway vary by up to 2× on a 2-core machine (another process's GC on the same core),
 * and the key compares two processes, so it takes more rounds than a same-process figure.
 */
const AUTH_ROUNDS = int('BENCH_AUTH_ROUNDS', ROUNDS >= 5 ? Math.max(ROUNDS, 9) : ROUNDS);
export const AUDIENCE = 'http://127.0.0.1/mcp-bench';

/** A JWKS endpoint on 127.0.0.1 serving one ES256 public key, and a token signed with it. */
export async function startIssuer() {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), alg: 'ES256', use: 'sig', kid: 'bench-1' };
  let fetches = 0;
  const server = createServer((req, res) => {
    fetches += 1;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const token = await new SignJWT({ scope: 'mcp', client_id: 'bench-agent' })
    .setProtectedHeader({ alg: 'ES256', kid: 'bench-1', typ: 'at+jwt' })
    .setIssuer(issuer)
    .setAudience(AUDIENCE)
    .setSubject('bench-user')
    .setIssuedAt()
    .setExpirationTime('2h')
    .sign(privateKey);
  return {
    issuer,
    jwksUrl: `${issuer}/jwks`,
    token,
    fetches: () => fetches,
    stop: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** The bench gateway's default `mcp:` tree (spawnGateway), plus `extra`. */
function benchMcp(ts, extra = {}) {
  return {
    identity: 'bench',
    registry: { refreshIntervalSeconds: 3600, refreshJitterSeconds: 0 },
    discovery: {
      enabled: true,
      connectTimeoutMillis: 1000,
      readTimeoutMillis: 3000,
      maxToolsPerBundle: 10000,
      maxToolsTotal: 10000,
      maxManifestBytes: 33554432,
      maxToolTimeoutMillis: 30000,
    },
    bundles: [
      {
        id: 'bench',
        manifestUrl: `${ts.url}/tool-manifest?catalog=t10`,
        baseEndpoint: `${ts.url}/mcp`,
        namePrefix: 'bench.',
        enabled: true,
      },
    ],
    ...extra,
  };
}

export async function scenarioAuth(ts) {
  await ts.setCatalog('t10', 10, 'r1', 'A');
  const issuer = await startIssuer();
  const noAuth = await spawnGateway({ core: CORE_TARGET, mcp: benchMcp(ts) });
  // the audit line per call (issue 12 §5) priced too: the same gateway without it
  const noAudit = await spawnGateway({
    core: CORE_TARGET,
    mcp: benchMcp(ts, { audit: { enabled: false } }),
  });
  const jwt = await spawnGateway({
    core: CORE_TARGET,
    mcp: benchMcp(ts, {
      auth: { mode: 'jwt', issuer: issuer.issuer, audience: AUDIENCE, jwksUrl: issuer.jwksUrl },
    }),
  });
  try {
    await waitReady(noAuth);
    await waitReady(noAudit);
    await waitReady(jwt);
    const targets = {
      noAuth: { url: noAuth.mcpUrl, mode: 'call', targetPid: noAuth.pid, upstreamPid: ts.pid },
      noAudit: { url: noAudit.mcpUrl, mode: 'call', targetPid: noAudit.pid, upstreamPid: ts.pid },
      jwt: {
        url: jwt.mcpUrl,
        mode: 'call',
        targetPid: jwt.pid,
        upstreamPid: ts.pid,
        headers: { authorization: `Bearer ${issuer.token}` },
      },
    };
    log(`auth warm-up: ${WARMUP} s per target at ${CONNECTIONS} connections`);
    for (const name of Object.keys(targets)) {
      const r = await measured({
        ...targets[name],
        connections: CONNECTIONS,
        seconds: WARMUP,
        loadCore: CORE_SIDE,
      });
      account(r);
      // a refused token would measure the 401 path, not the verified call
      if (r.errors > 0 || r.requests === 0)
        throw new Error(
          `auth ${name}: ${r.errors} errors in the warm-up (${JSON.stringify(r.errorDetail ?? {})})`,
        );
    }
    const raw = [];
    for (let roundNo = 0; roundNo < AUTH_ROUNDS; roundNo++) {
      const names = ['noAuth', 'jwt', 'noAudit'];
      const shift = roundNo % names.length;
      const order = [...names.slice(shift), ...names.slice(0, shift)];
      for (const name of order) {
        const r = await measured({
          ...targets[name],
          connections: CONNECTIONS,
          seconds: SECONDS,
          loadCore: CORE_SIDE,
        });
        account(r);
        raw.push({
          round: roundNo + 1,
          target: name,
          kept: roundNo > 0 || AUTH_ROUNDS === 1,
          ...r,
        });
        log(
          `auth round ${roundNo + 1}/${AUTH_ROUNDS} ${name.padEnd(7)} ${fmt(r.rps, 0)} req/s p50 ${fmt(r.p50Ms, 3)} ms ` +
            `cpu/req ${fmt(r.cpuPerRequestMs * 1000, 1)} µs err ${r.errors}`,
        );
      }
    }
    const summary = (name) => {
      const runs = raw.filter((r) => r.target === name && r.kept);
      return {
        rounds: runs.length,
        rps: round(median(runs.map((r) => r.rps)), 1),
        p50Ms: round(median(runs.map((r) => r.p50Ms))),
        p99Ms: round(median(runs.map((r) => r.p99Ms))),
        cpuPerRequestMs: round(median(runs.map((r) => r.cpuPerRequestMs)), 5),
        errors: runs.reduce((s, r) => s + r.errors, 0),
        requests: runs.reduce((s, r) => s + r.requests, 0),
      };
    };
    const perRoundRatio = (target, reference) =>
      raw
        .filter((r) => r.target === target && r.kept)
        .map((j) => {
          const n = raw.find((r) => r.target === reference && r.round === j.round);
          return n ? j.cpuPerRequestMs / n.cpuPerRequestMs : NaN;
        });
    const perRound = perRoundRatio('jwt', 'noAuth');
    const a = summary('noAuth');
    const b = summary('jwt');
    const c = summary('noAudit');
    return {
      toolsCall: {
        c16: {
          noAuth: a,
          jwt: b,
          cpuPerRequestRatioVsNoAuth: round(b.cpuPerRequestMs / a.cpuPerRequestMs, 2),
          cpuPerRequestRatioVsNoAuthPerRound: perRound.map((x) => round(x, 2)),
          addedP50Ms: round(b.p50Ms - a.p50Ms),
          noAudit: c,
          // noAuth (audit on, the default) ÷ the same without the audit line
          auditCpuPerRequestRatio: round(a.cpuPerRequestMs / c.cpuPerRequestMs, 2),
          auditCpuPerRequestRatioPerRound: perRoundRatio('noAuth', 'noAudit').map((x) =>
            round(x, 2),
          ),
          jwksFetches: issuer.fetches(),
        },
      },
      raw: raw.map((r) => ({
        round: r.round,
        kept: r.kept,
        target: r.target,
        requests: r.requests,
        rps: round(r.rps, 1),
        p50Ms: round(r.p50Ms),
        p99Ms: round(r.p99Ms),
        errors: r.errors,
        cpuPerRequestMs: round(r.cpuPerRequestMs, 5),
        noiseCores: round(r.noiseCores, 2),
      })),
    };
  } finally {
    await noAuth.stop();
    await noAudit.stop();
    await jwt.stop();
    await issuer.stop();
  }
}
