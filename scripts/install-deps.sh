#!/usr/bin/env bash
# Installs what building, running and testing Sluice needs on Debian 12, and nothing that
# is already there. Safe to run repeatedly. Usage: scripts/install-deps.sh [--test] [--bench]
set -euo pipefail
cd "$(dirname "$0")/.."

want_test=0
want_bench=0
for arg in "$@"; do
  case "$arg" in
    --test) want_test=1 ;;
    --bench) want_bench=1 ;;
    *) echo "unknown option $arg" >&2; exit 2 ;;
  esac
done

packages=(
  build-essential cmake ninja-build pkg-config ccache
  libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev
  libssl-dev libyaml-cpp-dev libspdlog-dev libfmt-dev libcli11-dev libsqlite3-dev libpq-dev
  libhiredis-dev zlib1g-dev libre2-dev
  openssl ca-certificates
)
if [[ $want_test == 1 ]]; then
  packages+=(libgtest-dev libgmock-dev curl clang-14 libclang-rt-14-dev postgresql redis-server)  # clang: scripts/run-fuzz.sh
  # .ci/run checks that every tracked C++ file is formatted (scripts/check-format.sh).
  packages+=(clang-format-14)
  # The Prometheus client's text-format parser checks the /metrics exposition
  # (tests/integration/metrics.test.mjs runs it with Debian's /usr/bin/python3).
  packages+=(python3-prometheus-client)
  # tests/integration/metering.test.mjs reads the usage ledger and locks it from another
  # process (the store-outage test) with the sqlite3 CLI.
  packages+=(sqlite3)
fi
if [[ $want_bench == 1 ]]; then
  packages+=(libbenchmark-dev nginx-light wrk nghttp2-client)
fi
if [[ $want_test == 1 || $want_bench == 1 ]]; then
  command -v node >/dev/null 2>&1 || packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# Node packages, pinned by each package-lock.json: tests/ (official SDKs for the integration and
# conformance tests) and tests/clients/ (Claude Code, AI SDK, LangChain, Agents SDK).
if [[ $want_test == 1 ]]; then
  for dir in tests tests/clients; do
    stamp=$dir/node_modules/.package-lock.json
    if [[ ! -f $stamp || $dir/package-lock.json -nt $stamp ]]; then
      (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
    fi
  done
fi
