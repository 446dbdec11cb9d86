// Stream translation for every caller x upstream protocol pair, through the production path the
// relay loop uses (pipeline::make_translation: the upstream protocol's StreamDecoder, the caller
// codec's StreamEncoder), on each protocol's recorded text stream from tests/fixtures. One
// benchmark per pair, registered from the protocol registry, so a new protocol is measured
// without a change here:
//
//   BM_Translate/<caller>/<upstream>/<read size>
//   BM_TranslateLong/<caller>/<upstream>/<read size>: the same on a long stream made by
//     repeating one block of the fixture (Recorded::repeatable), where per-request setup
//     (decoder, encoder, first buffers) no longer weighs on the per-event figures
//
// Counters: events/s = upstream SSE events translated per second on one core (the goal
// is 1M/s); allocs/event = heap allocations per upstream event (counted by this binary's
// operator new). BM_Passthrough/<protocol> is the same stream relayed verbatim with the
// protocol's sniffer, the baseline the translated figures compare with: for an upstream no
// caller speaks (Bedrock Converse, read from AWS's binary event stream), the caller's own
// passthrough figure is the one to compare with.

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <benchmark/benchmark.h>

#include "alloc_counter.h"
#include "codec/sse.h"
#include "codec/upstream_events.h"
#include "pipeline/request_context.h"
#include "pipeline/stream_transform.h"
#include "protocol/ingress.h"
#include "protocol/registry.h"

namespace {

using sluice::codec::SseEvent;
using sluice::codec::UpstreamEvents;
namespace pipeline = sluice::pipeline;
namespace protocol = sluice::protocol;

struct Recorded {
  std::string_view protocol;
  const char* fixture;  // a text stream with usage, as each provider sends one
  // When >= 0: the SSE block (0-based) that can be repeated to make a long stream of the same
  // shape (BM_TranslateLong: per-event costs without the per-request ones of a short fixture).
  int repeatable = -1;
  UpstreamEvents::Framing framing = UpstreamEvents::Framing::kSse;
};

constexpr Recorded kStreams[] = {
    {"openai_chat", "openai-chat/chat-stream-text-include-usage.sse"},
    {"anthropic_messages", "anthropic/stream-thinking-signature.sse"},
    // Every Gemini chunk is a whole GenerateContentResponse: the second one (text, cumulative
    // usage) can stand again and again.
    {"gemini", "gemini/stream-text-thoughts-usage.sse", 1},
    {"openai_responses", "openai-responses/stream-text.sse"},
    {"bedrock_converse", "bedrock/converse-stream-text.eventstream.bin", -1,
     UpstreamEvents::Framing::kEventStream},
};

constexpr int kLongRepeats = 256;

// `stream` with its block `index` standing `times` times in its place (blocks end at a blank
// line: CRLF CRLF or LF LF).
std::string repeat_block(const std::string& stream, int index, int times) {
  std::vector<std::string_view> blocks;
  std::string_view rest = stream;
  while (!rest.empty()) {
    std::size_t end = rest.find("\r\n\r\n");
    std::size_t sep = 4;
    if (const std::size_t lf = rest.find("\n\n"); lf < end) {
      end = lf;
      sep = 2;
    }
    const std::size_t take = end == std::string_view::npos ? rest.size() : end + sep;
    blocks.push_back(rest.substr(0, take));
    rest.remove_prefix(take);
  }
  std::string out;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    for (int k = 0; k < (static_cast<int>(i) == index ? times : 1); ++k) {
      out.append(blocks[i]);
    }
  }
  return out;
}

