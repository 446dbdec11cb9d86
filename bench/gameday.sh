#!/usr/bin/env bash
# Game day: a provider misbehaves in phases under steady load, and we watch what each gateway
# makes of it. Sluice and Portkey each get a fallback from a "primary" sluice-mock-upstream to
# a healthy "secondary" one; while an open-loop client sends a fixed request rate through the
# gateway, the primary is restarted on the same port with different default faults:
#
#   healthy (warm-up and baseline) -> 429 (Retry-After: 1) -> 503 -> stall (no answer) -> heal
#
# Per gateway and phase the report gives client requests, upstream attempts (each mock's
# /_mock/stats requests_total: the primary is a new process each phase, the secondary's count is
# read at each boundary), amplification = attempts / client requests, client-visible error
# rate, latency against the healthy phase, and the time to recover after the heal. Output:
# bench/out/gameday-<run>/GAMEDAY.md (+ raw CSVs); a full run (not --quick) also replaces the
# "Game day" section of bench/RESULTS.md.
#
#   bench/gameday.sh            full run: 30 s healthy, 60 s per fault phase, 60 s heal
#                               (about 5 minutes per gateway)
#   bench/gameday.sh --quick    10 s per phase (about 1 minute per gateway)
#
# Options:
#   --healthy-s N --429-s N --503-s N --stall-s N --heal-s N   phase lengths in seconds
#   --rate N                requests per second sent by the clients (default 100)
#   --upstream-latency-ms N latency of every mock answer (default 20)
#   --first-byte-ms N       gateway first-byte timeout per attempt (default 1000); Portkey's
#                           request_timeout gets the same value
#   --per-target-attempts N attempts at one target before moving on (default 1); Portkey
#                           gets retry.attempts N-1 per target
#   --budget-ratio X        Sluice retry budget_ratio (default 0.1, Sluice's default)
#   --open-ms N             Sluice circuit breaker open_ms (default 15000, Sluice's default;
#                           5000 with --quick)
#   --client-timeout-s N    the clients give up after this (default 15)
#   --warm-s N              unmeasured warm traffic before the healthy phase (default 5)
#   --gateways "A B"        which gateways, in order (default "sluice sluice-budget1 portkey"):
#                           sluice = the config below with --budget-ratio; sluice-budget1 = the
#                           same with budget_ratio 1 (every failed first attempt may fail over);
#                           portkey = the equivalent Portkey config
#   --no-portkey            leave Portkey out
#   --results FILE          where the Game day section goes (default bench/RESULTS.md for a
#                           full run; nothing for --quick)
#
# CPU placement as in bench/run.sh: clients and mocks on CPU 0, the gateway under test on
# CPU 1. Binaries from build/release (built with -j2 only when missing).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH="$ROOT/bench"
BUILD="$ROOT/build/release"

MODE=full
HEALTHY_S=30; S429=60; S503=60; STALL_S=60; HEAL_S=60
RATE=100
UP_LATENCY_MS=20
FIRST_BYTE_MS=1000
PER_TARGET=1
BUDGET_RATIO=0.1
OPEN_MS=""
CLIENT_TIMEOUT_S=15
WARM_S=5
GATEWAYS="sluice sluice-budget1 portkey"
RESULTS_FILE=""
declare -A SET=()
NO_PORTKEY=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) MODE=quick ;;
    --healthy-s) HEALTHY_S=$2; SET[healthy]=1; shift ;;
    --429-s) S429=$2; SET[429]=1; shift ;;
    --503-s) S503=$2; SET[503]=1; shift ;;
    --stall-s) STALL_S=$2; SET[stall]=1; shift ;;
    --heal-s) HEAL_S=$2; SET[heal]=1; shift ;;
    --rate) RATE=$2; shift ;;
    --upstream-latency-ms) UP_LATENCY_MS=$2; shift ;;
    --first-byte-ms) FIRST_BYTE_MS=$2; shift ;;
    --per-target-attempts) PER_TARGET=$2; shift ;;
    --budget-ratio) BUDGET_RATIO=$2; shift ;;
    --open-ms) OPEN_MS=$2; shift ;;
    --client-timeout-s) CLIENT_TIMEOUT_S=$2; shift ;;
    --warm-s) WARM_S=$2; shift ;;
    --gateways) GATEWAYS=$2; shift ;;
    --no-portkey) NO_PORTKEY=1 ;;
    --results) RESULTS_FILE=$2; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "unknown option: $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
