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
BENCH_NAME=limits
DURATION=10
source bench/variants.sh "$@"
KEY=sk-bench-limits-000000000001

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

run_variants off local redis

bench/variants_report.py "$OUT/results.jsonl" "$RESULTS" "Admission by rate limits" off,local,redis \
  "Written by \`bench/limits.sh\` (run $RUN; $ROUNDS rounds of $DURATION s per cell, medians). \
One Sluice worker on core 1 in front of \`sluice-mock-upstream\` on core 0; every request \
passes key rpm+tpm, group rpm+tpm+concurrency, model tpm and instance concurrency, set \
high enough that nothing is refused, so the figures are the cost of the checks. \
\`local\` = the in-process limiter; \`redis\` = one \`EVALSHA\` per request to a \
\`redis-server\` that shares core 0 with the load generator and the upstream (so its c=64 \
figure includes Redis competing with the load side for that core). Added = against \
\`off\` in the same run."
