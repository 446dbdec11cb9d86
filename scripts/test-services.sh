#!/usr/bin/env bash
# Throwaway services for the test suites: a PostgreSQL 15 (store tests, no-loss tests) and a
# Redis (admission), each on loopback at a free port, with nothing kept after `stop`.
#
#   scripts/test-services.sh start [DIR]  start both in DIR (default: a new temp dir); prints DIR.
#                                         DIR/env holds the exports below, for `source`.
#   scripts/test-services.sh stop DIR     stop both and delete DIR
#   scripts/test-services.sh pg-stop DIR  stop PostgreSQL only, keeping its data
#   scripts/test-services.sh pg-start DIR start it again on the same port; returns when it
#                                         accepts connections
#   scripts/test-services.sh redis-stop DIR   kill redis-server (an outage, not a shutdown)
#   scripts/test-services.sh redis-start DIR  start it again on the same port (empty); returns
#                                             when it answers PING
#
# DIR/env exports SLUICE_TEST_POSTGRES_URL, SLUICE_TEST_REDIS_URL, SLUICE_TEST_PG_STOP /
# SLUICE_TEST_PG_START and SLUICE_TEST_REDIS_STOP / SLUICE_TEST_REDIS_START (the commands above,
# ready for `sh -c`) for outage tests. PostgreSQL refuses to run as root: as root, its files belong to the `postgres` user and
# it runs through runuser. Durability is off (fsync, full_page_writes): crash safety of a
# throwaway cluster is not what the tests measure.
set -euo pipefail

pg_bin=${SLUICE_PG_BIN:-/usr/lib/postgresql/15/bin}
script=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")

die() {
  echo "test-services: $*" >&2
  exit 1
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Runs a PostgreSQL command as the user that owns the cluster.
as_pg() {
  if [[ $(id -u) -eq 0 ]]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

pg_start() {
  local dir=$1 port
  port=$(cat "$dir/pg.port")
  as_pg "$pg_bin/pg_ctl" -D "$dir/pg" -l "$dir/pg.log" -w -t 30 -s \
    -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$dir/pg" \
    start >/dev/null || { tail -n 20 "$dir/pg.log" >&2; die "PostgreSQL did not start"; }
}

pg_stop() {
  local dir=$1
  [[ -f $dir/pg/postmaster.pid ]] || return 0
  as_pg "$pg_bin/pg_ctl" -D "$dir/pg" -m fast -w -t 30 -s stop >/dev/null
}

redis_start() {
  local dir=$1 port i
  port=$(cat "$dir/redis.port")
  redis-server --bind 127.0.0.1 --port "$port" --save "" --appendonly no \
    --daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" --dir "$dir" >/dev/null
  for ((i = 0; i < 100; i++)); do
    redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null | grep -q PONG && break
    sleep 0.05
  done
  ((i < 100)) || die "redis-server did not answer PING within 5 s"
}

# SIGKILL: clients see their connections reset, as in a crash; returns once the port is free.
redis_stop() {
  local dir=$1 pid i
  [[ -f $dir/redis.pid ]] || return 0
  pid=$(cat "$dir/redis.pid")
  kill -9 "$pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  rm -f "$dir/redis.pid"
}

start() {
  [[ -x $pg_bin/initdb ]] || die "no PostgreSQL 15 in $pg_bin (scripts/install-deps.sh --test)"
  command -v redis-server >/dev/null || die "no redis-server (scripts/install-deps.sh --test)"
  local dir=${1:-}
  if [[ -z $dir ]]; then
    dir=$(mktemp -d /tmp/sluice-services.XXXXXX)
  fi
  mkdir -p "$dir"
  chmod 755 "$dir"
  if [[ $(id -u) -eq 0 ]]; then
    id postgres >/dev/null 2>&1 || die "running as root needs the postgres user (apt package postgresql)"
    chown postgres "$dir"
  fi

  local pg_port redis_port
  pg_port=$(free_port)
  echo "$pg_port" >"$dir/pg.port"
  as_pg "$pg_bin/initdb" -D "$dir/pg" -U sluice --auth=trust --encoding=UTF8 --locale=C \
    --no-sync >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; die "initdb failed"; }
  cat >>"$dir/pg/postgresql.conf" <<CONF
fsync = off
full_page_writes = off
synchronous_commit = off
max_connections = 100
CONF
  pg_start "$dir"
  as_pg "$pg_bin/createdb" -h 127.0.0.1 -p "$pg_port" -U sluice sluice_test

  redis_port=$(free_port)
  echo "$redis_port" >"$dir/redis.port"
  redis_start "$dir"

  cat >"$dir/env" <<ENV
export SLUICE_TEST_POSTGRES_URL='postgresql://sluice@127.0.0.1:$pg_port/sluice_test'
export SLUICE_TEST_REDIS_URL='redis://127.0.0.1:$redis_port'
export SLUICE_TEST_PG_STOP="'$script' pg-stop '$dir'"
export SLUICE_TEST_PG_START="'$script' pg-start '$dir'"
export SLUICE_TEST_REDIS_STOP="'$script' redis-stop '$dir'"
export SLUICE_TEST_REDIS_START="'$script' redis-start '$dir'"
ENV
  echo "$dir"
}

stop() {
  local dir=$1
  [[ -d $dir && -f $dir/pg.port ]] || die "$dir is not a test-services directory"
  pg_stop "$dir" || true
  if [[ -f $dir/redis.pid ]]; then
    local pid
    pid=$(cat "$dir/redis.pid")
    kill "$pid" 2>/dev/null || true
    local i
    for ((i = 0; i < 100; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.05
    done
  fi
  rm -rf "$dir"
}

case ${1:-} in
  start) start "${2:-}" ;;
  stop) stop "${2:?directory}" ;;
  pg-stop) pg_stop "${2:?directory}" ;;
  pg-start) pg_start "${2:?directory}" ;;
  redis-stop) redis_stop "${2:?directory}" ;;
  redis-start) redis_start "${2:?directory}" ;;
  *) die "usage: $0 start [DIR] | stop DIR | pg-stop DIR | pg-start DIR | redis-stop DIR | redis-start DIR" ;;
esac
