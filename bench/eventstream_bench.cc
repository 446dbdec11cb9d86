// Micro-benchmarks for sluice::codec::EventStreamDecoder: events/s, ns per event and heap
// allocations per event for a recorded Bedrock ConverseStream (tests/fixtures/bedrock/
// converse-stream-text.eventstream.bin, 33 messages of about 200 bytes) repeated 100 times, fed
// whole, one network read at a time and in small fragments. For comparison, the same events
// rendered as SSE (`event: <type>` + `data: <payload>`) through codec::SseParser, so the two
// framings are measured on identical payloads.

#include <cstddef>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include <benchmark/benchmark.h>

#include "alloc_counter.h"
#include "codec/eventstream.h"
#include "codec/sse.h"

namespace {

using sluice::codec::EventStreamDecoder;
using sluice::codec::EventStreamMessage;
using sluice::codec::SseEvent;
using sluice::codec::SseParser;

constexpr int kRepeats = 100;

const std::string& eventstream() {
  static const std::string stream = [] {
    std::ifstream in(SLUICE_FIXTURES_DIR "/bedrock/converse-stream-text.eventstream.bin",
                     std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string out;
    for (int i = 0; i < kRepeats; ++i) {
      out += ss.str();
    }
    return out;
  }();
  return stream;
}

const std::string& sse_of_the_same_events() {
  static const std::string stream = [] {
    EventStreamDecoder decoder;
    EventStreamMessage msg;
    std::string out;
    decoder.feed(eventstream());
    while (decoder.next(msg) == EventStreamDecoder::Status::kMessage) {
      out.append("event: ").append(msg.event_type).append("\ndata: ");
      out.append(msg.payload).append("\n\n");
    }
    return out;
  }();
  return stream;
}

void report(benchmark::State& state, std::size_t events, std::size_t allocs, std::size_t bytes) {
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["s/event"] = benchmark::Counter(
      static_cast<double>(events), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["allocs/event"] =
      events ? static_cast<double>(allocs) / static_cast<double>(events) : 0.0;
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}

// Feeds the stream in pieces of `chunk` bytes (0 = whole) and drains messages after each feed.
// One decoder for the whole run, as one per upstream response would be in steady state.
void BM_EventStream(benchmark::State& state) {
  const std::string& stream = eventstream();
  const std::size_t chunk = static_cast<std::size_t>(state.range(0));
  const std::size_t step = chunk == 0 ? stream.size() : chunk;
  std::size_t events = 0;
  std::size_t bytes = 0;
  std::size_t allocs = 0;
  EventStreamDecoder decoder;
  EventStreamMessage msg;
  for (auto _ : state) {
    const std::size_t before = sluice::bench::allocation_count();
    for (std::size_t off = 0; off < stream.size(); off += step) {
      decoder.feed(std::string_view(stream).substr(off, step));
      while (decoder.next(msg) == EventStreamDecoder::Status::kMessage) {
        benchmark::DoNotOptimize(msg.payload.data());
        benchmark::DoNotOptimize(msg.event_type.data());
        ++events;
      }
    }
    allocs += sluice::bench::allocation_count() - before;
    bytes += stream.size();
  }
  if (decoder.error() != sluice::codec::EventStreamError::kNone) {
    state.SkipWithError("decoder refused the fixture");
  }
  report(state, events, allocs, bytes);
}
// 0 = the whole body in one feed; 200 about one message per read (a paced stream); 4096 a
// read carrying many messages; 7 a pathological splitter.
BENCHMARK(BM_EventStream)->Arg(0)->Arg(7)->Arg(200)->Arg(4096);

// A new decoder per stream of 33 messages (one Bedrock response), as the relay will use it.
void BM_EventStream_PerResponse(benchmark::State& state) {
  const std::string& stream = eventstream();
  const std::string_view one(stream.data(), stream.size() / kRepeats);
  const std::size_t step = static_cast<std::size_t>(state.range(0));
  std::size_t events = 0;
  std::size_t allocs = 0;
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::size_t before = sluice::bench::allocation_count();
    EventStreamDecoder decoder;
    EventStreamMessage msg;
    for (std::size_t off = 0; off < one.size(); off += step) {
      decoder.feed(one.substr(off, step));
      while (decoder.next(msg) == EventStreamDecoder::Status::kMessage) {
        benchmark::DoNotOptimize(msg.payload.data());
        ++events;
      }
    }
    allocs += sluice::bench::allocation_count() - before;
    bytes += one.size();
  }
  report(state, events, allocs, bytes);
}
BENCHMARK(BM_EventStream_PerResponse)->Arg(200)->Arg(4096);

// The same events as SSE through SseParser (a new parser per run, as sse_parser_bench does).
void BM_SseParser_SameEvents(benchmark::State& state) {
  const std::string& stream = sse_of_the_same_events();
  const std::size_t chunk = static_cast<std::size_t>(state.range(0));
  const std::size_t step = chunk == 0 ? stream.size() : chunk;
  std::size_t events = 0;
  std::size_t bytes = 0;
  std::size_t allocs = 0;
  for (auto _ : state) {
    SseParser parser;
    SseEvent ev;
    const std::size_t before = sluice::bench::allocation_count();
    for (std::size_t off = 0; off < stream.size(); off += step) {
      parser.feed(std::string_view(stream).substr(off, step));
      while (parser.next(ev) == SseParser::Status::kEvent) {
        benchmark::DoNotOptimize(ev.data.data());
        ++events;
      }
    }
    allocs += sluice::bench::allocation_count() - before;
    bytes += stream.size();
  }
  report(state, events, allocs, bytes);
}
BENCHMARK(BM_SseParser_SameEvents)->Arg(0)->Arg(7)->Arg(200)->Arg(4096);

}  // namespace
