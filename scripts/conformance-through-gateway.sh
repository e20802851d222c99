#!/usr/bin/env bash
# The official MCP conformance suite (server scenarios), run through the gateway.
#
#   scripts/conformance-through-gateway.sh [extra run-conformance.sh options]
#   npm run test:conformance [-- extra options]        (after `npm run build`)
#
# Starts the suite's reference MCP server on a free port, then the built gateway
# (dist/apps/gateway/main.js) on free ports with that server as its only upstream (prefix
# "", so the scenarios find the reference names), waits for readiness and for the upstream
# to be `healthy` in /actuator/upstreams, runs the whole suite (`--suite all`) against the
# gateway's /mcp with test/conformance/baseline-gateway.yml as the expected failures, and
# exits with the suite's status: 0 when every failure is in the baseline, 1 on any other
# failure, 2 when something could not be set up. Both processes are stopped on every exit.
#
# Extra options go to run-conformance.sh, e.g. `--scenario tools-call-sampling --verbose`
# (a --scenario overrides --suite all).
#
# Environment:
#   CONFORMANCE_DIR          the harness folder (default: ../shared/conformance next to the
#                            repository, else /work/shared/conformance, where this workplace
#                            keeps it); prepare.sh in it gives an installed copy
#   CONFORMANCE_RESULTS_DIR  where results and both processes' logs go (default: a new temp
#                            dir, printed at the start)
#   CONFORMANCE_START_TIMEOUT_S  how long to wait for each process to be ready (default 60)
#   CONFORMANCE_TIMEOUT_S    passed on to run-conformance.sh (default there: 900)
#   CONFORMANCE_UPSTREAM_PROTOCOL  the upstream's `protocol` setting: auto (default),
#                            2025-11-25 or 2026-07-28
#   CONFORMANCE_UPSTREAM_SERVER  a script to run as the upstream instead of the harness's
#                            reference server (node SCRIPT, PORT=0; it prints
#                            `… listening on <url>`): test/support/tasks-upstream.mjs for the
#                            tasks scenarios
#   MCP_HTTP_SERVER          passed on to the gateway (`node`: its opt-in node:http listener);
#                            nothing else of the caller's environment reaches the gateway

set -uo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
GATEWAY_ENTRY="$REPO/dist/apps/gateway/main.js"
BASELINE="${CONFORMANCE_BASELINE:-$REPO/test/conformance/baseline-gateway.yml}"
if [ -z "${CONFORMANCE_DIR:-}" ]; then
  CONFORMANCE_DIR="$REPO/../shared/conformance"
  [ -d "$CONFORMANCE_DIR" ] || CONFORMANCE_DIR=/work/shared/conformance
fi
START_TIMEOUT_S="${CONFORMANCE_START_TIMEOUT_S:-60}"

say() { echo "conformance-through-gateway: $*"; }
die() {
  echo "conformance-through-gateway: $*" >&2
  exit 2
}

# --- prerequisites ------------------------------------------------------------------------
[ -f "$GATEWAY_ENTRY" ] || die "$GATEWAY_ENTRY is missing: run 'npm run build' first"
# A dist older than the sources tests old code; say so rather than pass quietly.
stale="$(find "$REPO/apps" "$REPO/libs" -name '*.ts' ! -name '*.spec.ts' -newer "$GATEWAY_ENTRY" -print -quit)"
[ -z "$stale" ] || say "WARNING: $stale is newer than the build; run 'npm run build' to test it"
[ -f "$BASELINE" ] || die "baseline not found: $BASELINE"
[ -f "$CONFORMANCE_DIR/prepare.sh" ] || die "no conformance harness at $CONFORMANCE_DIR (set CONFORMANCE_DIR)"
for tool in curl setsid; do command -v "$tool" >/dev/null 2>&1 || die "$tool is needed"; done
HARNESS="$(bash "$CONFORMANCE_DIR/prepare.sh")" || die "prepare.sh failed"
[ -f "$HARNESS/reference-server.mjs" ] || die "prepare.sh gave no usable copy: $HARNESS"

RESULTS="${CONFORMANCE_RESULTS_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/mcp-conformance-gw.XXXXXX")}"
mkdir -p "$RESULTS" || die "cannot create $RESULTS"
RESULTS="$(cd "$RESULTS" && pwd)"
REF_LOG="$RESULTS/reference-server.log"
GW_LOG="$RESULTS/gateway.log"
GW_CONFIG="$RESULTS/gateway.yaml"
# Created here: the background processes open them a moment after they are started.
: >"$REF_LOG"
: >"$GW_LOG"

