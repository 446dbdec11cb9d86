#!/usr/bin/env bash
# Builds the fuzz preset (clang, libFuzzer + ASan + UBSan), replays every committed regression
# input (tests/fuzz/regressions/<target>/), then fuzzes each target for a while, starting from
# the recorded fixtures (tests/fixtures/), the hand-written seeds (tests/fuzz/seeds/<target>/)
# and what earlier runs found (build/fuzz/corpus/<target>/, kept between runs).
# Exits non-zero when any input crashes, naming the target and the input file.
# Usage: scripts/run-fuzz.sh [seconds-per-target]   (default 20; see tests/fuzz/README.md)
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
jobs=${JOBS:-2}
bin=build/fuzz/bin
corpus_root=build/fuzz/corpus
crash_root=build/fuzz/crashes
fixtures=tests/fixtures

# target -> -max_len: requests and responses are small; streams hold a whole recorded
# stream (the largest fixture is 16 KB) plus the one-byte chunking header.
declare -A max_len=(
  [sse_parser_fuzz]=4096
  [openai_chat_request_fuzz]=4096
  [openai_ir_request_fuzz]=4096
  [openai_response_fuzz]=4096
  [openai_stream_fuzz]=20000
  [anthropic_request_fuzz]=4096
  [anthropic_response_fuzz]=4096
  [anthropic_stream_fuzz]=20000
  [gemini_request_fuzz]=4096
  [gemini_stream_fuzz]=20000
  [responses_request_fuzz]=4096
  [responses_stream_fuzz]=20000
  [guardrails_fuzz]=8192
  [eventstream_fuzz]=20000
  [embeddings_fuzz]=16384
  [live_record_fuzz]=4096
)
targets=(sse_parser_fuzz openai_chat_request_fuzz openai_ir_request_fuzz openai_response_fuzz
  openai_stream_fuzz anthropic_request_fuzz anthropic_response_fuzz anthropic_stream_fuzz
  gemini_request_fuzz gemini_stream_fuzz responses_request_fuzz responses_stream_fuzz guardrails_fuzz
  eventstream_fuzz embeddings_fuzz live_record_fuzz)

start=$(date +%s)
cmake --preset fuzz >/dev/null || exit 1
cmake --build --preset fuzz -j "$jobs" || exit 1

