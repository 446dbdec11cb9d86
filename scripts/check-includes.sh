#!/usr/bin/env bash
# Fails when a file under src/ includes a folder its own folder may not depend on, so the
# dependency direction of docs/architecture.md is checked on every build, not by review:
#
#   core <- ir, codec, config <- aws, gcp (core, codec) <- protocol <- providers, routing, store, cache, guardrails <-
#   redis <- limits, metering, tenancy <- pipeline, http <- admin <- server <- main.cc
#
# Beyond the folder order: a protocol folder never includes another protocol folder (one IR,
# N codecs: no pairwise converters); only protocol/registry.cc names the protocol folders and
# only providers/registry.cc the adapter folders; pipeline/ and server/ see protocols and
# providers through their interfaces only; server/ includes no protocol at all.
# Usage: scripts/check-includes.sh [SRC_DIR]   (prints every violation, exit 1 if any)
set -uo pipefail
src=${1:-"$(cd "$(dirname "$0")/.." && pwd)/src"}
cd "$src" || exit 2

# allowed <folder-of-file> <included-path> -> 0 when allowed
allowed() {
  local from=$1 inc=$2
  local to=${inc%%/*}
  case $from in
    core) [[ $to == core ]] ;;
    ir) [[ $to == core || $to == ir ]] ;;
    codec) [[ $to == core || $to == codec ]] ;;
    config) [[ $to == core || $to == config ]] ;;
    aws) [[ $to =~ ^(core|codec|aws)$ ]] ;;
    gcp) [[ $to =~ ^(core|codec|gcp)$ ]] ;;
    protocol) [[ $to =~ ^(core|ir|codec)$ || $inc =~ ^protocol/[^/]+\.h$ ]] ;;
    protocol/*) [[ $to =~ ^(core|ir|codec)$ || $inc =~ ^protocol/[^/]+\.h$ || $inc == "$from"/* ]] ;;
    providers) [[ $to =~ ^(core|ir|codec|config|protocol)$ || $inc =~ ^providers/[^/]+\.h$ ]] ;;
    providers/*) [[ $to =~ ^(core|ir|codec|config|protocol|aws|gcp)$ || $inc =~ ^providers/[^/]+\.h$ || $inc == "$from"/* ]] ;;
    observability) [[ $to =~ ^(core|codec|observability)$ ]] ;;
    routing) [[ $to =~ ^(core|config|routing)$ ]] ;;
    redis) [[ $to =~ ^(core|config|cache|redis)$ ]] ;;
    limits) [[ $to =~ ^(core|config|redis|limits)$ ]] ;;
    store) [[ $to =~ ^(core|config|store)$ ]] ;;
    cache) [[ $to =~ ^(core|ir|codec|config|cache)$ || $inc =~ ^protocol/[^/]+\.h$ ]] ;;
    metering) [[ $to =~ ^(core|ir|config|store|metering)$ ]] ;;
    guardrails) [[ $to =~ ^(core|codec|config|guardrails)$ ]] ;;
    tenancy) [[ $to =~ ^(core|codec|config|store|tenancy)$ ]] ;;
    pipeline) [[ $to =~ ^(core|ir|codec|config|observability|routing|limits|store|cache|metering|tenancy|guardrails|pipeline)$ ||
                 $inc =~ ^protocol/[^/]+\.h$ || $inc =~ ^providers/[^/]+\.h$ ]] ;;
    http) [[ $to =~ ^(core|codec|config|observability|http)$ || $inc =~ ^providers/[^/]+\.h$ ]] ;;
    admin) [[ $to =~ ^(core|codec|config|observability|store|cache|redis|metering|tenancy|http|admin)$ ]] ;;
    server) [[ $to =~ ^(core|codec|config|observability|routing|limits|store|cache|guardrails|redis|metering|tenancy|pipeline|http|admin|server)$ ||
               $inc =~ ^providers/[^/]+\.h$ ]] ;;
    .) true ;;  # main.cc: wiring only, may include anything
    *) false ;;
  esac
}

violations=0
while IFS= read -r file; do
  dir=$(dirname "$file")
  dir=${dir#./}
  from=$dir
  case $dir in
    protocol/*|providers/*) ;;          # a protocol or adapter folder
    */*) from=${dir%%/*} ;;             # deeper folders belong to their top folder
  esac
  base=$(basename "$file")
  while IFS=: read -r line inc; do
    [[ -z $inc ]] && continue
    [[ ${inc%%/*} =~ ^(core|ir|codec|config|aws|gcp|protocol|providers|observability|routing|limits|store|cache|guardrails|redis|metering|tenancy|pipeline|http|admin|server)$ ]] ||
      continue  # a third-party header written with quotes ("spdlog/spdlog.h")
    # The registries are the one place that names every protocol / adapter folder.
    if [[ $from == protocol && $base == registry.cc && $inc == protocol/* ]]; then continue; fi
    if [[ $from == providers && $base == registry.cc && $inc == providers/* ]]; then continue; fi
    if ! allowed "$from" "$inc"; then
      echo "src/${file#./}:$line: includes \"$inc\", which src/$from/ must not depend on" >&2
      violations=$((violations + 1))
    fi
  done < <(grep -n '^#include "' "$file" | sed -E 's/^([0-9]+):#include "([^"]+)".*/\1:\2/')
done < <(find . -name '*.h' -o -name '*.cc')

if ((violations > 0)); then
  echo "check-includes: $violations upward or sideways include(s); see docs/architecture.md" >&2
  exit 1
fi
