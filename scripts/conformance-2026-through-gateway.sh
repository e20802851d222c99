#!/usr/bin/env bash
# The official MCP conformance suite 0.2.0-alpha.12, both requirement sets (2025-11-25 and
# 2026-07-28), run through the gateway in front of the dual-era reference server of
# ../shared/conformance-2026, once per upstream `protocol` setting (auto, 2026-07-28,
# 2025-11-25): six runs of scripts/conformance-through-gateway.sh, each with the baseline
# test/conformance/baseline-gateway-2026-<setting>.yml (what does not pass through the
# gateway with that setting although it passes directly; docs/operations.md §11
# "Conformance"). Then the Tasks extension's ten `tasks-*` scenarios (unscored in the
# requirement sets) against test/support/tasks-upstream.mjs, a task-capable upstream: first
# directly, then through the gateway (upstream `auto`), where every one that passes directly
# must pass (baseline test/conformance/baseline-gateway-tasks.yml). The eight runs go two at a
# time (CONFORMANCE_PARALLEL), their results printed in this order. Exits 0 when every run
# passes against its baseline, 1 otherwise, 2 when something could not be set up.
#
#   scripts/conformance-2026-through-gateway.sh          (after `npm run build`)
#
# Environment: CONFORMANCE_2026_DIR, the harness folder (default ../shared/conformance-2026
# next to the repository, else /work/shared/conformance-2026); the rest as
# scripts/conformance-through-gateway.sh.

set -uo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${CONFORMANCE_2026_DIR:-$REPO/../shared/conformance-2026}"
[ -d "$DIR" ] || DIR=/work/shared/conformance-2026
[ -f "$DIR/prepare.sh" ] || {
  echo "conformance-2026: no harness at $DIR (set CONFORMANCE_2026_DIR)" >&2
  exit 2
}

# Every run below starts its own reference server (or tasks upstream) and gateway on ports
# of their own, so they run CONFORMANCE_PARALLEL (default 2) at a time; each one's output is
# kept and printed in order, as when they ran one after another. The harness is prepared once
# here: a run given the prepared copy finds it ready and copies nothing (prepare.sh).
HARNESS="$(bash "$DIR/prepare.sh")" || {
  echo "conformance-2026: prepare.sh failed" >&2
  exit 2
}
PARALLEL="${CONFORMANCE_PARALLEL:-2}"
OUT="$(mktemp -d "${TMPDIR:-/tmp}/conformance-2026.XXXXXX")"
trap 'rm -rf "$OUT"' EXIT

TASK_SCENARIOS=()
for s in lifecycle capability-negotiation wire-fields request-state-removal mrtr-input \
  request-headers dispatch-and-envelope status-notifications required-task-error mrtr-composition; do
  TASK_SCENARIOS+=(--scenario "tasks-$s")
done
TASKS_UPSTREAM="$REPO/test/support/tasks-upstream.mjs"

# One requirement set through the gateway, for one upstream protocol setting.
run_set() {
  CONFORMANCE_DIR="$HARNESS" CONFORMANCE_UPSTREAM_PROTOCOL="$1" \
    CONFORMANCE_BASELINE="$REPO/test/conformance/baseline-gateway-2026-$1.yml" \
    bash "$REPO/scripts/conformance-through-gateway.sh" --requirements "$2"
}

# The Tasks extension's scenarios (SEP-2663) against the task-capable upstream directly.
run_tasks_direct() {
  local log pid url status
  log="$(mktemp "${TMPDIR:-/tmp}/tasks-upstream.XXXXXX")"
  PORT=0 node "$TASKS_UPSTREAM" >"$log" 2>&1 &
  pid=$!
  url=""
  for _ in $(seq 1 100); do
    url="$(sed -n 's/^.* listening on \(http[^ ]*\).*/\1/p' "$log" | head -n 1)"
    [ -n "$url" ] && break
    sleep 0.1
  done
  if [ -z "$url" ]; then
    kill "$pid" 2>/dev/null
    echo "conformance-2026: the tasks upstream did not start: $(cat "$log")"
    rm -f "$log"
    return 2
  fi
  bash "$HARNESS/run-conformance.sh" "$url" "${TASK_SCENARIOS[@]}"
  status=$?
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  rm -f "$log"
  return "$status"
}

# The same scenarios through the gateway (upstream `auto`) in front of it.
run_tasks_gateway() {
  CONFORMANCE_DIR="$HARNESS" CONFORMANCE_UPSTREAM_PROTOCOL=auto \
    CONFORMANCE_UPSTREAM_SERVER="$TASKS_UPSTREAM" \
    CONFORMANCE_BASELINE="$REPO/test/conformance/baseline-gateway-tasks.yml" \
    bash "$REPO/scripts/conformance-through-gateway.sh" "${TASK_SCENARIOS[@]}"
}

# name|title|command, in the order the results are printed
RUNS=()
for setting in auto 2026-07-28 2025-11-25; do
  for rev in 2025-11-25 2026-07-28; do
    RUNS+=("$setting/$rev|upstream protocol $setting, requirements $rev|run_set $setting $rev")
  done
done
RUNS+=("tasks-direct|tasks-* against the task-capable upstream directly|run_tasks_direct")
RUNS+=("tasks-gateway|tasks-* through the gateway in front of the task-capable upstream|run_tasks_gateway")

i=0
for run in "${RUNS[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$PARALLEL" ]; do wait -n; done
  (
    ${run##*|} >"$OUT/$i.log" 2>&1
    echo $? >"$OUT/$i.status"
  ) &
  i=$((i + 1))
done
wait

failed=()
summary=()
i=0
for run in "${RUNS[@]}"; do
  name="${run%%|*}"
  title="${run#*|}"
  title="${title%%|*}"
  out="$(cat "$OUT/$i.log")"
  status="$(cat "$OUT/$i.status" 2>/dev/null || echo 2)"
  echo "=== conformance-2026: $title"
  # the suite's table and verdict, without the gateway's JSON log lines
  grep -v '^{' <<<"$out" | sed -n '/^scenario /,$p'
  line="$(grep -E '^[0-9]+ passed, [0-9]+ failed' <<<"$out" | tail -n 1)"
  case "$name" in
    tasks-direct) summary+=("tasks upstream directly: ${line:-no result} (exit $status)") ;;
    tasks-gateway) summary+=("tasks upstream through the gateway: ${line:-no result} (exit $status)") ;;
    *) summary+=("${name%%/*} / ${name#*/}: ${line:-no result} (exit $status)") ;;
  esac
  [ "$status" -eq 0 ] || failed+=("$name")
  [ "$status" -le 1 ] || {
    echo "$out" | tail -n 40 >&2
    exit 2
  }
  i=$((i + 1))
done

echo "=== conformance-2026 through the gateway"
printf '  %s\n' "${summary[@]}"
if [ "${#failed[@]}" -gt 0 ]; then
  echo "conformance-2026: unexpected failures in ${failed[*]}" >&2
  exit 1
fi
