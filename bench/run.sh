#!/usr/bin/env bash
# End-to-end benchmark of Sluice against direct, nginx proxy_pass and Portkey, side by side
# in one run on loopback. Writes bench/RESULTS.md (full run) and raw outputs to bench/out/.
#
#   bench/run.sh            full run (about 20 minutes)
#   bench/run.sh --quick    smoke run: short durations, small stream steps (about 3 minutes)
#
# Other options:
#   --no-build              use the binaries in build/release as they are
#   --no-portkey            skip the Portkey peer
#   --no-streams            skip the streaming tests
#   --no-memory-plateau     skip the slow-paced memory plateau at the largest N
#   --stream-steps "N ..."  concurrent-stream steps (default 1000 2500 5000 10000)
#   --keep-going-streams    do not stop stepping at < 99% stall-free
#   --results FILE          where to write the report (default: bench/RESULTS.md for a
#                           full run, bench/out/<run>/RESULTS.md for --quick)
#   --sluice PATH           the Sluice binary under test (default: build/release/sluice); an
#                           older build measured this way meets the same upstreams, load
#                           generators and peers as the current one (before/after a change)
#
# CPU placement (2 cores): the load generators (wrk, sluice-stream-load) and the upstreams
# (nginx "direct", sluice-mock-upstream) share core 0; the system under test (Sluice, the
# nginx proxy, Portkey) gets core 1 to itself. Each gateway therefore has exactly one core,
# and the ratios between gateways measured in the same run are the figures that matter.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH="$ROOT/bench"
BUILD="$ROOT/build/release"

MODE=full
DO_BUILD=1
DO_PORTKEY=1
DO_STREAMS=1
STREAM_STEPS_OVERRIDE=""
RESULTS_FILE=""
STOP_ON_STALLS=1
NO_MEM=0
SLUICE_OVERRIDE=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) MODE=quick ;;
    --no-build) DO_BUILD=0 ;;
    --no-portkey) DO_PORTKEY=0 ;;
    --no-streams) DO_STREAMS=0 ;;
    --no-memory-plateau) NO_MEM=1 ;;
    --stream-steps) STREAM_STEPS_OVERRIDE="$2"; shift ;;
    --results) RESULTS_FILE="$2"; shift ;;
    --keep-going-streams) STOP_ON_STALLS=0 ;;
    --sluice) SLUICE_OVERRIDE="$2"; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "unknown option: $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

if [[ $MODE == quick ]]; then
  ROUNDS=1; LAT_D=2; TPUT_D=2; TPUT_C=64; SLOW_D=2; SLOW_STEPS="64 256"; LARGE_D=2
  STREAM_D=3; STREAM_RAMP=1; STREAM_STEPS="200 500"; EVT_D=2; MICRO_MIN_TIME=0.05
  MEM_STREAMS=1000; MEM_PACE_MS=200; MEM_EVENTS=16; MEM_RAMP=1; MEM_D=5
else
  # Latency, throughput and large-prompt runs are split in rounds that cycle through the
  # paths, so a burst of noise from other processes on the machine hits every path alike;
  # the report takes the median over rounds.
  ROUNDS=3; LAT_D=5; TPUT_D=5; TPUT_C=64; SLOW_D=8; SLOW_STEPS="64 256 1024 2048"; LARGE_D=5
  STREAM_D=12; STREAM_RAMP=3; STREAM_STEPS="1000 2500 5000 10000"; EVT_D=5; MICRO_MIN_TIME=0.5
  # 10,000 streams paced 20 ms apart is 500k events/s, far beyond what one core running the
  # mock and the load generator can produce; the memory plateau holds the same number of
  # streams open with 500 ms pacing (20k events/s).
  MEM_STREAMS=10000; MEM_PACE_MS=500; MEM_EVENTS=32; MEM_RAMP=10; MEM_D=25
fi
[[ -n $STREAM_STEPS_OVERRIDE ]] && STREAM_STEPS="$STREAM_STEPS_OVERRIDE"
[[ $NO_MEM == 1 ]] && MEM_STREAMS=0
STREAM_EVENTS=64
STREAM_PACE_MS=20
GAP_LIMIT_MS=$((STREAM_PACE_MS * 10))
SLOW_LATENCY_MS=20
SLUICE_KEY="sk-sluice-bench-key-000000"

RUN_ID="$(date -u +%Y%m%d-%H%M%S)"
OUT="$BENCH/out/$RUN_ID"
RAW="$OUT/raw"
mkdir -p "$RAW"
ln -sfn "$RUN_ID" "$BENCH/out/latest"
RESULTS_JSONL="$OUT/results.jsonl"
META_JSONL="$OUT/meta.jsonl"
COMMANDS="$OUT/commands.txt"
: >"$RESULTS_JSONL"; : >"$META_JSONL"; : >"$COMMANDS"
if [[ -z $RESULTS_FILE ]]; then
  if [[ $MODE == full ]]; then RESULTS_FILE="$BENCH/RESULTS.md"; else RESULTS_FILE="$OUT/RESULTS.md"; fi
fi

