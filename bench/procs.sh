# Process bookkeeping shared by bench/run.sh and bench/gameday.sh (sourced, not run). Expects
# log() and $COMMANDS (where start_bg records each command line) to be defined first; stop_pid
# reports a forced kill through note() when the sourcing script has one.

# Every process started here is recorded and stopped on exit.
PIDS=()
# alive PID: running and not a zombie waiting to be reaped.
alive() {
  local st
  st=$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) || return 1
  [[ -n $st && $st != Z ]]
}
cleanup() {
  local pid
  # `|| true`: a pid that has already exited makes kill fail, and under the sourcing script's
  # `set -e` that failure would end the trap (and the script) with status 1.
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for _ in $(seq 50); do
    local alive=0
    for pid in "${PIDS[@]}"; do alive "$pid" && alive=1; done
    [[ $alive == 0 ]] && break
    sleep 0.1
  done
  for pid in "${PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  PIDS=()
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT TERM

# start_bg VAR LOGPREFIX CMD...: starts CMD in the background, stdout to LOGPREFIX.out,
# stderr to LOGPREFIX.err, and stores its pid in VAR.
start_bg() {
  local _sb_var=$1 _sb_prefix=$2
  shift 2
  echo "$*" >>"$COMMANDS"
  "$@" >"$_sb_prefix.out" 2>"$_sb_prefix.err" </dev/null &
  local _sb_pid=$!
  disown "$_sb_pid" 2>/dev/null  # no "Killed" job messages; alive() polls /proc instead
  PIDS+=("$_sb_pid")
  printf -v "$_sb_var" '%s' "$_sb_pid"
}

# stop_pid PID [NAME]: SIGTERM, up to 5 s to exit, then SIGKILL (noted); forgets the pid so
# the exit trap never signals a recycled pid.
stop_pid() {
  local pid=$1 name=${2:-} p keep=()
  [[ -z $pid ]] && return 0
  for p in "${PIDS[@]}"; do [[ $p != "$pid" ]] && keep+=("$p"); done
  PIDS=("${keep[@]}")
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 50); do alive "$pid" || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null
  if [[ -n $name ]] && declare -F note >/dev/null; then
    note "$name did not exit within 5 s of SIGTERM with no requests in flight (killed)"
  fi
  return 0
}
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# wait_listening_json FILE SECONDS PID: the "port" field of the {"event":"listening",...}
# line a Sluice binary prints on stdout.
wait_listening_json() {
  local file=$1 secs=$2 pid=$3 port=""
  for _ in $(seq $((secs * 10))); do
    port=$(grep -m1 '"listening"' "$file" 2>/dev/null | sed -n 's/.*"port":[[:space:]]*\([0-9][0-9]*\).*/\1/p')
    [[ -n $port ]] && { echo "$port"; return 0; }
    alive "$pid" || return 1
    sleep 0.1
  done
  return 1
}

wait_tcp() {
  local port=$1 secs=$2
  for _ in $(seq $((secs * 10))); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}
