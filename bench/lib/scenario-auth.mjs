// auth: tools/call with JWT validation on (mcp.auth.mode jwt; docs/operations.md §13) against the
// same gateway build without auth, at 16 connections, alternating rounds. The bench mints an ES256
// token locally with jose and serves its JWKS on 127.0.0.1; the gateway fetches the key set
// once and verifies every request's token (signature, iss, aud, exp). A third configuration
// without the audit line (mcp.audit.enabled false) prices that line (auditCpuPerRequestRatio).
// Each configuration runs as BENCH_REPLICAS gateway processes (default 2; bench/lib/replicas.mjs).
// Key: auth.toolsCall.c16.cpuPerRequestRatioVsNoAuth (target ≤ 1.15): the ratio of the
// medians of the kept runs of all processes of each configuration (BENCH_AUTH_ROUNDS,
// default 6, round 1 dropped).
import { createServer } from 'node:http';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { CORE_SIDE, CORE_TARGET, ROUNDS, SECONDS, WARMUP, int, log } from './config.mjs';
import { account, measured } from './measure.mjs';
import { spawnGateway, waitReady } from './processes.mjs';
import {
  REPLICAS,
  perRoundCpuRatio,
  pooledFigures,
  rawRuns,
  replicatedRounds,
  simultaneousRounds,
} from './replicas.mjs';
import { round } from './stats.mjs';

const CONNECTIONS = 16;
/**
 * Rounds of this scenario (BENCH_AUTH_ROUNDS; default 6 when BENCH_ROUNDS ≥ 5, i.e. 10 kept
 * runs per configuration with 2 processes each): single runs of one gateway vary by up to 2×
 * on a 2-core machine (another process's GC on the same core), so the key takes more runs
 * than a same-process figure.
 */
const AUTH_ROUNDS = int('BENCH_AUTH_ROUNDS', ROUNDS >= 5 ? Math.max(ROUNDS, 6) : ROUNDS);
/**
 * BENCH_AUTH_TOGETHER (default 1): the three configurations' k-th processes are loaded at the
 * same time (replicas.mjs simultaneousRounds); 0 measures one process at a time
 * (replicatedRounds), as before 2026-12-01 04:00 UTC.
 */
const TOGETHER = process.env.BENCH_AUTH_TOGETHER !== '0';
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
  // one token per subject (the capacity ramp opens its streams as many callers)
  const mint = (subject) =>
    new SignJWT({ scope: 'mcp', client_id: 'bench-agent' })
      .setProtectedHeader({ alg: 'ES256', kid: 'bench-1', typ: 'at+jwt' })
      .setIssuer(issuer)
      .setAudience(AUDIENCE)
      .setSubject(subject)
      .setIssuedAt()
      .setExpirationTime('2h')
      .sign(privateKey);
  return {
    issuer,
    jwksUrl: `${issuer}/jwks`,
    token,
    mint,
    fetches: () => fetches,
    stop: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** The bench gateway's default `mcp:` tree (spawnGateway), plus `extra`. */
export function benchMcp(ts, extra = {}) {
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
  const auth = { mode: 'jwt', issuer: issuer.issuer, audience: AUDIENCE, jwksUrl: issuer.jwksUrl };
  const headers = { authorization: `Bearer ${issuer.token}` };
  const configurations = {
    noAuth: { mcp: {} },
    jwt: { mcp: { auth }, headers },
    // the audit line per call (docs/operations.md §14 "Audit") priced too: the same gateway
    // without it
    noAudit: { mcp: { audit: { enabled: false } } },
  };
  const gateways = [];
  try {
    const targets = {};
    for (const [name, { mcp, headers: h }] of Object.entries(configurations)) {
      targets[name] = [];
      for (let i = 0; i < REPLICAS; i++) {
        const gw = await spawnGateway({ core: CORE_TARGET, mcp: benchMcp(ts, mcp) });
        gateways.push(gw);
        targets[name].push({
          url: gw.mcpUrl,
          mode: 'call',
          targetPid: gw.pid,
          upstreamPid: ts.pid,
          loadCore: CORE_SIDE,
          ...(h === undefined ? {} : { headers: h }),
        });
      }
    }
    for (const gw of gateways) await waitReady(gw);
    log(
      `auth warm-up: ${WARMUP} s per process at ${CONNECTIONS} connections, ${REPLICAS} processes per configuration`,
    );
    for (const [name, list] of Object.entries(targets))
      for (const target of list) {
        const r = await measured({ ...target, connections: CONNECTIONS, seconds: WARMUP });
        account(r);
        // a refused token would measure the 401 path, not the verified call
        if (r.errors > 0 || r.requests === 0)
          throw new Error(
            `auth ${name}: ${r.errors} errors in the warm-up (${JSON.stringify(r.errorDetail ?? {})})`,
          );
      }
    const raw = await (TOGETHER ? simultaneousRounds : replicatedRounds)({
      configurations: targets,
      rounds: AUTH_ROUNDS,
      seconds: SECONDS,
      connections: CONNECTIONS,
      label: 'auth',
    });
    const a = pooledFigures(raw, 'noAuth');
    const b = pooledFigures(raw, 'jwt');
    const c = pooledFigures(raw, 'noAudit');
    return {
      toolsCall: {
        c16: {
          noAuth: a,
          jwt: b,
          cpuPerRequestRatioVsNoAuth: round(b.cpuPerRequestMs / a.cpuPerRequestMs, 2),
          cpuPerRequestRatioVsNoAuthPerRound: perRoundCpuRatio(raw, 'jwt', 'noAuth'),
          addedP50Ms: round(b.p50Ms - a.p50Ms),
          noAudit: c,
          // noAuth (audit on, the default) ÷ the same without the audit line
          auditCpuPerRequestRatio: round(a.cpuPerRequestMs / c.cpuPerRequestMs, 2),
          auditCpuPerRequestRatioPerRound: perRoundCpuRatio(raw, 'noAuth', 'noAudit'),
          jwksFetches: issuer.fetches(),
        },
      },
      raw: rawRuns(raw),
    };
  } finally {
    for (const gw of gateways) await gw.stop();
    await issuer.stop();
  }
}