# The SSE-driven targets read a chunking header first (tests/fuzz/fuzz_support.h): 0x00 feeds
# the stream whole, 0x01 0x06 in 7-byte chunks.
seed_sse() {
  local dir=$1 f
  shift
  for f in "$@"; do
    [[ -f $f ]] || continue
    { printf '\000'; cat "$f"; } >"$dir/fixture-whole-$(basename "$f")"
    { printf '\001\006'; cat "$f"; } >"$dir/fixture-7-$(basename "$f")"
  done
}
seed_copy() {
  local dir=$1 f
  shift
  for f in "$@"; do
    [[ -f $f ]] && cp "$f" "$dir/fixture-$(basename "$f")"
  done
}
seed() {
  local target=$1 dir=$corpus_root/$1
  mkdir -p "$dir"
  case $target in
    sse_parser_fuzz) seed_sse "$dir" "$fixtures"/*/*.sse ;;
    openai_stream_fuzz) seed_sse "$dir" "$fixtures"/openai-chat/*.sse ;;
    anthropic_stream_fuzz) seed_sse "$dir" "$fixtures"/anthropic/*.sse ;;
    openai_response_fuzz) seed_copy "$dir" "$fixtures"/openai-chat/*.json ;;
    anthropic_response_fuzz) seed_copy "$dir" "$fixtures"/anthropic/*.json ;;
    openai_chat_request_fuzz) seed_copy "$dir" tests/fuzz/seeds/openai_ir_request_fuzz/* ;;
    gemini_stream_fuzz) seed_sse "$dir" "$fixtures"/gemini/*.sse ;;
    responses_stream_fuzz) seed_sse "$dir" "$fixtures"/openai-responses/*.sse ;;
    eventstream_fuzz) seed_sse "$dir" "$fixtures"/bedrock/*.eventstream.bin ;;  # same header
    guardrails_fuzz) seed_copy "$dir" "$fixtures"/openai-chat/*.json "$fixtures"/anthropic/*.json ;;
    gemini_request_fuzz)  # it also reads its input as Anthropic and OpenAI requests
      seed_copy "$dir" tests/fuzz/seeds/anthropic_request_fuzz/* \
        tests/fuzz/seeds/openai_ir_request_fuzz/* ;;
  esac
  if [[ -d tests/fuzz/seeds/$target ]]; then
    seed_copy "$dir" tests/fuzz/seeds/"$target"/*
  fi
}

# The lines of a libFuzzer log that say what broke and where.
report() {
  grep -m1 -A30 -E 'fuzz invariant violated|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:' "$1" |
    grep -vE '^ +#[0-9]+ 0x[0-9a-f]+ in (fuzzer::|__libc|_start|main )' | head -n 30
}

# The committed crashers: one run each, every run.
regressions() {
  find "tests/fuzz/regressions/$1" -type f ! -name '.*' ! -name '*.md' 2>/dev/null | sort
}

failed=()
for t in "${targets[@]}"; do
  mapfile -t inputs < <(regressions "$t")
  if ((${#inputs[@]})); then
    if ! "$bin/$t" -rss_limit_mb=2048 -timeout=10 "${inputs[@]}" >"build/fuzz/$t-regressions.log" 2>&1; then
      report "build/fuzz/$t-regressions.log"
      failed+=("$t: a regression input crashes again (tests/fuzz/regressions/$t/; log build/fuzz/$t-regressions.log)")
    fi
  fi
  echo "fuzz: $t: ${#inputs[@]} regression input(s) replayed"
done

# One libFuzzer process per target (-jobs/-workers left at 1), $jobs targets at a time: each
# is one single-threaded process, so two cores fuzz two targets in the time of one.
fuzz_target() {  # fuzz_target TARGET: fuzz for $seconds; exit status is libFuzzer's
  local t=$1 crashes=$crash_root/$1 extra=()
  mkdir -p "$crashes"
  [[ -d tests/fuzz/regressions/$t ]] && extra+=("tests/fuzz/regressions/$t")
  "$bin/$t" -max_total_time="$seconds" -max_len="${max_len[$t]}" -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$crashes/" \
    "$corpus_root/$t" "${extra[@]}" >"build/fuzz/$t.log" 2>&1
}
declare -A pid_of=()
for t in "${targets[@]}"; do
  seed "$t"
  while (($(jobs -rp | wc -l) >= jobs)); do wait -n || true; done
  echo "fuzz: $t for ${seconds}s (max_len ${max_len[$t]}, log build/fuzz/$t.log)"
  fuzz_target "$t" &
  pid_of[$t]=$!
done
for t in "${targets[@]}"; do  # in target order, whichever finished first
  wait "${pid_of[$t]}"
  rc=$?
  log=build/fuzz/$t.log
  echo "fuzz: $t: $(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$') inputs run," \
    "$(find "$corpus_root/$t" -type f | wc -l) in the corpus, peak RSS" \
    "$(grep -oE 'stat::peak_rss_mb: *[0-9]+' "$log" | grep -oE '[0-9]+$') MB"
  if [[ $rc -ne 0 ]]; then
    report "$log"
    artifact=$(grep -oE "Test unit written to [^ ]+" "$log" | tail -n 1 | sed 's/Test unit written to //')
    failed+=("$t: crashed (exit $rc); input: ${artifact:-see $log}; log: $log")
  fi
done

echo
echo "== fuzz summary ($((($(date +%s) - start)))s) =="
if ((${#failed[@]})); then
  for f in "${failed[@]}"; do echo "  FAILED $f"; done
  echo "Reproduce: $bin/<target> <input>; minimise: $bin/<target> -minimize_crash=1 -runs=10000 <input>"
  exit 1
fi
echo "  all ${#targets[@]} targets ran ${seconds}s each without a crash"
