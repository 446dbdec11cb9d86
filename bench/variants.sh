# Shared by the variant benchmarks (bench/limits.sh, bench/metering.sh): one Sluice worker on
# core 1 in front of sluice-mock-upstream on core 0, one gateway config per mode, rounds that
# cycle through the modes so machine noise hits each alike. The caller sets BENCH_NAME and a
# default DURATION, runs `source bench/variants.sh "$@"` (which parses the common options, makes
# OUT=bench/out/BENCH_NAME-RUN and starts the upstream at MOCK_PORT), sets KEY, defines
# `config MODE` (prints the YAML), optionally `after_start MODE PID` (runs once the gateway
# listens) and `after_stop MODE` (once it has exited), and calls run_variants MODE... ->
# $OUT/results.jsonl.
#
#   options: [--duration S] [--rounds N] [--build DIR] [--results FILE | --no-results]
# shellcheck shell=bash
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
OUT=bench/out/$BENCH_NAME-$RUN
mkdir -p "$OUT"
log() { echo "[$BENCH_NAME-bench] $*" >&2; }
source bench/procs.sh

PIN_LOAD=(taskset -c 0)
PIN_GW=(taskset -c 1)
COMMANDS=$OUT/commands.txt

start_bg MOCK_PID "$OUT/mock" "${PIN_LOAD[@]}" "$BUILD/tools/mock_upstream/sluice-mock-upstream" \
  --listen 127.0.0.1:0
MOCK_PORT=$(wait_listening_json "$OUT/mock.out" 10 "$MOCK_PID")

measure_variant() {  # measure_variant MODE ROUND
  local mode=$1 round=$2
  config "$mode" >"$OUT/$mode.yaml"
  start_bg GW_PID "$OUT/gw-$mode-$round" "${PIN_GW[@]}" "$BUILD/sluice" serve --config "$OUT/$mode.yaml"
  local port
  port=$(wait_listening_json "$OUT/gw-$mode-$round.out" 10 "$GW_PID")
  if declare -F after_start >/dev/null; then after_start "$mode" "$GW_PID"; fi
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
  if declare -F after_stop >/dev/null; then after_stop "$mode"; fi
}

run_variants() {  # run_variants MODE...
  local r mode
  for ((r = 1; r <= ROUNDS; r++)); do
    for mode in "$@"; do
      measure_variant "$mode" "$r"
    done
  done
}
