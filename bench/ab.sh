#!/usr/bin/env bash
# Same-sitting A/B of two Sluice binaries: gateway CPU per request, governance on (API key,
# access log, metering into SQLite), over one sluice-mock-upstream. Workloads: a small chat
# request at c=1 and at c=64, and the ~400 KB prompt of bench/run.sh at c=1. Runs alternate
# A, B, A, B... so drift of a shared machine falls on both; each gateway is fresh, one worker,
# pinned to CPU 1 (wrk and the mock on CPU 0). CPU per request (utime + stime of the gateway
# over the run, divided by requests) does not depend on how fast the load generator is, which
# makes it the figure to compare on a noisy 2-core machine.
# Usage: bench/ab.sh BINARY_A BINARY_B [ROUNDS (default 3)] [SECONDS per run (default 4)]
# Prints every run and, per workload, the medians and B/A. Needs wrk (make bench installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
a=$(realpath "$1") b=$(realpath "$2")
rounds=${3:-3} seconds=${4:-4}
mock=build/release/tools/mock_upstream/sluice-mock-upstream
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

wait_port() {  # wait_port LOG: the port of the first {"event":"listening",...,"port":N} line
  local i port
  for i in $(seq 100); do
    port=$(grep -m1 -oE '"event":"listening"[^}]*"port":[0-9]+' "$1" 2>/dev/null | grep -oE '[0-9]+$' || true)
    [[ -n $port ]] && { echo "$port"; return; }
    sleep 0.05
  done
  echo "ab: nothing listening (see $1):" >&2
  cat "$1" >&2
  exit 1
}

taskset -c 0 "$mock" --listen 127.0.0.1:0 >"$work/mock.log" 2>&1 &
pids+=($!)
mock_port=$(wait_port "$work/mock.log")

printf '%s' '{"model":"bench-model","messages":[{"role":"system","content":"You are a terse assistant."},{"role":"user","content":"Say hello in five words."}],"max_tokens":16,"temperature":0}' >"$work/small.json"
python3 bench/large_prompt.py "$work/large.json"

run() {  # run BINARY WORKLOAD CONNECTIONS BODY: prints "us_per_request requests"
  local bin=$1 name=$2 conns=$3 body=$4 dir
  dir=$(mktemp -d -p "$work")
  cat >"$dir/sluice.yaml" <<EOF
version: 1
listen: 127.0.0.1:0
server: { workers: 1 }
access_log: { enabled: true, path: $dir/access.log }
store: { sqlite: $dir/usage.db }
providers:
  - id: upstream
    adapter: openai
    base_url: http://127.0.0.1:$mock_port/v1
    api_key: sk-upstream-ab-key
routes:
  - { alias: bench-model, provider: upstream, model: gpt-4o-mini }
keys:
  - { name: bench, key: sk-sluice-ab-key-0000000000 }
EOF
  taskset -c 1 "$bin" serve --config "$dir/sluice.yaml" >"$dir/gateway.log" 2>&1 &
  local gw=$!
  pids+=("$gw")
  local port
  port=$(wait_port "$dir/gateway.log")
  local t0 t1 out n
  t0=$(awk '{print $14 + $15}' "/proc/$gw/stat")
  out=$(BENCH_BODY_FILE=$body BENCH_HEADERS='Authorization: Bearer sk-sluice-ab-key-0000000000' \
    taskset -c 0 wrk -t1 -c"$conns" -d"${seconds}s" --timeout 10s -s bench/lua/chat.lua \
    "http://127.0.0.1:$port")
  t1=$(awk '{print $14 + $15}' "/proc/$gw/stat")
  kill "$gw"
  wait "$gw" 2>/dev/null || true
  n=$(echo "$out" | grep -oE '[0-9]+ requests in' | grep -oE '^[0-9]+')
  if echo "$out" | grep -q 'Non-2xx'; then
    echo "ab: $name got non-2xx answers from $bin:" >&2
    echo "$out" >&2
    exit 1
  fi
  local hz
  hz=$(getconf CLK_TCK)
  echo "$(((t1 - t0) * 1000000 / hz / n)) $n"
}

declare -A figures=()
workloads=("c1 1 $work/small.json" "c64 64 $work/small.json" "large 1 $work/large.json")
for round in $(seq "$rounds"); do
  for w in "${workloads[@]}"; do
    read -r name conns body <<<"$w"
    for side in A B; do
      bin=$a
      [[ $side == B ]] && bin=$b
      read -r us n < <(run "$bin" "$name" "$conns" "$body")
      echo "round $round $name $side: $us us CPU per request ($n requests)"
      figures[$name.$side]+="$us "
    done
  done
done

echo
echo "A = $a"
echo "B = $b"
for w in "${workloads[@]}"; do
  read -r name _ <<<"$w"
  python3 - "$name" "${figures[$name.A]}" "${figures[$name.B]}" <<'PY'
import statistics, sys
name, a, b = sys.argv[1], [int(x) for x in sys.argv[2].split()], [int(x) for x in sys.argv[3].split()]
ma, mb = statistics.median(a), statistics.median(b)
print(f"{name:6} CPU per request, median: A {ma:g} us, B {mb:g} us, B/A {mb / ma:.2f}  (A {a}, B {b})")
PY
done