log() { printf '[bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# ---------------------------------------------------------------------------------------
# Process bookkeeping (start_bg, stop_pid, cleanup on exit, ...): bench/procs.sh.
source "$BENCH/procs.sh"

meta() {
  python3 -c 'import json,sys; print(json.dumps({"k": sys.argv[1], "v": sys.argv[2]}))' "$1" "$2" >>"$META_JSONL"
}
note() { log "NOTE: $*"; meta note "$*"; }


# cpu_ticks PID: utime+stime (clock ticks) of PID plus its child processes (nginx workers).
cpu_ticks() {
  local pid=$1 total=0 p
  [[ -z $pid ]] && { echo 0; return; }
  for p in $pid $(ps -o pid= --ppid "$pid" 2>/dev/null); do
    [[ -r /proc/$p/stat ]] || continue
    local stat rest
    stat=$(cat "/proc/$p/stat" 2>/dev/null) || continue
    rest=${stat##*) }
    # shellcheck disable=SC2086
    set -- $rest
    total=$((total + ${12} + ${13}))
  done
  echo "$total"
}
CLK_TCK=$(getconf CLK_TCK)

# The process whose memory counts for a gateway: nginx's single worker, else the pid itself.
mem_pid() {
  local pid=$1 child
  child=$(ps -o pid= --ppid "$pid" 2>/dev/null | head -1 | tr -d ' ')
  if [[ -n $child && $(cat "/proc/$pid/comm" 2>/dev/null) == nginx ]]; then echo "$child"; else echo "$pid"; fi
}

# Machine-wide count of connections dropped because a listen queue was full (SYN retried
# after 1 s, 3 s, ...: shows up as TTFT in whole seconds).
listen_overflows() {
  awk '/^TcpExt:/ { if (!h) { for (i = 1; i <= NF; i++) n[i] = $i; h = 1 } else { for (i = 1; i <= NF; i++) if (n[i] == "ListenOverflows") print $i } }' /proc/net/netstat 2>/dev/null || echo 0
}

vmrss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo -1; }

# ---------------------------------------------------------------------------------------
# Prerequisites.
ensure_packages() {
  export PATH="$PATH:/usr/sbin:/sbin"
  local missing=()
  command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]] || missing+=(nginx)
  command -v wrk >/dev/null || missing+=(wrk)
  command -v h2load >/dev/null || missing+=(nghttp2-client)
  command -v python3 >/dev/null || missing+=(python3)
  command -v curl >/dev/null || missing+=(curl)
  command -v taskset >/dev/null || missing+=(util-linux)
  if [[ $DO_PORTKEY == 1 ]] && ! command -v node >/dev/null; then missing+=(nodejs npm); fi
  if [[ ${#missing[@]} -gt 0 ]]; then
    log "installing missing Debian packages: ${missing[*]}"
    if [[ $(id -u) == 0 ]]; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >"$OUT/apt.log" 2>&1 ||
        log "apt-get install failed (see $OUT/apt.log)"
    else
      sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >"$OUT/apt.log" 2>&1 ||
        log "apt-get install failed (see $OUT/apt.log)"
    fi
  fi
  export PATH="$PATH:/usr/sbin"
}
ensure_packages
command -v wrk >/dev/null || { log "wrk is required"; exit 1; }
command -v nginx >/dev/null || { log "nginx is required"; exit 1; }

ulimit -n 200000 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
NOFILE=$(ulimit -n)
meta nofile "$NOFILE"

if [[ $(nproc) -ge 2 ]]; then
  PIN_LOAD=(taskset -c 0); PIN_GW=(taskset -c 1)
  meta pinning "load generator + upstreams on CPU 0, gateway under test on CPU 1"
else
  PIN_LOAD=(); PIN_GW=()
  meta pinning "none (fewer than 2 CPUs)"
fi

SLUICE="${SLUICE_OVERRIDE:-$BUILD/sluice}"
meta sluice_binary "$SLUICE"
MOCK="$BUILD/tools/mock_upstream/sluice-mock-upstream"
STREAM_LOAD="$BUILD/bench/sluice-stream-load"

build_all() {
  if [[ $DO_BUILD == 1 ]]; then
    log "building release targets (cmake --preset release; cmake --build build/release -j2)"
    (
      cd "$ROOT" &&
        { [[ -f $BUILD/build.ninja ]] || cmake --preset release >/dev/null; } &&
        cmake --build build/release -j2 --target sluice sluice-mock-upstream
    ) >"$OUT/build.log" 2>&1 || note "release build of sluice / sluice-mock-upstream failed (tail of $OUT/build.log: $(tail -3 "$OUT/build.log" | tr '\n' ' ' | cut -c1-300))"
    (cd "$ROOT" && cmake --build build/release -j2 --target sluice-stream-load) >>"$OUT/build.log" 2>&1 || true
    for src in "$BENCH"/*_bench.cc; do
      name=$(basename "$src" .cc)
      (cd "$ROOT" && cmake --build build/release -j2 --target "$name") >>"$OUT/build.log" 2>&1 ||
        note "$name did not build (Google Benchmark missing or its libraries not compiling)"
    done
  fi
  if [[ ! -x $STREAM_LOAD ]]; then
    # bench/ is only part of the CMake build when Google Benchmark is found; the load
    # generator needs nothing but Boost headers, so build it directly.
    STREAM_LOAD="$OUT/sluice-stream-load"
    log "compiling bench/stream_load.cc directly"
    g++ -O2 -std=c++20 -DBOOST_ASIO_NO_DEPRECATED "$BENCH/stream_load.cc" -o "$STREAM_LOAD" -lpthread \
      >>"$OUT/build.log" 2>&1 || { note "could not compile stream_load.cc"; STREAM_LOAD=""; }
  fi
}
build_all

HAVE_SLUICE=0; HAVE_MOCK=0
if [[ -x $SLUICE ]] && "$SLUICE" --version >/dev/null 2>&1; then HAVE_SLUICE=1; else note "sluice binary missing or not working ($SLUICE): Sluice rows are n/a"; fi
if [[ -x $MOCK ]]; then HAVE_MOCK=1; else note "sluice-mock-upstream missing ($MOCK): 20 ms and streaming rows are n/a"; fi

if [[ $DO_PORTKEY == 1 ]]; then
  if ! command -v node >/dev/null; then
    note "node not available: Portkey rows are n/a"; DO_PORTKEY=0
  elif [[ ! -d $BENCH/portkey/node_modules/@portkey-ai/gateway ||
          $BENCH/portkey/package-lock.json -nt $BENCH/portkey/node_modules/.package-lock.json ]]; then
    log "npm ci in bench/portkey"
    (cd "$BENCH/portkey" && npm ci --no-audit --no-fund) >"$OUT/npm.log" 2>&1 ||
      { note "npm ci failed in bench/portkey (see npm.log): Portkey rows are n/a"; DO_PORTKEY=0; }
  fi
fi
PORTKEY_JS="$BENCH/portkey/node_modules/@portkey-ai/gateway/build/start-server.js"

# ---------------------------------------------------------------------------------------
# Versions and machine.
meta date "$(date -u '+%Y-%m-%d %H:%M:%S UTC')"
meta mode "$MODE"
meta nproc "$(nproc)"
meta cpu "$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)"
meta kernel "$(uname -sr)"
meta memory "$(awk '/^MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
meta os "$(. /etc/os-release 2>/dev/null; echo "${PRETTY_NAME:-unknown}")"
meta git "$(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null)$(cd "$ROOT" && git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
[[ $HAVE_SLUICE == 1 ]] && meta v_sluice "$("$SLUICE" --version 2>&1 | head -1)"
meta v_nginx "$(nginx -v 2>&1 | head -1)"
meta v_wrk "$(wrk -v 2>&1 | head -1)"
meta v_node "$(node --version 2>/dev/null || echo n/a)"
[[ $DO_PORTKEY == 1 ]] && meta v_portkey "@portkey-ai/gateway $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$BENCH/portkey/node_modules/@portkey-ai/gateway/package.json")"
meta v_loadgen "sluice-stream-load (bench/stream_load.cc)"
meta durations "$ROUNDS round(s), each: latency ${LAT_D}s per path at c=1, throughput ${TPUT_D}s at c=${TPUT_C}, large prompt ${LARGE_D}s at c=1; then 20 ms upstream ${SLOW_D}s per step (c = ${SLOW_STEPS}); streams ${STREAM_D}s plateau after ${STREAM_RAMP}s ramp, steps ${STREAM_STEPS}"
meta stream_shape "$STREAM_EVENTS deltas, ${STREAM_PACE_MS} ms apart; stall = a gap > ${GAP_LIMIT_MS} ms"
meta memory_shape "$MEM_EVENTS deltas, ${MEM_PACE_MS} ms apart; stall = a gap > $((MEM_PACE_MS * 10)) ms; ${MEM_RAMP}s ramp + ${MEM_D}s plateau"

# ---------------------------------------------------------------------------------------
# Request bodies.
SMALL_BODY="$OUT/body-small.json"
SLOW_BODY="$OUT/body-slow.json"
STREAM_BODY="$OUT/body-stream.json"
LARGE_BODY="$OUT/body-large.json"
ANTHROPIC_STREAM_BODY="$OUT/body-anthropic-stream.json"
printf '%s' '{"model":"bench-model","messages":[{"role":"system","content":"You are a terse assistant."},{"role":"user","content":"Say hello in five words."}],"max_tokens":16,"temperature":0}' >"$SMALL_BODY"
printf '%s' '{"model":"bench-slow","messages":[{"role":"system","content":"You are a terse assistant."},{"role":"user","content":"Say hello in five words."}],"max_tokens":16,"temperature":0}' >"$SLOW_BODY"
# include_usage: Sluice asks the upstream for the usage chunk anyway (metering); when the
# client asks too, every path relays the same events and no path has an extra gap where a
# usage chunk was consumed.
printf '%s' '{"model":"bench-stream","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Count slowly."}],"max_tokens":128}' >"$STREAM_BODY"
printf '%s' '{"model":"bench-stream","max_tokens":128,"stream":true,"messages":[{"role":"user","content":"Count slowly."}]}' >"$ANTHROPIC_STREAM_BODY"
INPROC_STREAM_BODY="$OUT/body-inproc-stream.json"
printf '%s' '{"model":"bench-inproc","stream":true,"messages":[{"role":"user","content":"Count slowly."}],"max_tokens":128}' >"$INPROC_STREAM_BODY"
python3 "$BENCH/large_prompt.py" "$LARGE_BODY"  # ~100k tokens
meta large_body_bytes "$(stat -c %s "$LARGE_BODY")"

# ---------------------------------------------------------------------------------------
# Upstreams.
CANNED='{"id":"chatcmpl-bench","object":"chat.completion","created":1700000000,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"Hello from the bench upstream."},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":6,"total_tokens":15}}'
WORKER_CONNS=$((NOFILE > 1200 ? NOFILE - 50 : 1024))

nginx_common() {
  local dir=$1
  mkdir -p "$dir"
  cat <<EOF
worker_processes 1;
worker_rlimit_nofile $NOFILE;
daemon off;
master_process on;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections $WORKER_CONNS; multi_accept on; }
http {
  access_log off;
  keepalive_requests 1000000;
  keepalive_timeout 120s;
  client_body_temp_path $dir/client_body;
  proxy_temp_path $dir/proxy;
  fastcgi_temp_path $dir/fastcgi;
  uwsgi_temp_path $dir/uwsgi;
  scgi_temp_path $dir/scgi;
  client_max_body_size 16m;
  client_body_buffer_size 1m;
EOF
}

UP_PORT=$(free_port)
UP_DIR="$OUT/nginx-upstream"
{
  nginx_common "$UP_DIR"
  cat <<EOF
  # "direct": a zero-delay OpenAI upstream answering every chat completion with one
  # canned JSON body. return works for POST and discards the request body.
  server {
    listen 127.0.0.1:$UP_PORT backlog=4096;
    location = /v1/chat/completions {
      default_type application/json;
      return 200 '$CANNED';
    }
    location / { return 404; }
  }
}
EOF
} >"$UP_DIR.conf"
start_bg NGINX_UP_PID "$RAW/nginx-upstream" "${PIN_LOAD[@]}" nginx -p "$UP_DIR" -e "$UP_DIR/error.log" -c "$UP_DIR.conf"
wait_tcp "$UP_PORT" 10 || { log "nginx upstream did not start: $(cat "$RAW/nginx-upstream.err")"; exit 1; }

MOCK0_PORT=""; MOCK20_PORT=""; MOCK0_PID=""; MOCK20_PID=""
if [[ $HAVE_MOCK == 1 ]]; then
  start_bg MOCK0_PID "$RAW/mock0" "${PIN_LOAD[@]}" "$MOCK" --listen 127.0.0.1:0 --threads 1
  MOCK0_PORT=$(wait_listening_json "$RAW/mock0.out" 10 "$MOCK0_PID") || { note "sluice-mock-upstream did not start: $(tail -3 "$RAW/mock0.err" | tr '\n' ' ')"; HAVE_MOCK=0; }
fi
if [[ $HAVE_MOCK == 1 ]]; then
  start_bg MOCK20_PID "$RAW/mock20" "${PIN_LOAD[@]}" "$MOCK" --listen 127.0.0.1:0 --threads 1 --latency-ms "$SLOW_LATENCY_MS"
  MOCK20_PORT=$(wait_listening_json "$RAW/mock20.out" 10 "$MOCK20_PID") || { note "sluice-mock-upstream --latency-ms did not start"; HAVE_MOCK=0; }
fi

# nginx proxy_pass baseline: one worker on the gateway core, keep-alive upstream pools.
PX_PORT=$(free_port); PX_SLOW_PORT=$(free_port); PX_STREAM_PORT=$(free_port)
PX_DIR="$OUT/nginx-proxy"
{
  nginx_common "$PX_DIR"
  cat <<EOF
  proxy_http_version 1.1;
  proxy_set_header Connection "";
  upstream direct { server 127.0.0.1:$UP_PORT; keepalive 64; keepalive_requests 1000000; }
  server {
    listen 127.0.0.1:$PX_PORT backlog=4096;
    location / { proxy_pass http://direct; }
  }
EOF
  if [[ $HAVE_MOCK == 1 ]]; then
    cat <<EOF
  upstream mock20 { server 127.0.0.1:$MOCK20_PORT; keepalive 1024; keepalive_requests 1000000; }
  # Idle cache kept small: at the largest stream step, 2 x N connections already sit near
  # worker_connections (the fd limit), and cached idle ones count against it.
  upstream mock0 { server 127.0.0.1:$MOCK0_PORT; keepalive 100; keepalive_requests 1000000; }
  server {
    listen 127.0.0.1:$PX_SLOW_PORT backlog=4096;
    location / { proxy_pass http://mock20; }
  }
  # Streams: no response buffering, so each event is relayed as it arrives.
  server {
    listen 127.0.0.1:$PX_STREAM_PORT backlog=4096;
    location / { proxy_pass http://mock0; proxy_buffering off; proxy_read_timeout 60s; }
  }
EOF
  fi
  echo "}"
} >"$PX_DIR.conf"
start_bg NGINX_PX_PID "$RAW/nginx-proxy" "${PIN_GW[@]}" nginx -p "$PX_DIR" -e "$PX_DIR/error.log" -c "$PX_DIR.conf"
wait_tcp "$PX_PORT" 10 || { log "nginx proxy did not start: $(cat "$RAW/nginx-proxy.err")"; exit 1; }

# ---------------------------------------------------------------------------------------
# Portkey.
PK_PORT=""; PK_PID=""
portkey_config() { # custom host base url
  printf '{"provider":"openai","custom_host":"%s","api_key":"sk-upstream-test-key","forward_headers":["x-mock-events","x-mock-pace-ms"]}' "$1"
}
start_portkey() {
  PK_PORT=$(free_port)
  # --headless: no log UI; NODE_ENV=production as a deployment would run it.
  start_bg PK_PID "$RAW/portkey-$1" env NODE_ENV=production "${PIN_GW[@]}" node "$PORTKEY_JS" --port="$PK_PORT" --headless
  wait_tcp "$PK_PORT" 30 || { note "Portkey did not start (see raw/portkey-$1.err)"; return 1; }
}
if [[ $DO_PORTKEY == 1 ]]; then
  start_portkey main || DO_PORTKEY=0
fi

# ---------------------------------------------------------------------------------------
# Sluice.
sluice_config() { # file auth(on|off|cache) pool_max
  local file=$1 auth=$2 pool=$3
  {
    echo "version: 1"
    echo "listen: 127.0.0.1:0"
    echo "server: { workers: 1, max_connections: 20000 }"
    # cache: the "on" gateway with every chat route's answer cache on. The load repeats one
    # request, so after the first it measures a hit (docs/cache.md) against the same
    # gateway's miss path (sluice-on).
    if [[ $auth == cache ]]; then
      echo "cache: { enabled: true, memory_bytes: 64MiB, ttl_ms: 3600000 }"
    fi
    if [[ $auth == on || $auth == cache ]]; then
      echo "access_log: { enabled: true, path: $OUT/sluice-access-$(basename "$file" .yaml).log }"
      # Metering on: a usage record per request through the sink to SQLite (WAL), priced.
      echo "store: { sqlite: $OUT/sluice-usage-$(basename "$file" .yaml).db }"
    else
      echo "access_log: { enabled: false }"
      echo "auth: none"
    fi
    echo "providers:"
    echo "  - id: upstream"
    echo "    adapter: openai"
    echo "    base_url: http://127.0.0.1:$UP_PORT/v1"
    echo "    api_key: sk-upstream-test-key"
    echo "    pool: { max_connections: $pool, acquire_timeout_ms: 5000 }"
    if [[ $HAVE_MOCK == 1 ]]; then
      echo "  - id: mock"
      echo "    adapter: openai"
      echo "    base_url: http://127.0.0.1:$MOCK0_PORT/v1"
      echo "    api_key: sk-upstream-test-key"
      echo "    forward_headers: [\"x-mock-*\"]"
      echo "    pool: { max_connections: $pool, acquire_timeout_ms: 5000 }"
      # The translation matrix: one sluice-mock-upstream speaking each protocol.
      echo "  - id: mx-openai"
      echo "    adapter: openai"
      echo "    base_url: http://127.0.0.1:$MOCK0_PORT/v1"
      echo "    api_key: sk-upstream-test-key"
      echo "    pool: { max_connections: $pool, acquire_timeout_ms: 5000 }"
      echo "  - id: mx-anthropic"
      echo "    adapter: anthropic"
      echo "    base_url: http://127.0.0.1:$MOCK0_PORT/v1"
      echo "    api_key: sk-upstream-test-key"
      echo "    pool: { max_connections: $pool, acquire_timeout_ms: 5000 }"
      echo "  - id: mx-gemini"
      echo "    adapter: gemini"
      echo "    base_url: http://127.0.0.1:$MOCK0_PORT/v1beta"
      echo "    api_key: sk-upstream-test-key"
      echo "    pool: { max_connections: $pool, acquire_timeout_ms: 5000 }"
      echo "  - id: mock20"
      echo "    adapter: openai"
      echo "    base_url: http://127.0.0.1:$MOCK20_PORT/v1"
      echo "    api_key: sk-upstream-test-key"
      echo "    pool: { max_connections: $pool, acquire_timeout_ms: 5000 }"
    fi
    # In-process mock provider: a gateway stream holds one socket (the caller's), so 10,000
    # streams fit the open-file limit; paced like the memory plateau.
    echo "  - id: inproc"
    echo "    adapter: mock"
    echo "    mock: { chunk_interval_ms: $MEM_PACE_MS }"
    echo "routes:"
    echo "  - alias: bench-inproc"
    echo "    provider: inproc"
    echo "    model: mock-1"
    echo "  - alias: bench-model"
    echo "    provider: upstream"
    echo "    model: gpt-4o-mini"
    if [[ $HAVE_MOCK == 1 ]]; then
      echo "  - alias: bench-stream"
      echo "    provider: mock"
      echo "    model: gpt-4o-mini"
      echo "  - alias: bench-slow"
      echo "    provider: mock20"
      echo "    model: gpt-4o-mini"
      for up in openai anthropic gemini; do
        echo "  - alias: mx-$up"
        echo "    provider: mx-$up"
        echo "    model: mx-model"
      done
    fi
    echo "keys:"
    echo "  - name: bench"
    echo "    key: $SLUICE_KEY"
  } >"$file"
}

# start_sluice NAME auth pool: sets SL_PID_<NAME> / SL_PORT_<NAME>.
start_sluice() {
  local name=$1 auth=$2 pool=$3 cfg="$OUT/sluice-$1.yaml" pid port
  sluice_config "$cfg" "$auth" "$pool"
  start_bg pid "$RAW/sluice-$name" "${PIN_GW[@]}" "$SLUICE" serve --config "$cfg"
  if ! port=$(wait_listening_json "$RAW/sluice-$name.out" 15 "$pid"); then
    note "sluice ($name) did not start: $(tail -c 400 "$RAW/sluice-$name.err" | tr '\n' ' ')"
    stop_pid "$pid"
    return 1
  fi
  printf -v "SL_PID_${name//-/_}" '%s' "$pid"
  printf -v "SL_PORT_${name//-/_}" '%s' "$port"
}
SL_PID_off=""; SL_PORT_off=""; SL_PID_on=""; SL_PORT_on=""; SL_PID_cache=""; SL_PORT_cache=""
if [[ $HAVE_SLUICE == 1 ]]; then
  start_sluice off off 1024 || true
  start_sluice on on 1024 || true
  # A build without the cache refuses the config: its row is then n/a.
  start_sluice cache cache 1024 || true
fi

# ---------------------------------------------------------------------------------------
# Paths under test. For each: base URL, extra headers (newline separated), gateway pid.
declare -A URL HDR GWPID SLOWURL SLOWHDR
PATHS=()
add_path() { PATHS+=("$1"); URL[$1]=$2; HDR[$1]=$3; GWPID[$1]=$4; }
add_path direct "http://127.0.0.1:$UP_PORT" "" "$NGINX_UP_PID"
add_path nginx "http://127.0.0.1:$PX_PORT" "" "$NGINX_PX_PID"
[[ $DO_PORTKEY == 1 ]] && add_path portkey "http://127.0.0.1:$PK_PORT" "x-portkey-config: $(portkey_config "http://127.0.0.1:$UP_PORT/v1")" "$PK_PID"
[[ -n $SL_PORT_off ]] && add_path sluice-off "http://127.0.0.1:$SL_PORT_off" "" "$SL_PID_off"
[[ -n $SL_PORT_on ]] && add_path sluice-on "http://127.0.0.1:$SL_PORT_on" "Authorization: Bearer $SLUICE_KEY" "$SL_PID_on"
[[ -n $SL_PORT_cache ]] && add_path sluice-cache "http://127.0.0.1:$SL_PORT_cache" "Authorization: Bearer $SLUICE_KEY" "$SL_PID_cache"

if [[ $HAVE_MOCK == 1 ]]; then
  SLOWURL[direct]="http://127.0.0.1:$MOCK20_PORT"; SLOWHDR[direct]=""; SLOWPID_direct=$MOCK20_PID
  SLOWURL[nginx]="http://127.0.0.1:$PX_SLOW_PORT"; SLOWHDR[nginx]=""
  SLOWURL[portkey]="http://127.0.0.1:$PK_PORT"; SLOWHDR[portkey]="x-portkey-config: $(portkey_config "http://127.0.0.1:$MOCK20_PORT/v1")"
  SLOWURL[sluice-off]="http://127.0.0.1:$SL_PORT_off"; SLOWHDR[sluice-off]=""
  SLOWURL[sluice-on]="http://127.0.0.1:$SL_PORT_on"; SLOWHDR[sluice-on]="Authorization: Bearer $SLUICE_KEY"
  SLOWURL[sluice-cache]="http://127.0.0.1:$SL_PORT_cache"; SLOWHDR[sluice-cache]="Authorization: Bearer $SLUICE_KEY"
fi

# curl_check URL HEADERS BODY [PATH]: prints the HTTP status of one POST.
curl_check() {
  local url=$1 headers=$2 body=$3 path=${4:-/v1/chat/completions} args=()
  while IFS= read -r h; do [[ -n $h ]] && args+=(-H "$h"); done <<<"$headers"
  curl -s -o "$RAW/check-body.txt" -w '%{http_code}' --max-time 10 -X POST "$url$path" \
    -H 'Content-Type: application/json' "${args[@]}" --data-binary "@$body" 2>/dev/null
}

ACTIVE=()
for p in "${PATHS[@]}"; do
  code=$(curl_check "${URL[$p]}" "${HDR[$p]}" "$SMALL_BODY")
  if [[ $code == 200 ]] && grep -q '"choices"' "$RAW/check-body.txt"; then
    ACTIVE+=("$p")
  else
    note "path $p failed its health check (HTTP $code: $(head -c 200 "$RAW/check-body.txt")): its rows are n/a"
  fi
done
log "paths: ${ACTIVE[*]}"
meta paths "${ACTIVE[*]}"

# ---------------------------------------------------------------------------------------
# Load helpers.

# run_wrk TEST PATH CONC DURATION URL HEADERS BODY [REQUEST_PATH]: one wrk run; appends
# its figures (plus the gateway's CPU time) as a JSON line to results.jsonl.
run_wrk() {
  local test=$1 path=$2 conc=$3 dur=$4 url=$5 headers=$6 body=$7 reqpath=${8:-/v1/chat/completions}
  local round=${ROUND:-1}
  local raw="$RAW/wrk-$test-$path-c$conc-r$round.txt" pid=${GWPID[$path]:-}
  local cmd=(wrk -t1 "-c$conc" "-d${dur}s" --timeout 10s -s "$BENCH/lua/chat.lua" "$url")
  printf '%s: BENCH_BODY_FILE=%s BENCH_PATH=%s BENCH_HEADERS=%q %s %s\n' "$test/$path" "$(basename "$body")" "$reqpath" "$headers" "${PIN_LOAD[*]}" "${cmd[*]}" >>"$COMMANDS"
  local c0 c1
  c0=$(cpu_ticks "$pid")
  BENCH_BODY_FILE="$body" BENCH_PATH="$reqpath" BENCH_HEADERS="$headers" \
    timeout $((dur + 60)) "${PIN_LOAD[@]}" "${cmd[@]}" >"$raw" 2>&1
  c1=$(cpu_ticks "$pid")
  local line
  line=$(grep -m1 '^BENCH_JSON ' "$raw" | cut -d' ' -f2-)
  if [[ -z $line ]]; then
    note "wrk produced no result for $test/$path c=$conc (see $(basename "$raw"))"
    line='{"failed":true}'
  fi
  python3 - "$line" "$test" "$path" "$conc" "$(( (c1 - c0) ))" "$CLK_TCK" "$reqpath" "$round" >>"$RESULTS_JSONL" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
r.update(test=sys.argv[2], path=sys.argv[3], concurrency=int(sys.argv[4]), request_path=sys.argv[7],
         round=int(sys.argv[8]))
cpu_s = int(sys.argv[5]) / int(sys.argv[6])
r["gw_cpu_s"] = cpu_s
if r.get("requests"):
    r["gw_cpu_us_per_req"] = cpu_s * 1e6 / r["requests"]
print(json.dumps(r))
PY
  python3 -c 'import json,sys; r=json.loads(sys.argv[1]); print("   %-10s %-10s c=%-5s %8.0f req/s  p50 %7.0f us  p99 %8.0f us  non2xx %d  errors %d" % (sys.argv[2], sys.argv[3], sys.argv[4], r.get("rps",0), r.get("p50_us",0), r.get("p99_us",0), r.get("non2xx",0), sum(r.get(k,0) for k in ("err_connect","err_read","err_write","err_timeout"))))' "$line" "$test" "$path" "$conc" >&2 || true
}

# ---------------------------------------------------------------------------------------
# 1. Warm-up, then added latency at concurrency 1.
log "warm-up"
for p in "${ACTIVE[@]}"; do
  BENCH_BODY_FILE="$SMALL_BODY" BENCH_HEADERS="${HDR[$p]}" timeout 30 "${PIN_LOAD[@]}" wrk -t1 -c8 -d1s -s "$BENCH/lua/chat.lua" "${URL[$p]}" >/dev/null 2>&1
done

for ROUND in $(seq "$ROUNDS"); do
  log "round $ROUND/$ROUNDS: latency at c=1 (${LAT_D}s per path)"
  for p in "${ACTIVE[@]}"; do
    run_wrk latency "$p" 1 "$LAT_D" "${URL[$p]}" "${HDR[$p]}" "$SMALL_BODY"
  done

  # 2. Closed-loop throughput at c=64, zero-delay upstream.
  log "round $ROUND/$ROUNDS: throughput at c=$TPUT_C (${TPUT_D}s per path)"
  for p in "${ACTIVE[@]}"; do
    run_wrk throughput "$p" "$TPUT_C" "$TPUT_D" "${URL[$p]}" "${HDR[$p]}" "$SMALL_BODY"
  done

  # 3. Large prompts (~100k tokens) at c=1.
  log "round $ROUND/$ROUNDS: large prompt ($(($(stat -c %s "$LARGE_BODY") / 1024)) KiB) at c=1 (${LARGE_D}s per path)"
  for p in "${ACTIVE[@]}"; do
    run_wrk large "$p" 1 "$LARGE_D" "${URL[$p]}" "${HDR[$p]}" "$LARGE_BODY"
  done
done
ROUND=1

# 4. Translation matrix: each caller protocol against an upstream of its own protocol
#    (passthrough) and of every other one (translated), all played by the same zero-latency
#    sluice-mock-upstream, non-stream, back to back in each round. The figure is the translated
#    throughput as a share of the same ingress's passthrough (goal >= 0.85), and the gateway CPU
#    per request, which is not bound by the load side.
TRANSLATION_STATUS="not run"
if [[ -n $SL_PORT_on ]] && [[ $HAVE_MOCK == 1 ]] && [[ " ${ACTIVE[*]} " == *" sluice-on "* ]]; then
  TRANSLATION_STATUS="measured"
  declare -A MX_PATH MX_HDR
  MX_HDR[chat]="Authorization: Bearer $SLUICE_KEY"
  MX_HDR[anthropic]="x-api-key: $SLUICE_KEY
anthropic-version: 2023-06-01"
  MX_HDR[gemini]="x-goog-api-key: $SLUICE_KEY"
  MX_HDR[responses]="Authorization: Bearer $SLUICE_KEY"
  # ingress -> the upstream of its own protocol, then the others.
  declare -A MX_NATIVE=([chat]=openai [anthropic]=anthropic [gemini]=gemini [responses]=openai)
  mx_body() { # ingress upstream: writes $OUT/body-mx-<ingress>-<upstream>.json, sets MX_PATH
    local in=$1 up=$2 f="$OUT/body-mx-$1-$2.json"
    case $in in
      chat)
        printf '%s' '{"model":"mx-'"$up"'","messages":[{"role":"system","content":"You are a terse assistant."},{"role":"user","content":"Say hello in five words."}],"max_tokens":16}' >"$f"
        MX_PATH[$in/$up]=/v1/chat/completions ;;
      anthropic)
        printf '%s' '{"model":"mx-'"$up"'","max_tokens":16,"system":"You are a terse assistant.","messages":[{"role":"user","content":"Say hello in five words."}]}' >"$f"
        MX_PATH[$in/$up]=/v1/messages ;;
      gemini)
        printf '%s' '{"systemInstruction":{"parts":[{"text":"You are a terse assistant."}]},"contents":[{"role":"user","parts":[{"text":"Say hello in five words."}]}],"generationConfig":{"maxOutputTokens":16}}' >"$f"
        MX_PATH[$in/$up]=/v1beta/models/mx-$up:generateContent ;;
      responses)
        printf '%s' '{"model":"mx-'"$up"'","instructions":"You are a terse assistant.","input":"Say hello in five words.","max_output_tokens":16,"store":false}' >"$f"
        MX_PATH[$in/$up]=/v1/responses ;;
    esac
  }
  MX_CELLS=()
  for in in chat anthropic gemini responses; do
    native=${MX_NATIVE[$in]}
    for up in "$native" $(printf '%s\n' openai anthropic gemini | grep -vx "$native"); do
      mx_body "$in" "$up"
      body="$OUT/body-mx-$in-$up.json"
      code=$(curl_check "http://127.0.0.1:$SL_PORT_on" "${MX_HDR[$in]}" "$body" "${MX_PATH[$in/$up]}")
      if [[ $code == 200 ]]; then
        MX_CELLS+=("$in/$up")
      else
        note "translation matrix: $in -> $up failed its check (HTTP $code: $(head -c 160 "$RAW/check-body.txt" | tr '\n' ' '))"
      fi
    done
  done
  log "translation matrix at c=$TPUT_C (${TPUT_D}s per cell): ${MX_CELLS[*]}"
  for ROUND in $(seq "$ROUNDS"); do
    for cell in "${MX_CELLS[@]}"; do
      in=${cell%/*}; up=${cell#*/}
      run_wrk "matrix-$in-$up" sluice-on "$TPUT_C" "$TPUT_D" "${URL[sluice-on]}" "${MX_HDR[$in]}" \
        "$OUT/body-mx-$in-$up.json" "${MX_PATH[$cell]}"
    done
  done
  ROUND=1
  meta matrix_cells "${MX_CELLS[*]}"
  meta matrix_native "chat=openai anthropic=anthropic gemini=gemini responses=openai"
fi
meta translation_status "$TRANSLATION_STATUS"

# 5. Sustained throughput with a 20 ms upstream: closed loop, concurrency stepped up; the
#    figure reported is the best throughput among steps whose p99 stayed under 1 s.
if [[ $HAVE_MOCK == 1 ]]; then
  log "20 ms upstream, closed loop at c = $SLOW_STEPS (${SLOW_D}s per step)"
  for p in "${ACTIVE[@]}"; do
    code=$(curl_check "${SLOWURL[$p]}" "${SLOWHDR[$p]}" "$SLOW_BODY")
    if [[ $code != 200 ]]; then
      note "20 ms upstream path $p failed its check (HTTP $code: $(head -c 160 "$RAW/check-body.txt"))"
      continue
    fi
    for c in $SLOW_STEPS; do
      if [[ $c -gt $((NOFILE / 2 - 100)) ]]; then continue; fi
      # For direct, the CPU figure is the 20 ms mock's.
      saved_pid=${GWPID[$p]}
      [[ $p == direct ]] && GWPID[direct]=$SLOWPID_direct
      run_wrk slow "$p" "$c" "$SLOW_D" "${SLOWURL[$p]}" "${SLOWHDR[$p]}" "$SLOW_BODY"
      GWPID[$p]=$saved_pid
    done
  done
fi

# 6. Stream event throughput: few connections, many unpaced events; measures relay
#    cost per event (gateway CPU time per event), passthrough and translated.
run_streams() { # TEST PATH PORT REQUEST_PATH BODY CONC DURATION RAMP MIN_EVENTS GWPID HEADERS...
  local test=$1 path=$2 port=$3 reqpath=$4 body=$5 conc=$6 dur=$7 ramp=$8 minev=$9 gwpid=${10}
  shift 10
  local args=(--port "$port" --path "$reqpath" --body-file "$body" --concurrency "$conc"
    --duration-s "$dur" --ramp-s "$ramp" --grace-s "${STREAM_GRACE_S:-10}" --idle-timeout-s 15
    --gap-limit-ms "${STREAM_GAP_MS:-$GAP_LIMIT_MS}" --min-events "$minev" --label "$test/$path")
  [[ -n $gwpid ]] && args+=(--rss-pid "$(mem_pid "$gwpid")")
  local h
  for h in "$@"; do args+=(--header "$h"); done
  local raw="$RAW/streams-$test-$path-n$conc.json"
  { printf '%s: %s %s ' "$test/$path" "${PIN_LOAD[*]}" "$(basename "$STREAM_LOAD")"; printf '%q ' "${args[@]}"; echo; } >>"$COMMANDS"
  local line lo0 lo1
  lo0=$(listen_overflows)
  timeout $((${dur%.*} + ${ramp%.*} + ${STREAM_GRACE_S:-10} + 60)) "${PIN_LOAD[@]}" "$STREAM_LOAD" "${args[@]}" >"$raw" 2>"$raw.err"
  lo1=$(listen_overflows)
  line=$(grep -m1 '^{' "$raw")
  [[ -z $line ]] && { note "stream load produced no result for $test/$path n=$conc"; line='{"failed":true}'; }
  python3 - "$line" "$test" "$path" "$conc" "$lo0" "$lo1" >>"$RESULTS_JSONL" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
r.update(test=sys.argv[2], path=sys.argv[3], concurrency=int(sys.argv[4]))
try:
    r["listen_overflows"] = int(sys.argv[6]) - int(sys.argv[5])
except ValueError:
    pass
print(json.dumps(r))
PY
  python3 -c 'import json,sys; r=json.loads(sys.argv[1]); print("   %-10s %-10s n=%-6s started %6d  stall-free %7.3f%%  ttft p50 %7.2f ms p99 %7.2f ms  gap p99 %7.2f ms  rss %s kB  events/s %s" % (sys.argv[2], sys.argv[3], sys.argv[4], r.get("streams_started",0), r.get("stall_free_pct",0), r.get("ttft_p50_ms",-1), r.get("ttft_p99_ms",-1), r.get("max_gap_p99_ms",-1), r.get("rss_plateau_max_kb",-1), r.get("events_per_s",0)))' "$line" "$test" "$path" "$conc" >&2 || true
  STALL_FREE_PCT=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get("stall_free_pct",0))' "$line")
  TTFT_P99_MS=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get("ttft_p99_ms",0))' "$line")
}

