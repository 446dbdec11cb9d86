#!/usr/bin/env bash
# What metering and the access log cost, one at a time: one Sluice (1 worker, core 1, its
# usage writer thread on the same core) in front of sluice-mock-upstream (core 0), in rounds that
# cycle through five configs, all with API-key auth:
#   off          no access log, no store
#   log          the access log to a file
#   meter        a priced usage record per request through the usage sink into SQLite (WAL)
#   meter-apart  meter with the usage-writer thread moved to core 0: the worker's own share
#   on           log and meter (what bench/run.sh calls "Sluice on")
# wrk with bench/lua/chat.lua: c=1 for latency (p50/p99), c=64 for throughput. Raw output in
# bench/out/metering-<run>/.
#
#   bench/metering.sh [--duration S] [--rounds N] [--build DIR] [--results FILE | --no-results]
#
# Writes (or replaces) the "Metering and access log" section of bench/RESULTS.md; the full bench
# run (bench/run.sh) keeps that section when it rewrites the file.
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH_NAME=metering
DURATION=8
source bench/variants.sh "$@"
KEY=sk-bench-metering-0000000001

config() {  # config MODE -> YAML
  local mode=$1
  cat <<YAML
version: 1
listen: 127.0.0.1:0
server: { workers: 1 }
providers:
  - { id: up, adapter: openai, base_url: "http://127.0.0.1:$MOCK_PORT/v1", api_key: sk-up }
routes:
  - { alias: bench-model, provider: up, model: gpt-4o-mini }
keys:
  - { name: bench, group: benchers, key: $KEY }
YAML
  case $mode in
    log | on) echo "access_log: { enabled: true, path: $OUT/access-$mode.log }" ;;
    *) echo "access_log: { enabled: false }" ;;
  esac
  case $mode in
    # A fresh ledger per gateway start: every round writes into an empty database.
    meter | meter-apart | on) echo "store: { sqlite: $OUT/usage-$mode-$RANDOM.db }" ;;
  esac
}

# meter-apart: the usage writer thread moved off the worker's core, onto the load side's
# core 0, as a deployment with a core to spare for it would run. What is left against `off`
# is the worker's own share of metering (building and queueing the record).
after_start() {  # after_start MODE PID
  [[ $1 == meter-apart ]] || return 0
  local task
  for task in /proc/"$2"/task/*; do
    if [[ $(cat "$task/comm") == usage-writer ]]; then
      taskset -p -c 0 "${task##*/}" >/dev/null
      return 0
    fi
  done
  log "meter-apart: no usage-writer thread in pid $2"
  exit 1
}

# What a gateway wrote is measured, not kept: a 5-round run writes ~1.5 GB of access log and
# ~70 MB of ledger per metered start. BENCH_KEEP_DATA=1 keeps them.
after_stop() {  # after_stop MODE
  [[ ${BENCH_KEEP_DATA:-0} == 1 ]] && return 0
  rm -f "$OUT"/access-"$1".log "$OUT"/usage-"$1"-*.db "$OUT"/usage-"$1"-*.db-* \
    "$OUT"/usage-"$1"-*.db.spool
}

run_variants off log meter meter-apart on

bench/variants_report.py "$OUT/results.jsonl" "$RESULTS" "Metering and access log" off,log,meter,meter-apart,on \
  "Written by \`bench/metering.sh\` (run $RUN; $ROUNDS rounds of $DURATION s per cell, medians). \
One Sluice worker on core 1 in front of \`sluice-mock-upstream\` on core 0, API-key auth in \
every mode. \`log\` = the access log to a file; \`meter\` = a priced usage record per request \
(gpt-4o-mini from the built-in catalogue) through the usage sink into SQLite, whose writer \
thread shares core 1 with the worker; \`meter-apart\` = the same with the writer thread moved \
to core 0 (the worker's own share of metering); \`on\` = both, writer on core 1. Added and \
ratio = against \`off\` in the same run."
