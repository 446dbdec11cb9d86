#!/usr/bin/env bash
# What input guardrails cost a whole request: one Sluice (1 worker, core 1) in front of
# sluice-mock-upstream (core 0), in rounds that cycle through the configs, API-key auth in all:
#   off-4k, off-100k          no guardrails
#   pii-4k, pii-100k          every built-in detector of `pii` and `secrets`, redacting
#   *-tr-*                    the same with an Anthropic upstream (the request is translated)
# over a 4 KB and a 100 KB chat body of prose with an e-mail address, a phone number or a card
# number every ~500 bytes (bench/out/guardrails-<run>/body-*.json). wrk with bench/lua/chat.lua:
# c=1 for latency, c=64 for throughput; with the 4 KB body c=64 saturates the worker's core, so
# 1 / req/s is the gateway's CPU per request (with 100 KB the load side's core saturates first).
#
#   bench/guardrails.sh [--duration S] [--rounds N] [--build DIR] [--results FILE | --no-results]
#
# Writes (or replaces) the "Guardrails, 4 KB prompt" and "Guardrails, 100 KB prompt" sections of
# bench/RESULTS.md; the full bench run (bench/run.sh) keeps them when it rewrites the file.
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH_NAME=guardrails
DURATION=5
source bench/variants.sh "$@"
KEY=sk-bench-guardrails-000000001

for size in 4 100; do
  python3 - "$size" "$OUT/body-${size}k.json" <<'PY'
import json, random, sys
size, out = int(sys.argv[1]) * 1024, sys.argv[2]
random.seed(11)
words = ("the shipment left the warehouse on monday and the customer asked about the invoice "
         "total before the end of the quarter while the team reviewed the latency report").split()
finds = ["reach ann.lee@example.org", "call +44 20 7946 0958", "card 4111 1111 1111 1111"]
text, i = [], 0
while sum(len(w) + 1 for w in text) < size - 200:
    text.append(random.choice(words))
    i += 1
    if i % 80 == 0:
        text.append(finds[(i // 80) % len(finds)])
body = {"model": "bench-model", "max_tokens": 16,
        "messages": [{"role": "system", "content": "You answer support questions."},
                     {"role": "user", "content": " ".join(text)}]}
open(out, "w").write(json.dumps(body))
PY
done

config() {  # config MODE -> YAML
  local mode=$1 provider=up
  [[ $mode == *-tr-* ]] && provider=claude
  cat <<YAML
version: 1
listen: 127.0.0.1:0
server: { workers: 1 }
access_log: { enabled: false }
guardrails:
  policies:
    - name: pii
      detectors: [{ builtin: pii, action: redact }, { builtin: secrets, action: redact }]
providers:
  - { id: up, adapter: openai, base_url: "http://127.0.0.1:$MOCK_PORT/v1", api_key: sk-up }
  - { id: claude, adapter: anthropic, base_url: "http://127.0.0.1:$MOCK_PORT", api_key: sk-up }
keys:
  - { name: bench, key: $KEY }
YAML
  if [[ $mode == pii* ]]; then
    echo "routes: [{ alias: bench-model, provider: $provider, model: m, guardrails: [pii] }]"
  else
    echo "routes: [{ alias: bench-model, provider: $provider, model: m }]"
  fi
}

after_start() {  # after_start MODE PID: the body of the mode's size
  export BENCH_BODY_FILE="$OUT/body-${1##*-}.json"
}

run_variants off-4k pii-4k off-tr-4k pii-tr-4k off-100k pii-100k off-tr-100k pii-tr-100k

for size in 4k 100k; do
  label="4 KB"
  [[ $size == 100k ]] && label="100 KB"
  bench/variants_report.py "$OUT/results.jsonl" "$RESULTS" "Guardrails, $label prompt" \
    "off-$size,pii-$size,off-tr-$size,pii-tr-$size" \
    "Written by \`bench/guardrails.sh\` (run $RUN; $ROUNDS rounds of $DURATION s per cell, medians). \
One Sluice worker on core 1 in front of \`sluice-mock-upstream\` on core 0, API-key auth, a $label \
chat body of prose with an e-mail address, a phone number or a card number every ~500 bytes. \
\`pii\` = a route policy with every built-in detector of \`pii\` and \`secrets\`, redacting; \
\`tr\` = an Anthropic upstream (the redacted request is translated). Added and ratio columns are against \`off-$size\`: compare the \`tr\` rows with \`off-tr-$size\`. \
With the 4 KB body c=64 saturates the worker's core, so 1 / req/s is its CPU per request; with \
100 KB the load side's core (wrk and the mock parsing every body) saturates first, so read the \
c=1 latency there."
done