if [[ $DO_STREAMS == 1 && $HAVE_MOCK == 1 && -n $STREAM_LOAD ]]; then
  # Fresh gateway processes for the streaming section, so idle memory is measured clean and
  # the pools can hold one upstream connection per stream.
  [[ -n $SL_PID_off ]] && { stop_pid "$SL_PID_off" "sluice (governance off)"; SL_PID_off=""; }
  [[ -n $SL_PID_on ]] && { stop_pid "$SL_PID_on" "sluice (governance on)"; SL_PID_on=""; }
  [[ -n $SL_PID_cache ]] && { stop_pid "$SL_PID_cache" "sluice (cache)"; SL_PID_cache=""; }
  SL_PID_stream=""; SL_PORT_stream=""
  [[ $HAVE_SLUICE == 1 ]] && { start_sluice stream on 20000 || true; }
  if [[ $DO_PORTKEY == 1 ]]; then
    stop_pid "$PK_PID" portkey
    start_portkey stream || DO_PORTKEY=0
  fi
  # nginx too: its idle keep-alive connections from the earlier tests would count against
  # worker_connections at the largest N.
  stop_pid "$NGINX_PX_PID" "nginx proxy"
  start_bg NGINX_PX_PID "$RAW/nginx-proxy-stream" "${PIN_GW[@]}" nginx -p "$PX_DIR" -e "$PX_DIR/error.log" -c "$PX_DIR.conf"
  wait_tcp "$PX_STREAM_PORT" 10 || note "nginx proxy did not restart for the stream tests"

  declare -A SPORT SPATH SBODY SPID SHDR_EXTRA
  STARGETS=()
  add_stream_target() { STARGETS+=("$1"); SPORT[$1]=$2; SPID[$1]=$3; SHDR_EXTRA[$1]=$4; }
  add_stream_target direct "$MOCK0_PORT" "$MOCK0_PID" ""
  add_stream_target nginx "$PX_STREAM_PORT" "$NGINX_PX_PID" ""
  [[ $DO_PORTKEY == 1 ]] && add_stream_target portkey "$PK_PORT" "$PK_PID" "x-portkey-config: $(portkey_config "http://127.0.0.1:$MOCK0_PORT/v1")"
  [[ -n $SL_PORT_stream ]] && add_stream_target sluice-on "$SL_PORT_stream" "$SL_PID_stream" "Authorization: Bearer $SLUICE_KEY"

  # Largest N this sandbox allows: a gateway holds two sockets per stream, plus listeners,
  # idle pooled upstream connections and files; 1000 descriptors are left as headroom so
  # that no gateway is cut short by the limit rather than by its own behaviour.
  MAX_STREAMS=$(((NOFILE - 1000) / 2 / 100 * 100))
  meta max_streams_fd "$MAX_STREAMS"

  # 6a. Relay cost per event: 16 connections, unpaced streams of 2000 events.
  log "stream event throughput (16 streams x 2000 unpaced events, ${EVT_D}s)"
  for t in "${STARGETS[@]}"; do
    hdrs=("x-mock-events: 2000" "x-mock-pace-ms: 0")
    [[ -n ${SHDR_EXTRA[$t]} ]] && hdrs+=("${SHDR_EXTRA[$t]}")
    run_streams events "$t" "${SPORT[$t]}" /v1/chat/completions "$STREAM_BODY" 16 "$EVT_D" 0.2 2000 "${SPID[$t]}" "${hdrs[@]}"
  done
  if [[ $TRANSLATION_STATUS == measured && -n $SL_PORT_stream ]]; then
    run_streams events-anthropic sluice-on "$SL_PORT_stream" /v1/messages "$ANTHROPIC_STREAM_BODY" 16 "$EVT_D" 0.2 2000 "$SL_PID_stream" \
      "x-mock-events: 2000" "x-mock-pace-ms: 0" "x-api-key: $SLUICE_KEY" "Authorization: Bearer $SLUICE_KEY" \
      "anthropic-version: 2023-06-01"
  fi

  # 6b. Concurrent paced streams, stepped.
  log "concurrent streams: steps $STREAM_STEPS (${STREAM_RAMP}s ramp + ${STREAM_D}s plateau each)"
  for t in "${STARGETS[@]}"; do
    gw=$(mem_pid "${SPID[$t]}")
    # Idle memory after one warm stream.
    hdrs=("x-mock-events: $STREAM_EVENTS" "x-mock-pace-ms: $STREAM_PACE_MS")
    [[ -n ${SHDR_EXTRA[$t]} ]] && hdrs+=("${SHDR_EXTRA[$t]}")
    warm=(--port "${SPORT[$t]}" --body-file "$STREAM_BODY" --concurrency 4 --duration-s 0.5 --ramp-s 0)
    for h in "${hdrs[@]}"; do warm+=(--header "$h"); done
    timeout 30 "${PIN_LOAD[@]}" "$STREAM_LOAD" "${warm[@]}" >/dev/null 2>&1 || true
    sleep 1
    idle=$(vmrss_kb "$gw")
    python3 -c 'import json,sys; print(json.dumps({"test":"stream-idle","path":sys.argv[1],"rss_kb":int(sys.argv[2])}))' "$t" "${idle:--1}" >>"$RESULTS_JSONL"
    for n in $STREAM_STEPS; do
      if [[ $n -gt $MAX_STREAMS ]]; then
        note "streams: step $n exceeds what RLIMIT_NOFILE=$NOFILE allows (2 sockets per stream in a gateway); running $MAX_STREAMS instead"
        n=$MAX_STREAMS
      fi
      STALL_FREE_PCT=0
      run_streams streams "$t" "${SPORT[$t]}" /v1/chat/completions "$STREAM_BODY" "$n" "$STREAM_D" "$STREAM_RAMP" "$STREAM_EVENTS" "${SPID[$t]}" "${hdrs[@]}"
      sleep 2
      if [[ $STOP_ON_STALLS == 1 ]] && python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) < 99 or float(sys.argv[2]) > 5000 else 1)' "$STALL_FREE_PCT" "$TTFT_P99_MS"; then
        log "   $t: < 99% stall-free or TTFT p99 > 5 s at n=$n, not stepping further"
        break
      fi
      alive "${SPID[$t]}" || { note "$t gateway died during the stream test at n=$n"; break; }
    done
  done

  # 6c. Memory plateau at the largest N the fd limit allows, with slower pacing so that the
  #     load side (mock and load generator share one core) can keep every stream moving.
  if [[ $MEM_STREAMS -gt 0 ]]; then
    n=$MEM_STREAMS
    [[ $n -gt $MAX_STREAMS ]] && n=$MAX_STREAMS
    log "memory plateau: $n streams, $MEM_EVENTS deltas ${MEM_PACE_MS} ms apart (${MEM_RAMP}s ramp + ${MEM_D}s plateau)"
    for t in "${STARGETS[@]}"; do
      alive "${SPID[$t]}" || continue
      hdrs=("x-mock-events: $MEM_EVENTS" "x-mock-pace-ms: $MEM_PACE_MS")
      [[ -n ${SHDR_EXTRA[$t]} ]] && hdrs+=("${SHDR_EXTRA[$t]}")
      STREAM_GAP_MS=$((MEM_PACE_MS * 10)) STREAM_GRACE_S=$((MEM_EVENTS * MEM_PACE_MS / 1000 + 15)) \
        run_streams memory "$t" "${SPORT[$t]}" /v1/chat/completions "$STREAM_BODY" "$n" "$MEM_D" "$MEM_RAMP" "$MEM_EVENTS" "${SPID[$t]}" "${hdrs[@]}"
      sleep 2
    done
    # 6d. 10,000 streams in one gateway: the in-process mock provider answers, so the
    #     gateway holds one socket per stream and the fd limit allows the full N. Same pace
    #     and stall limit as the plateau above; the mock's answer has 10 content deltas.
    if [[ -n $SL_PORT_stream && $MEM_STREAMS -gt $MAX_STREAMS ]] && alive "$SL_PID_stream"; then
      n=$MEM_STREAMS
      [[ $n -gt $((NOFILE - 1000)) ]] && n=$(((NOFILE - 1000) / 100 * 100))
      log "memory plateau, in-process provider: $n streams"
      STREAM_GAP_MS=$((MEM_PACE_MS * 10)) STREAM_GRACE_S=$((MEM_EVENTS * MEM_PACE_MS / 1000 + 15)) \
        run_streams memory-inproc sluice-on "$SL_PORT_stream" /v1/chat/completions "$INPROC_STREAM_BODY" "$n" "$MEM_D" "$MEM_RAMP" 10 "$SL_PID_stream" \
        "Authorization: Bearer $SLUICE_KEY"
      sleep 2
    fi
  fi
