#!/usr/bin/env bash
# Builds one preset and runs every test suite against it: unit (GoogleTest via ctest),
# integration (real binaries, node:test), conformance (official SDKs, node:test) and clients
# (Claude Code, Vercel AI SDK, LangChain, OpenAI Agents SDK through the gateway, node:test).
# Ends with one summary line "N passed, N failed". Usage: scripts/run-tests.sh [preset]
set -uo pipefail
cd "$(dirname "$0")/.."
preset=${1:-release}
jobs=${JOBS:-$(nproc)}

# Each phase's wall time goes into the summary: CI's budget is mostly these.
SECONDS=0
timings=()
phase_done() { timings+=("$1 $((SECONDS / 60)) min $((SECONDS % 60)) s"); SECONDS=0; }

cmake --preset "$preset" >/dev/null || exit 1
cmake --build --preset "$preset" -j "$jobs" || exit 1
phase_done build

export SLUICE_BIN="$PWD/build/$preset/sluice"
export SLUICE_MOCK_BIN="$PWD/build/$preset/tools/mock_upstream/sluice-mock-upstream"
if [[ $preset == tsan ]]; then
  export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
  # GCC 12's TSan runtime cannot place its shadow memory when the kernel randomises mmap with
  # more than 28 bits ("FATAL: ThreadSanitizer: unexpected memory mapping"). The personality
  # set by setarch -R (no ASLR) is inherited by every process the suites start.
  if [[ -z ${SLUICE_TSAN_NO_ASLR:-} ]] && ! "build/$preset/sluice" --version >/dev/null 2>&1 &&
    setarch "$(uname -m)" -R true 2>/dev/null; then
    echo "run-tests: TSan cannot start with this kernel's ASLR; running the suites under setarch -R"
    export SLUICE_TSAN_NO_ASLR=1
    exec setarch "$(uname -m)" -R "$0" "$@"
  fi
fi
if [[ $preset == asan ]]; then
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:halt_on_error=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
fi

# A throwaway PostgreSQL and Redis for every suite (scripts/test-services.sh), stopped however
# this script ends. The store suite fails instead of skipping its PostgreSQL cases.
services_dir=$(scripts/test-services.sh start) || exit 1
trap 'scripts/test-services.sh stop "$services_dir"' EXIT
trap 'exit 130' INT TERM
# shellcheck disable=SC1091
source "$services_dir/env"
export SLUICE_REQUIRE_POSTGRES=1

log_dir="build/$preset/test-logs"
mkdir -p "$log_dir"
total_pass=0
total_fail=0
summary=()

# ctest: count from its own summary line.
ctest --test-dir "build/$preset" --output-on-failure --no-tests=error -j "$jobs" >"$log_dir/unit.log" 2>&1
unit_rc=$?
tail -n 25 "$log_dir/unit.log"
unit_total=$(grep -oE 'tests failed out of [0-9]+' "$log_dir/unit.log" | grep -oE '[0-9]+$' || echo 0)
unit_fail=$(grep -oE '[0-9]+ tests failed out of' "$log_dir/unit.log" | grep -oE '^[0-9]+' || echo 0)
if [[ $unit_rc -ne 0 && $unit_fail == 0 ]]; then unit_fail=1; fi
total_pass=$((total_pass + unit_total - unit_fail))
total_fail=$((total_fail + unit_fail))
summary+=("unit:        $((unit_total - unit_fail)) passed, $unit_fail failed")
phase_done unit

run_node_suite() {
  local name=$1 dir=$2
  local files
  files=$(ls "$dir"/*.test.mjs 2>/dev/null)
  if [[ -z $files ]]; then
    summary+=("$name: no tests")
    return
  fi
  node --test --test-reporter=spec --test-concurrency=1 $files >"$log_dir/$name.log" 2>&1
  local rc=$?
  cat "$log_dir/$name.log" | tail -n 60
  local pass fail
  pass=$(grep -E '^ℹ pass [0-9]+' "$log_dir/$name.log" | grep -oE '[0-9]+' || echo 0)
  fail=$(grep -E '^ℹ fail [0-9]+' "$log_dir/$name.log" | grep -oE '[0-9]+' || echo 0)
  if [[ $rc -ne 0 && $fail == 0 ]]; then fail=1; fi
  total_pass=$((total_pass + pass))
  total_fail=$((total_fail + fail))
  summary+=("$name: $pass passed, $fail failed")
  phase_done "$name"
}
run_node_suite integration tests/integration
# Under ThreadSanitizer the suites that matter are the ones whose requests cross workers and
# background threads (unit, integration); the SDK and agent-CLI suites check wire shapes that
# the release and ASan runs hold, and take the longest under TSan's slowdown.
if [[ $preset == tsan ]]; then
  summary+=("conformance: not run under tsan (release and asan run it)")
  summary+=("clients: not run under tsan (release and asan run it)")
else
  run_node_suite conformance tests/conformance
  run_node_suite clients tests/clients
fi

echo
echo "== test summary ($preset) =="
for line in "${summary[@]}"; do echo "  $line"; done
echo "  wall time: ${timings[*]/%/;}"
echo "$total_pass passed, $total_fail failed"
[[ $total_fail -eq 0 ]]
