#!/usr/bin/env bash
# Added cost of admission by rate limits: one Sluice (1 worker, core 1) in front of
# sluice-mock-upstream (core 0), with limits off, with the local limiter, and with Redis
# (redis-server on core 0), in rounds that cycle through the three. Every request passes
# key rpm+tpm, group rpm+tpm+concurrency, model tpm and instance slots, set high enough that
# nothing is refused: the figures are the cost of the checks. wrk with bench/lua/chat.lua:
# c=1 for latency (p50/p99), c=64 for throughput. Raw output in bench/out/limits-<run>/.
#
#   bench/limits.sh [--duration S] [--rounds N] [--build DIR] [--results FILE | --no-results]
#
# Writes (or replaces) the "Admission by rate limits" section of bench/RESULTS.md; the full
# bench run (bench/run.sh) keeps that section when it rewrites the file.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=10
ROUNDS=3
BUILD=build/release
RESULTS=bench/RESULTS.md
while (($#)); do
  case $1 in
    --duration) DURATION=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --results) RESULTS=$2; shift 2 ;;
    --no-results) RESULTS=""; shift ;;
    *) echo "usage: $0 [--duration S] [--rounds N] [--build DIR] [--results FILE | --no-results]" >&2; exit 2 ;;
  esac
done
RUN=$(date -u +%Y%m%dT%H%M%SZ)
OUT=bench/out/limits-$RUN
mkdir -p "$OUT"
COMMANDS=$OUT/commands.txt
log() { echo "[limits-bench] $*" >&2; }
source bench/procs.sh

PIN_LOAD=(taskset -c 0)
PIN_GW=(taskset -c 1)
KEY=sk-bench-limits-000000000001

start_bg MOCK_PID "$OUT/mock" "${PIN_LOAD[@]}" "$BUILD/tools/mock_upstream/sluice-mock-upstream" \
  --listen 127.0.0.1:0
MOCK_PORT=$(wait_listening_json "$OUT/mock.out" 10 "$MOCK_PID")
REDIS_PORT=$(free_port)
start_bg REDIS_PID "$OUT/redis" "${PIN_LOAD[@]}" redis-server --bind 127.0.0.1 \
  --port "$REDIS_PORT" --save "" --appendonly no
wait_tcp "$REDIS_PORT" 10

config() {  # config MODE -> YAML
  local mode=$1
  cat <<YAML
version: 1
listen: 127.0.0.1:0
server: { workers: 1 }
access_log: { enabled: false }
providers:
  - { id: up, adapter: openai, base_url: "http://127.0.0.1:$MOCK_PORT/v1", api_key: sk-up }
routes:
  - { alias: bench-model, provider: up, model: mock-model }
keys:
  - { name: bench, group: benchers, key: $KEY }
YAML
  if [[ $mode != off ]]; then
    cat <<YAML
limits:
  key: { rpm: 1000000000, tpm: 1000000000000 }
  groups: { benchers: { rpm: 1000000000, tpm: 1000000000000, concurrency: 100000 } }
  models: { bench-model: { tpm: 1000000000000 } }
  instance: { concurrency: 100000 }
YAML
  fi
  if [[ $mode == redis ]]; then
    echo "state: { redis: { url: \"redis://127.0.0.1:$REDIS_PORT\", timeout_ms: 50, key_prefix: \"b$RUN:\" } }"
  fi
}

measure() {  # measure MODE ROUND
  local mode=$1 round=$2
  config "$mode" >"$OUT/$mode.yaml"
  start_bg GW_PID "$OUT/gw-$mode-$round" "${PIN_GW[@]}" "$BUILD/sluice" serve --config "$OUT/$mode.yaml"
  local port
  port=$(wait_listening_json "$OUT/gw-$mode-$round.out" 10 "$GW_PID")
  local url=http://127.0.0.1:$port
  export BENCH_HEADERS="Authorization: Bearer $KEY"
  "${PIN_LOAD[@]}" wrk -t1 -c8 -d2s -s bench/lua/chat.lua "$url" >/dev/null  # warm-up
  for c in 1 64; do
    local line
    line=$("${PIN_LOAD[@]}" wrk -t1 -c"$c" -d"${DURATION}s" -s bench/lua/chat.lua "$url" |
      sed -n 's/^BENCH_JSON //p')
    echo "{\"mode\":\"$mode\",\"round\":$round,\"c\":$c,\"result\":$line}" >>"$OUT/results.jsonl"
    log "$mode round $round c=$c: $line"
  done
  stop_pid "$GW_PID" sluice
}

for ((r = 1; r <= ROUNDS; r++)); do
  for mode in off local redis; do
    measure "$mode" "$r"
  done
done

python3 - "$OUT/results.jsonl" "$RESULTS" "$RUN" "$DURATION" "$ROUNDS" <<'PY'
import json, re, statistics, sys
jsonl, results_file, run, duration, rounds = sys.argv[1:6]
rows = [json.loads(l) for l in open(jsonl)]
def med(mode, c, field):
    return statistics.median(r["result"][field] for r in rows if r["mode"] == mode and r["c"] == c)
base = {f: med("off", 1, f) for f in ("p50_us", "p99_us")}
base_rps = med("off", 64, "rps")
table = ["| limits | c=1 p50 | c=1 p99 | added p50 | added p99 | c=64 req/s | vs off | non-2xx |",
         "|---|---:|---:|---:|---:|---:|---:|---:|"]
for mode in ("off", "local", "redis"):
    p50, p99, rps = med(mode, 1, "p50_us"), med(mode, 1, "p99_us"), med(mode, 64, "rps")
    bad = sum(r["result"]["non2xx"] for r in rows if r["mode"] == mode)
    table.append(f"| {mode} | {p50} us | {p99} us | {p50 - base['p50_us']:+} us | "
                 f"{p99 - base['p99_us']:+} us | {rps:,.0f} | {rps / base_rps:.3f} | {bad} |")
print("\n".join(table))
if results_file:
    section = "\n".join([
        "## Admission by rate limits",
        "",
        f"Written by `bench/limits.sh` (run {run}; {rounds} rounds of {duration} s per cell, medians). "
        "One Sluice worker on core 1 in front of `sluice-mock-upstream` on core 0; every request "
        "passes key rpm+tpm, group rpm+tpm+concurrency, model tpm and instance concurrency, set "
        "high enough that nothing is refused, so the figures are the cost of the checks. "
        "`local` = the in-process limiter; `redis` = one `EVALSHA` per request to a "
        "`redis-server` that shares core 0 with the load generator and the upstream (so its c=64 "
        "figure includes Redis competing with the load side for that core). Added = against "
        "`off` in the same run.",
        "",
        *table,
        "",
    ])
    try:
        text = open(results_file).read()
    except OSError:
        text = ""
    pattern = re.compile(r"^## Admission by rate limits\n.*?(?=^## |\Z)", flags=re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: section + "\n", text)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    open(results_file, "w").write(text)
PY