fi

# ---------------------------------------------------------------------------------------
# 7. Micro-benchmarks.
micro_ran=0
for src in "$BENCH"/*_bench.cc; do
  name=$(basename "$src" .cc)
  bin="$BUILD/bench/$name"
  [[ -x $bin ]] || continue
  micro_ran=1
  log "micro-benchmarks ($name)"
  echo "micro: ${PIN_GW[*]} $bin --benchmark_min_time=$MICRO_MIN_TIME --benchmark_format=json" >>"$COMMANDS"
  "${PIN_GW[@]}" "$bin" --benchmark_min_time="$MICRO_MIN_TIME" --benchmark_format=json \
    >"$OUT/micro-$name.json" 2>"$RAW/micro-$name.err" ||
    note "$name failed"
done
[[ $micro_ran == 1 ]] || meta micro_status "no *_bench binary was built"

[[ -n ${SL_PID_stream:-} ]] && stop_pid "$SL_PID_stream" "sluice (streams)"
cleanup
log "writing $RESULTS_FILE"
python3 "$BENCH/report.py" "$OUT" "$RESULTS_FILE" "$MODE" && log "done: $RESULTS_FILE (raw outputs in $OUT)"
# Access logs reach hundreds of MB per run; keep them compressed, and keep the last 10 runs.
gzip -f "$OUT"/sluice-access-*.log 2>/dev/null || true
ls -1d "$BENCH"/out/20*-* 2>/dev/null | sort | head -n -10 | xargs -r rm -rf