if [[ $MODE == quick ]]; then
  [[ -z ${SET[healthy]:-} ]] && HEALTHY_S=10
  [[ -z ${SET[429]:-} ]] && S429=10
  [[ -z ${SET[503]:-} ]] && S503=10
  [[ -z ${SET[stall]:-} ]] && STALL_S=10
  [[ -z ${SET[heal]:-} ]] && HEAL_S=10
fi
# Sluice's default open_ms (15 s) is longer than a quick phase: the breaker opened by the 503s
# would cover the whole stall phase and the start of the heal. Quick runs scale it down.
if [[ -z $OPEN_MS ]]; then
  if [[ $MODE == quick ]]; then OPEN_MS=5000; else OPEN_MS=15000; fi
fi
[[ $NO_PORTKEY == 1 ]] && GATEWAYS=${GATEWAYS//portkey/}
[[ -z $RESULTS_FILE && $MODE == full ]] && RESULTS_FILE="$BENCH/RESULTS.md"

# Phase name, seconds, primary mock flags.
PHASES=(healthy 429 503 stall heal)
declare -A PHASE_S=([healthy]=$HEALTHY_S [429]=$S429 [503]=$S503 [stall]=$STALL_S [heal]=$HEAL_S)
declare -A PHASE_FLAGS=(
  [healthy]=""
  [429]="--status 429 --retry-after 1"
  [503]="--status 503"
  [stall]="--first-byte-ms 3600000"
  [heal]=""
)
TOTAL_S=0
for ph in "${PHASES[@]}"; do TOTAL_S=$((TOTAL_S + PHASE_S[$ph])); done

SLUICE_KEY="sk-sluice-gameday-key-000000"
RUN_ID="gameday-$(date -u +%Y%m%d-%H%M%S)"
OUT="$BENCH/out/$RUN_ID"
mkdir -p "$OUT/raw"
ln -sfn "$RUN_ID" "$BENCH/out/gameday-latest"
COMMANDS="$OUT/commands.txt"
PHASES_CSV="$OUT/phases.csv"
: >"$COMMANDS"
echo "gateway,phase,start_ms,end_ms,primary_requests,secondary_requests" >"$PHASES_CSV"

log() { printf '[gameday %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# ---------------------------------------------------------------------------------------
# Process bookkeeping (start_bg, stop_pid, cleanup on exit, ...): bench/procs.sh.
source "$BENCH/procs.sh"
now_ms() { date +%s%3N; }

# ---------------------------------------------------------------------------------------
# Prerequisites.
SLUICE="$BUILD/sluice"
MOCK="$BUILD/tools/mock_upstream/sluice-mock-upstream"
if [[ ! -x $SLUICE || ! -x $MOCK ]]; then
  log "building sluice and sluice-mock-upstream in build/release (-j2)"
  (cd "$ROOT" && { [[ -f $BUILD/build.ninja ]] || cmake --preset release >/dev/null; } &&
    cmake --build build/release -j2 --target sluice sluice-mock-upstream) >"$OUT/build.log" 2>&1 ||
    { log "build failed (see $OUT/build.log)"; exit 1; }
fi
command -v node >/dev/null || { log "node is required (the load generator is bench/gameday_load.mjs)"; exit 1; }
command -v curl >/dev/null || { log "curl is required"; exit 1; }
PORTKEY_JS="$BENCH/portkey/node_modules/@portkey-ai/gateway/build/start-server.js"
if [[ " $GATEWAYS " == *" portkey "* ]]; then
  if [[ ! -d $BENCH/portkey/node_modules/@portkey-ai/gateway ||
        $BENCH/portkey/package-lock.json -nt $BENCH/portkey/node_modules/.package-lock.json ]]; then
    log "npm ci in bench/portkey"
    (cd "$BENCH/portkey" && npm ci --no-audit --no-fund) >"$OUT/npm.log" 2>&1 ||
      { log "npm ci failed (see $OUT/npm.log): Portkey left out"; GATEWAYS=${GATEWAYS//portkey/}; }
  fi
fi

if [[ $(nproc) -ge 2 ]]; then
  PIN_LOAD=(taskset -c 0); PIN_GW=(taskset -c 1); PINNING="clients and mocks on CPU 0, gateway on CPU 1"
else
  PIN_LOAD=(); PIN_GW=(); PINNING="none (fewer than 2 CPUs)"
fi

BODY="$OUT/body.json"
printf '%s' '{"model":"gameday","messages":[{"role":"system","content":"You are a terse assistant."},{"role":"user","content":"Say hello in five words."}],"max_tokens":16}' >"$BODY"

PRIMARY_PORT=$(free_port)
SECONDARY_PORT=$(free_port)

# ---------------------------------------------------------------------------------------
# Mocks. The secondary runs all along; the primary is restarted for each phase.
PRIMARY_PID=""; SECONDARY_PID=""
start_primary() { # PHASE TAG
  local ph=$1 tag=$2
  # shellcheck disable=SC2206
  local flags=(${PHASE_FLAGS[$ph]})
  [[ -n $PRIMARY_PID ]] && stop_pid "$PRIMARY_PID"
  PRIMARY_PID=""
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    start_bg PRIMARY_PID "$OUT/raw/primary-$tag" "${PIN_LOAD[@]}" "$MOCK" --listen "127.0.0.1:$PRIMARY_PORT" \
      --threads 1 --latency-ms "$UP_LATENCY_MS" "${flags[@]}"
    wait_listening_json "$OUT/raw/primary-$tag.out" 5 "$PRIMARY_PID" >/dev/null && return 0
    stop_pid "$PRIMARY_PID"; PRIMARY_PID=""
    sleep 0.2  # the port may still be held for a moment
  done
  log "primary mock did not start for phase $ph (see $OUT/raw/primary-$tag.err)"
  return 1
}
mock_total() { # PORT -> requests_total (or -1)
  curl -s --max-time 2 "http://127.0.0.1:$1/_mock/stats" |
    python3 -c 'import json,sys
try: print(json.load(sys.stdin)["requests_total"])
except Exception: print(-1)'
}
mock_reset() { curl -s --max-time 2 -X POST "http://127.0.0.1:$1/_mock/reset" >/dev/null; }

start_bg SECONDARY_PID "$OUT/raw/secondary" "${PIN_LOAD[@]}" "$MOCK" --listen "127.0.0.1:$SECONDARY_PORT" \
  --threads 1 --latency-ms "$UP_LATENCY_MS"
wait_listening_json "$OUT/raw/secondary.out" 10 "$SECONDARY_PID" >/dev/null ||
  { log "secondary mock did not start: $(cat "$OUT/raw/secondary.err")"; exit 1; }

# ---------------------------------------------------------------------------------------
# Gateways.
ON_STATUS="408, 429, 500, 502, 503, 504"
write_sluice_config() { # FILE BUDGET_RATIO
  local f=$1 budget=$2
  cat >"$f" <<EOF
# Written by bench/gameday.sh.
version: 1
listen: 127.0.0.1:0
server: { workers: 1, max_connections: 20000 }
access_log: { enabled: true, path: $OUT/access-$(basename "$f" .yaml).log }
providers:
  - id: primary
    adapter: openai
    base_url: http://127.0.0.1:$PRIMARY_PORT/v1
    api_key: sk-upstream-test-key
    pool: { max_connections: 4096, acquire_timeout_ms: 1000 }
    timeout: { connect_ms: 500, first_byte_ms: $FIRST_BYTE_MS, total_ms: 10000 }
  - id: secondary
    adapter: openai
    base_url: http://127.0.0.1:$SECONDARY_PORT/v1
    api_key: sk-upstream-test-key
    pool: { max_connections: 4096, acquire_timeout_ms: 1000 }
    timeout: { connect_ms: 500, first_byte_ms: $FIRST_BYTE_MS, total_ms: 10000 }
routing:
  retry:
    per_target_attempts: $PER_TARGET
    backoff_base_ms: 50
    backoff_max_ms: 500
    retry_after_max_ms: 500
    budget_ratio: $budget
    budget_burst: 10
  circuit_breaker: { enabled: true, error_rate: 0.5, min_requests: 20, window_ms: 10000, open_ms: $OPEN_MS }
routes:
  - alias: gameday
    policy:
      fallback:
        on_status: [$ON_STATUS]
        targets:
          - { provider: primary, model: gpt-4o-mini }
          - { provider: secondary, model: gpt-4o-mini }
keys:
  - name: gameday
    key: $SLUICE_KEY
EOF
}

portkey_config() {
  local retry=""
  [[ $PER_TARGET -gt 1 ]] && retry=",\"retry\":{\"attempts\":$((PER_TARGET - 1)),\"on_status_codes\":[$ON_STATUS]}"
  local t1="{\"provider\":\"openai\",\"custom_host\":\"http://127.0.0.1:$PRIMARY_PORT/v1\",\"api_key\":\"sk-upstream-test-key\",\"request_timeout\":$FIRST_BYTE_MS$retry}"
  local t2="{\"provider\":\"openai\",\"custom_host\":\"http://127.0.0.1:$SECONDARY_PORT/v1\",\"api_key\":\"sk-upstream-test-key\",\"request_timeout\":$FIRST_BYTE_MS$retry}"
  printf '{"strategy":{"mode":"fallback","on_status_codes":[%s]},"targets":[%s,%s]}' "${ON_STATUS// /}" "$t1" "$t2"
}

GW_PID=""; GW_PORT=""; GW_HEADER=""
start_gateway() { # NAME
  case $1 in
    sluice|sluice-budget1)
      local budget=$BUDGET_RATIO
      [[ $1 == sluice-budget1 ]] && budget=1
      write_sluice_config "$OUT/$1.yaml" "$budget"
      start_bg GW_PID "$OUT/raw/$1" "${PIN_GW[@]}" "$SLUICE" serve --config "$OUT/$1.yaml"
      GW_PORT=$(wait_listening_json "$OUT/raw/$1.out" 15 "$GW_PID") ||
        { log "$1 did not start: $(tail -c 400 "$OUT/raw/$1.err")"; return 1; }
      GW_HEADER="Authorization: Bearer $SLUICE_KEY"
      ;;
    portkey)
      GW_PORT=$(free_port)
      start_bg GW_PID "$OUT/raw/portkey" env NODE_ENV=production "${PIN_GW[@]}" node "$PORTKEY_JS" --port="$GW_PORT" --headless
      wait_tcp "$GW_PORT" 30 || { log "Portkey did not start (see $OUT/raw/portkey.err)"; return 1; }
      GW_HEADER="x-portkey-config: $(portkey_config)"
      portkey_config >"$OUT/portkey-config.json"
      ;;
    *) log "unknown gateway $1"; return 1 ;;
  esac
}

check_gateway() { # -> HTTP status of one request
  curl -s -o "$OUT/raw/check-body.txt" -w '%{http_code}' --max-time 10 -X POST \
    "http://127.0.0.1:$GW_PORT/v1/chat/completions" -H 'Content-Type: application/json' \
    -H "$GW_HEADER" --data-binary "@$BODY"
}

# ---------------------------------------------------------------------------------------
# One game day per gateway.
RAN=()
for gw in $GATEWAYS; do
  log "$gw: phases ${PHASES[*]} ($(for ph in "${PHASES[@]}"; do printf '%ss ' "${PHASE_S[$ph]}"; done)), ${RATE} req/s"
  start_primary healthy "$gw-healthy" || exit 1
  start_gateway "$gw" || continue
  code=$(check_gateway)
  if [[ $code != 200 ]]; then
    log "$gw failed its check (HTTP $code: $(head -c 300 "$OUT/raw/check-body.txt"))"
    stop_pid "$GW_PID"; continue
  fi
  # Warm traffic before the clock starts (Portkey's JIT needs a few seconds), then clean
  # counters.
  "${PIN_LOAD[@]}" node "$BENCH/gameday_load.mjs" --url "http://127.0.0.1:$GW_PORT/v1/chat/completions" --body-file "$BODY" \
    --header "$GW_HEADER" --rate "$RATE" --duration-s "$WARM_S" --out "$OUT/raw/warm-$gw.csv" 2>/dev/null
  mock_reset "$PRIMARY_PORT"; mock_reset "$SECONDARY_PORT"

  load_args=(--url "http://127.0.0.1:$GW_PORT/v1/chat/completions" --body-file "$BODY" --header "$GW_HEADER"
    --rate "$RATE" --duration-s "$TOTAL_S" --timeout-ms $((CLIENT_TIMEOUT_S * 1000))
    --out "$OUT/requests-$gw.csv" --poll "primary=http://127.0.0.1:$PRIMARY_PORT/_mock/stats"
    --poll "secondary=http://127.0.0.1:$SECONDARY_PORT/_mock/stats" --poll-out "$OUT/polls-$gw.csv")
  start_bg LOAD_PID "$OUT/raw/load-$gw" "${PIN_LOAD[@]}" node "$BENCH/gameday_load.mjs" "${load_args[@]}"
  t_run=""
  for _ in $(seq 100); do
    t_run=$(sed -n 's/.*"start_ms":\([0-9]*\).*/\1/p' "$OUT/raw/load-$gw.out" 2>/dev/null)
    [[ -n $t_run ]] && break
    sleep 0.1
  done
  [[ -z $t_run ]] && { log "the load generator did not start (see $OUT/raw/load-$gw.err)"; exit 1; }
  # Phases are contiguous, on the load generator's clock: phase i covers
  # [start + sum of the earlier phases, + its own length). At each boundary the old primary's
  # count and the secondary's running count are read, then the primary is restarted; the
  # restart (and the connections it breaks) belongs to the new phase.
  b=$t_run; s_prev=0; prev_ph=""
  for ph in "${PHASES[@]}"; do
    if [[ -n $prev_ph ]]; then
      p=$(mock_total "$PRIMARY_PORT"); s=$(mock_total "$SECONDARY_PORT")
      echo "$gw,$prev_ph,$((b - PHASE_S[$prev_ph] * 1000)),$b,$p,$((s - s_prev))" >>"$PHASES_CSV"
      log "   $prev_ph: primary $p, secondary $((s - s_prev)) upstream requests"
      s_prev=$s
      start_primary "$ph" "$gw-$ph" || exit 1
    fi
    log "$gw: phase $ph (${PHASE_S[$ph]} s)"
    b=$((b + PHASE_S[$ph] * 1000))
    wait_ms=$((b - $(now_ms)))
    [[ $wait_ms -gt 0 ]] && sleep "$(printf '%d.%03d' $((wait_ms / 1000)) $((wait_ms % 1000)))"
    prev_ph=$ph
  done
  p=$(mock_total "$PRIMARY_PORT"); s=$(mock_total "$SECONDARY_PORT")
  echo "$gw,$prev_ph,$((b - PHASE_S[$prev_ph] * 1000)),$b,$p,$((s - s_prev))" >>"$PHASES_CSV"
  log "   $prev_ph: primary $p, secondary $((s - s_prev)) upstream requests"
  # Answers still out when the schedule ends finish by the client timeout at the latest.
  for _ in $(seq $(((CLIENT_TIMEOUT_S + 5) * 10))); do alive "$LOAD_PID" || break; sleep 0.1; done
  stop_pid "$LOAD_PID"
  tail -1 "$OUT/raw/load-$gw.err" >&2
  stop_pid "$GW_PID"
  RAN+=("$gw")
done
stop_pid "$PRIMARY_PID"
stop_pid "$SECONDARY_PID"

[[ ${#RAN[@]} -eq 0 ]] && { log "no gateway ran"; exit 1; }

{
  echo "mode=$MODE"
  echo "rate=$RATE"
  echo "phases=$(for ph in "${PHASES[@]}"; do printf '%s:%s ' "$ph" "${PHASE_S[$ph]}"; done)"
  echo "upstream_latency_ms=$UP_LATENCY_MS"
  echo "first_byte_ms=$FIRST_BYTE_MS"
  echo "per_target_attempts=$PER_TARGET"
  echo "budget_ratio=$BUDGET_RATIO"
  echo "open_ms=$OPEN_MS"
  echo "client_timeout_s=$CLIENT_TIMEOUT_S"
  echo "on_status=$ON_STATUS"
  echo "gateways=${RAN[*]}"
  echo "pinning=$PINNING"
  echo "date=$(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "git=$(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null)$(cd "$ROOT" && git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
  echo "sluice=$("$SLUICE" --version 2>&1 | head -1)"
  echo "portkey=@portkey-ai/gateway $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$BENCH/portkey/node_modules/@portkey-ai/gateway/package.json" 2>/dev/null || echo n/a)"
  echo "node=$(node --version)"
  echo "cpu=$(nproc) x $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)"
} >"$OUT/meta.txt"

args=("$OUT" "$OUT/GAMEDAY.md")
[[ -n $RESULTS_FILE ]] && args+=(--results "$RESULTS_FILE")
python3 "$BENCH/gameday_report.py" "${args[@]}" || exit 1
log "done: $OUT/GAMEDAY.md${RESULTS_FILE:+ and the Game day section of $RESULTS_FILE}"
gzip -f "$OUT"/access-*.log 2>/dev/null || true
