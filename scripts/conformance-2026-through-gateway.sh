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
# must pass (baseline test/conformance/baseline-gateway-tasks.yml). Exits 0 when every run passes against its baseline, 1 otherwise, 2 when
# something could not be set up.
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

failed=()
summary=()
for setting in auto 2026-07-28 2025-11-25; do
  for rev in 2025-11-25 2026-07-28; do
    echo "=== conformance-2026: upstream protocol $setting, requirements $rev"
    out="$(CONFORMANCE_DIR="$DIR" CONFORMANCE_UPSTREAM_PROTOCOL="$setting" \
      CONFORMANCE_BASELINE="$REPO/test/conformance/baseline-gateway-2026-$setting.yml" \
      bash "$REPO/scripts/conformance-through-gateway.sh" --requirements "$rev" 2>&1)"
    status=$?
    # the suite's table and verdict, without the gateway's JSON log lines
    grep -v '^{' <<<"$out" | sed -n '/^scenario /,$p'
    line="$(grep -E '^[0-9]+ passed, [0-9]+ failed' <<<"$out" | tail -n 1)"
    summary+=("$setting / $rev: ${line:-no result} (exit $status)")
    [ "$status" -eq 0 ] || failed+=("$setting/$rev")
    [ "$status" -le 1 ] || {
      echo "$out" | tail -n 40 >&2
      exit 2
    }
  done
done
# --- the Tasks extension (SEP-2663): directly, then through the gateway -------------------
TASK_SCENARIOS=()
for s in lifecycle capability-negotiation wire-fields request-state-removal mrtr-input \
  request-headers dispatch-and-envelope status-notifications required-task-error mrtr-composition; do
  TASK_SCENARIOS+=(--scenario "tasks-$s")
done
TASKS_UPSTREAM="$REPO/test/support/tasks-upstream.mjs"
HARNESS="$(bash "$DIR/prepare.sh")" || {
  echo "conformance-2026: prepare.sh failed" >&2
  exit 2
}
echo "=== conformance-2026: tasks-* against the task-capable upstream directly"
log="$(mktemp "${TMPDIR:-/tmp}/tasks-upstream.XXXXXX")"
PORT=0 node "$TASKS_UPSTREAM" >"$log" 2>&1 &
tasks_pid=$!
url=""
for _ in $(seq 1 100); do
  url="$(sed -n 's/^.* listening on \(http[^ ]*\).*/\1/p' "$log" | head -n 1)"
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || {
  kill "$tasks_pid" 2>/dev/null
  echo "conformance-2026: the tasks upstream did not start: $(cat "$log")" >&2
  exit 2
}
out="$(bash "$HARNESS/run-conformance.sh" "$url" "${TASK_SCENARIOS[@]}" 2>&1)"
status=$?
kill "$tasks_pid" 2>/dev/null
wait "$tasks_pid" 2>/dev/null
sed -n '/^scenario /,$p' <<<"$out"
line="$(grep -E '^[0-9]+ passed, [0-9]+ failed' <<<"$out" | tail -n 1)"
summary+=("tasks upstream directly: ${line:-no result} (exit $status)")
[ "$status" -eq 0 ] || failed+=("tasks-direct")
echo "=== conformance-2026: tasks-* through the gateway in front of the task-capable upstream"
out="$(CONFORMANCE_DIR="$DIR" CONFORMANCE_UPSTREAM_PROTOCOL=auto \
  CONFORMANCE_UPSTREAM_SERVER="$TASKS_UPSTREAM" \
  CONFORMANCE_BASELINE="$REPO/test/conformance/baseline-gateway-tasks.yml" \
  bash "$REPO/scripts/conformance-through-gateway.sh" "${TASK_SCENARIOS[@]}" 2>&1)"
status=$?
grep -v '^{' <<<"$out" | sed -n '/^scenario /,$p'
line="$(grep -E '^[0-9]+ passed, [0-9]+ failed' <<<"$out" | tail -n 1)"
summary+=("tasks upstream through the gateway: ${line:-no result} (exit $status)")
[ "$status" -eq 0 ] || failed+=("tasks-gateway")
[ "$status" -le 1 ] || {
  echo "$out" | tail -n 40 >&2
  exit 2
}

echo "=== conformance-2026 through the gateway"
printf '  %s\n' "${summary[@]}"
if [ "${#failed[@]}" -gt 0 ]; then
  echo "conformance-2026: unexpected failures in ${failed[*]}" >&2
  exit 1
fi
