// Micro-benchmarks for sluice::codec::SseParser: events/s and heap allocations per event
// for an OpenAI-style chat completion stream, fed whole, one network read at a time and in
// small fragments (the worst case a slow upstream produces).

#include <cstddef>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <benchmark/benchmark.h>

#include "alloc_counter.h"
#include "codec/sse.h"

namespace {

using sluice::codec::SseEvent;
using sluice::codec::SseParser;

// One delta chunk as OpenAI sends it (about 190 bytes), repeated `events` times, then
// the [DONE] marker.
std::string make_openai_stream(int events) {
  std::string out;
  for (int i = 0; i < events; ++i) {
    out +=
        "data: {\"id\":\"chatcmpl-9XyZbench\",\"object\":\"chat.completion.chunk\","
        "\"created\":1700000000,\"model\":\"gpt-4o-mini\",\"system_fingerprint\":\"fp_bench\","
        "\"choices\":[{\"index\":0,\"delta\":{\"content\":\" token" +
        std::to_string(i % 100) + "\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n";
  }
  out += "data: [DONE]\n\n";
  return out;
}

// Anthropic-style blocks: an `event:` line before each data line.
std::string make_anthropic_stream(int events) {
  std::string out;
  for (int i = 0; i < events; ++i) {
    out +=
        "event: content_block_delta\n"
        "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\","
        "\"text\":\" token" +
        std::to_string(i % 100) + "\"}}\n\n";
  }
  out += "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
  return out;
}

// Feeds `stream` in pieces of `chunk` bytes (0 = whole) and drains events after each feed.
void run_parser(benchmark::State& state, const std::string& stream, std::size_t chunk) {
  std::size_t events = 0;
  std::size_t bytes = 0;
  std::size_t allocs = 0;
  for (auto _ : state) {
    SseParser parser;
    SseEvent ev;
    const std::size_t before = sluice::bench::allocation_count();
    std::size_t step = chunk == 0 ? stream.size() : chunk;
    for (std::size_t off = 0; off < stream.size(); off += step) {
      parser.feed(std::string_view(stream).substr(off, step));
      while (parser.next(ev) == SseParser::Status::kEvent) {
        benchmark::DoNotOptimize(ev.data.data());
        ++events;
      }
    }
    while (parser.finish(ev) == SseParser::Status::kEvent) {
      ++events;
    }
    allocs += sluice::bench::allocation_count() - before;
    bytes += stream.size();
  }
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["allocs/event"] =
      events ? static_cast<double>(allocs) / static_cast<double>(events) : 0.0;
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}

void BM_SseParser_OpenAi_Whole(benchmark::State& state) {
  static const std::string stream = make_openai_stream(1000);
  run_parser(state, stream, 0);
}
BENCHMARK(BM_SseParser_OpenAi_Whole);

// Fragment size given in bytes; 200 is roughly one event per read (a paced stream),
// 4096 a read that carries many events (a fast upstream), 7 a pathological splitter.
void BM_SseParser_OpenAi_Chunked(benchmark::State& state) {
  static const std::string stream = make_openai_stream(1000);
  run_parser(state, stream, static_cast<std::size_t>(state.range(0)));
}
BENCHMARK(BM_SseParser_OpenAi_Chunked)->Arg(7)->Arg(200)->Arg(4096);

void BM_SseParser_Anthropic_Chunked(benchmark::State& state) {
  static const std::string stream = make_anthropic_stream(1000);
  run_parser(state, stream, static_cast<std::size_t>(state.range(0)));
}
BENCHMARK(BM_SseParser_Anthropic_Chunked)->Arg(200)->Arg(4096);

// CRLF line endings, split so that CR and LF fall in different feeds half the time.
void BM_SseParser_Crlf_Chunked(benchmark::State& state) {
  static const std::string stream = [] {
    std::string lf = make_openai_stream(1000);
    std::string crlf;
    crlf.reserve(lf.size() * 2);
    for (char c : lf) {
      if (c == '\n') {
        crlf.push_back('\r');
      }
      crlf.push_back(c);
    }
    return crlf;
  }();
  run_parser(state, stream, static_cast<std::size_t>(state.range(0)));
}
BENCHMARK(BM_SseParser_Crlf_Chunked)->Arg(199);

void BM_AppendDataEvent(benchmark::State& state) {
  const std::string payload =
      "{\"id\":\"chatcmpl-9XyZbench\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,"
      "\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" token\"},"
      "\"finish_reason\":null}]}";
  std::string out;
  std::size_t events = 0;
  for (auto _ : state) {
    out.clear();
    for (int i = 0; i < 100; ++i) {
      sluice::codec::append_data_event(out, payload);
    }
    benchmark::DoNotOptimize(out.data());
    events += 100;
  }
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_AppendDataEvent);

}  // namespace