std::string read_fixture(const std::string& rel) {
  std::ifstream in(std::string(SLUICE_FIXTURES_DIR) + "/" + rel, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Feeds `stream` in `read_size` pieces the way the relay loop does; returns upstream events.
std::size_t relay(pipeline::StreamTransform& transform, std::string_view stream,
                  UpstreamEvents::Framing framing, std::size_t read_size, std::string& out) {
  UpstreamEvents parser(4 * 1024 * 1024);
  parser.set_framing(framing);
  SseEvent ev;
  std::size_t events = 0;
  for (std::size_t off = 0; off < stream.size(); off += read_size) {
    parser.feed(stream.substr(off, read_size));
    while (parser.next(ev) == UpstreamEvents::Status::kEvent) {
      ++events;
      transform.on_event(ev, false, out);
    }
    out.clear();  // written to the socket after each read
  }
  if (parser.finish(ev) == UpstreamEvents::Status::kEvent) {
    ++events;
    transform.on_event(ev, true, out);
  }
  transform.on_end(out);
  out.clear();
  return events;
}

template <typename MakeTransform>
void run(benchmark::State& state, const std::string& stream, UpstreamEvents::Framing framing,
         MakeTransform make) {
  std::string out;
  out.reserve(64 * 1024);
  std::size_t events = 0;
  const std::size_t allocations_before = sluice::bench::allocation_count();
  for (auto _ : state) {
    auto transform = make();
    events += relay(*transform, stream, framing, static_cast<std::size_t>(state.range(0)), out);
    benchmark::DoNotOptimize(out.data());
  }
  const std::size_t allocations = sluice::bench::allocation_count() - allocations_before;
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["allocs/event"] =
      events == 0 ? 0.0 : static_cast<double>(allocations) / static_cast<double>(events);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * stream.size()));
}

const protocol::IngressCodec* codec_of(std::string_view wire) {
  protocol::IngressRequest probe;
  for (const protocol::IngressCodec* c : protocol::ingress_codecs()) {
    if (c->protocol() == wire && c->make_stream_encoder(probe) != nullptr) {
      return c;
    }
  }
  return nullptr;
}

// Streams live as long as the process (benchmarks run after registration).
const bool kRegistered = [] {
  for (const Recorded& up : kStreams) {
    const protocol::UpstreamCodec* upstream =
        protocol::find_upstream(up.protocol, protocol::Operation::kChat);
    if (upstream == nullptr) {
      continue;  // a protocol not in this build
    }
    const std::string* stream = new std::string(read_fixture(up.fixture));
    const UpstreamEvents::Framing framing = up.framing;

    // No passthrough where no caller speaks the upstream's protocol (Bedrock Converse).
    if (const protocol::IngressCodec* native = codec_of(up.protocol)) {
      benchmark::RegisterBenchmark(("BM_Passthrough/" + std::string(up.protocol)).c_str(),
                                   [native, stream, framing](benchmark::State& state) {
                                     run(state, *stream, framing, [native] {
                                       protocol::IngressRequest request;
                                       request.stream = true;
                                       request.include_usage = true;
                                       return pipeline::make_passthrough(
                                           *native, native->make_stream_sniffer(request));
                                     });
                                   })
          ->Arg(4096);
    }

    const std::string* long_stream =
        up.repeatable >= 0 ? new std::string(repeat_block(*stream, up.repeatable, kLongRepeats))
                           : nullptr;

    protocol::IngressRequest probe;
    for (const protocol::IngressCodec* caller : protocol::ingress_codecs()) {
      if (caller->protocol() == up.protocol || caller->operation() != protocol::Operation::kChat ||
          caller->make_stream_encoder(probe) == nullptr) {
        continue;
      }
      auto translate = [caller, upstream] {
        protocol::IngressRequest request;
        request.stream = true;
        request.include_usage = true;
        request.estimated_input_tokens = 12;
        return pipeline::make_translation(*caller, upstream->make_stream_decoder(),
                                          caller->make_stream_encoder(request));
      };
      const std::string pair = std::string(caller->protocol()) + "/" + std::string(up.protocol);
      benchmark::RegisterBenchmark(("BM_Translate/" + pair).c_str(),
                                   [stream, framing, translate](benchmark::State& state) {
                                     run(state, *stream, framing, translate);
                                   })
          ->Arg(4096)
          ->Arg(512);
      if (long_stream != nullptr) {
        benchmark::RegisterBenchmark(("BM_TranslateLong/" + pair).c_str(),
                                     [long_stream, framing, translate](benchmark::State& state) {
                                       run(state, *long_stream, framing, translate);
                                     })
            ->Arg(4096);
      }
    }
  }
  return true;
}();

}  // namespace