# --- cleanup: stop both processes (by PID) on every exit ----------------------------------
REF_PID=""
GW_PID=""
SUITE_PID=""
stop_pid() {
  local pid="$1"
  [ -n "$pid" ] || return 0
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
  fi
  wait "$pid" 2>/dev/null
  return 0
}
cleanup() {
  # The suite's process group: run-conformance.sh, `timeout` and the conformance CLI.
  if [ -n "$SUITE_PID" ]; then
    kill -TERM -- "-$SUITE_PID" 2>/dev/null
    wait "$SUITE_PID" 2>/dev/null
  fi
  stop_pid "$GW_PID"
  stop_pid "$REF_PID"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

show_logs() {
  echo "--- last lines of $GW_LOG (boot lines left out) ---" >&2
  grep -vE '"context":"(InstanceLoader|RoutesResolver|RouterExplorer)"' "$GW_LOG" 2>/dev/null | tail -n 30 >&2
  echo "--- last lines of $REF_LOG ---" >&2
  tail -n 20 "$REF_LOG" >&2 2>/dev/null
}

# Polls `$@` every 0.1 s until it succeeds, the process $1 dies, or the start timeout passes.
wait_until() {
  local pid="$1" what="$2"
  shift 2
  local deadline=$((SECONDS + START_TIMEOUT_S))
  until "$@"; do
    kill -0 "$pid" 2>/dev/null || { show_logs; die "$what: the process exited"; }
    [ "$SECONDS" -lt "$deadline" ] || { show_logs; die "$what: not within ${START_TIMEOUT_S}s"; }
    sleep 0.1
  done
}

started=$SECONDS
say "results and logs in $RESULTS"

# --- the reference server (PORT=0: it prints its URL) -------------------------------------
PORT=0 node "${CONFORMANCE_UPSTREAM_SERVER:-$HARNESS/reference-server.mjs}" >"$REF_LOG" 2>&1 &
REF_PID=$!
REF_URL=""
ref_url() {
  REF_URL="$(sed -n 's/^.* listening on \(http[^ ]*\).*/\1/p' "$REF_LOG" | head -n 1)"
  [ -n "$REF_URL" ]
}
wait_until "$REF_PID" "reference server did not start" ref_url
say "reference server: $REF_URL"

# --- the gateway, with the reference server as its only upstream --------------------------
cat >"$GW_CONFIG" <<EOF
mcp:
  identity: gw-conformance
  registry: { refreshIntervalSeconds: 60, refreshJitterSeconds: 0 }
  shutdown: { gracePeriodSeconds: 2 }
  upstreams:
    - id: ref
      url: $REF_URL
      namePrefix: ""
      protocol: ${CONFORMANCE_UPSTREAM_PROTOCOL:-auto}
  http:
    allowedOrigins: ['http://localhost:*', 'http://127.0.0.1:*', 'http://[::1]:*']
    allowedHosts: ['localhost:*', '127.0.0.1:*', '[::1]:*']
EOF
# A clean environment, so a REDIS_URL or APP_PROFILE of the caller does not change the run;
# only MCP_HTTP_SERVER is passed on (MCP_HTTP_SERVER=node: the opt-in node:http listener).
env -i PATH="$PATH" HOME="${HOME:-/tmp}" NO_COLOR=1 \
  ${MCP_HTTP_SERVER:+MCP_HTTP_SERVER="$MCP_HTTP_SERVER"} \
  MCP_CONFIG_FILE="$GW_CONFIG" HOST=127.0.0.1 PORT=0 MANAGEMENT_PORT=0 \
  node "$GATEWAY_ENTRY" >"$GW_LOG" 2>&1 &
GW_PID=$!
MCP_PORT=""
MGMT_PORT=""
gateway_ports() {
  local line
  line="$(grep -oE 'listening: mcp=[0-9]+ management=[0-9]+' "$GW_LOG" | head -n 1)"
  [ -n "$line" ] || return 1
  MCP_PORT="$(sed -E 's/.*mcp=([0-9]+).*/\1/' <<<"$line")"
  MGMT_PORT="$(sed -E 's/.*management=([0-9]+).*/\1/' <<<"$line")"
}
wait_until "$GW_PID" "gateway did not start listening" gateway_ports
MGMT="http://127.0.0.1:$MGMT_PORT"
GW_URL="http://127.0.0.1:$MCP_PORT/mcp"

ready() {
  [ "$(curl -s -o /dev/null -w '%{http_code}' "$MGMT/actuator/health/readiness")" = 200 ]
}
wait_until "$GW_PID" "gateway not ready (GET /actuator/health/readiness)" ready
upstream_healthy() {
  curl -sf "$MGMT/actuator/upstreams" | node -e '
    let s = "";
    process.stdin.on("data", (d) => (s += d)).on("end", () => {
      const up = JSON.parse(s).upstreams.find((u) => u.id === "ref");
      process.exit(up && up.status === "healthy" ? 0 : 1);
    });'
}
wait_until "$GW_PID" "upstream 'ref' not healthy in /actuator/upstreams" upstream_healthy
say "gateway: $GW_URL (management $MGMT), upstream 'ref' healthy after $((SECONDS - started))s"

# --- the suite ------------------------------------------------------------------------------
suite_started=$SECONDS
# In the background, in a process group of its own, and waited for: a TERM or INT then stops
# everything at once instead of after the suite (bash runs traps between commands only).
# A requirement set (--requirements REV) fixes its scenarios: no --suite then.
SUITE_ARGS=(--suite all)
for arg in "$@"; do case "$arg" in --requirements | --requirements=*) SUITE_ARGS=() ;; esac; done
CONFORMANCE_RESULTS_DIR="$RESULTS" setsid bash "$HARNESS/run-conformance.sh" "$GW_URL" \
  ${SUITE_ARGS[@]+"${SUITE_ARGS[@]}"} --expected-failures "$BASELINE" "$@" &
SUITE_PID=$!
wait "$SUITE_PID"
status=$?
SUITE_PID=""
say "suite exit status $status, suite $((SECONDS - suite_started))s, total $((SECONDS - started))s"
if [ "$status" -ne 0 ]; then
  show_logs
fi
exit "$status"
