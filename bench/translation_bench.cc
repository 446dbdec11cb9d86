// Micro-benchmarks for protocol translation (Anthropic callers, OpenAI-compatible upstreams):
//   - streams: recorded OpenAI chunk streams -> SseParser -> openai_chat::StreamDecoder -> IR
//     -> anthropic::StreamEncoder, reported as upstream events per second on one core (the
//     mission's bar is 500k events/s per core); and the other direction (OpenAI callers,
//     Anthropic upstreams): a recorded Anthropic stream -> anthropic::StreamDecoder -> IR ->
//     openai_chat::StreamEncoder;
//   - requests: Anthropic body -> IR -> OpenAI body, small and ~100k-token prompts; and IR ->
//     Anthropic body alone (the OpenAI caller -> Anthropic upstream direction);
//   - responses: OpenAI chat.completion -> IR -> Anthropic message.
// Inputs are the recorded fixtures from tests/fixtures, plus a synthetic long text stream
// built from the shape of a recorded chunk.

#include <cstddef>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <benchmark/benchmark.h>

#include "codec/sse.h"
#include "ir/stream_event.h"
#include "protocol/anthropic/request_decoder.h"
#include "protocol/anthropic/request_encoder.h"
#include "protocol/anthropic/response.h"
#include "protocol/anthropic/stream_decoder.h"
#include "protocol/anthropic/stream_encoder.h"
#include "protocol/openai_chat/request_decoder.h"
#include "protocol/openai_chat/request_encoder.h"
#include "protocol/openai_chat/response.h"
#include "protocol/openai_chat/stream_decoder.h"
#include "protocol/openai_chat/stream_encoder.h"

namespace {

namespace anthropic = sluice::protocol::anthropic;
namespace chat = sluice::protocol::openai_chat;
using sluice::codec::SseEvent;
using sluice::codec::SseParser;

std::string read_fixture(const std::string& rel) {
  std::ifstream in(std::string(SLUICE_FIXTURES_DIR) + "/" + rel, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A long text stream in the shape of chat-stream-text-include-usage.sse: role chunk, N
// one-word content chunks, finish chunk, usage chunk, [DONE].
std::string make_text_stream(int deltas) {
  const std::string head =
      R"(data: {"id":"chatcmpl-BENCH","object":"chat.completion.chunk","created":1700000000,)"
      R"("model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_bench",)"
      R"("choices":[{"index":0,"delta":)";
  std::string out = head + R"({"role":"assistant","content":"","refusal":null},)" +
                    R"("logprobs":null,"finish_reason":null}],"usage":null})" + "\n\n";
  for (int i = 0; i < deltas; ++i) {
    out += head + R"({"content":" word)" + std::to_string(i % 1000) +
           R"("},"logprobs":null,"finish_reason":null}],"usage":null})" + "\n\n";
  }
  out += head + R"({},"logprobs":null,"finish_reason":"stop"}],"usage":null})" + "\n\n";
  out += R"(data: {"id":"chatcmpl-BENCH","object":"chat.completion.chunk","created":1700000000,)"
         R"("model":"gpt-4o-mini-2024-07-18","choices":[],"usage":{"prompt_tokens":12,)"
         R"("completion_tokens":)" +
         std::to_string(deltas) +
         R"(,"total_tokens":99,"prompt_tokens_details":{"cached_tokens":0},)"
         R"("completion_tokens_details":{"reasoning_tokens":0}}})" +
         "\n\n";
  out += "data: [DONE]\n\n";
  return out;
}

// Translates one whole stream the way the gateway's relay does: one feed per network read
// (`read_size` bytes), decode each event, encode the IR events. Returns upstream events.
// Default: an OpenAI upstream for an Anthropic caller.
template <typename Decoder = chat::StreamDecoder, typename Encoder = anthropic::StreamEncoder>
std::size_t translate_stream(std::string_view stream, std::size_t read_size, std::string& out,
                             Encoder encoder = Encoder()) {
  SseParser parser(4 * 1024 * 1024);
  Decoder decoder;
  std::vector<sluice::ir::StreamEvent> events;
  std::size_t count = 0;
  SseEvent ev;
  auto drain = [&](SseParser::Status st, bool at_end) {
    while (st == SseParser::Status::kEvent) {
      ++count;
      events.clear();
      decoder.on_event(ev, events);
      for (const auto& e : events) {
        encoder.encode(e, out);
      }
      st = at_end ? parser.finish(ev) : parser.next(ev);
    }
  };
  for (std::size_t off = 0; off < stream.size(); off += read_size) {
    parser.feed(stream.substr(off, read_size));
    drain(parser.next(ev), false);
    out.clear();  // written to the socket after each read
  }
  drain(parser.finish(ev), true);
  return count;
}

// Returns the upstream events translated.
template <typename Translate>
std::size_t run_stream(benchmark::State& state, const std::string& stream, Translate translate) {
  std::string out;
  out.reserve(64 * 1024);
  std::size_t events = 0;
  for (auto _ : state) {
    events += translate(stream, static_cast<std::size_t>(state.range(0)), out);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * stream.size()));
  return events;
}

void run_stream(benchmark::State& state, const std::string& stream) {
  run_stream(state, stream, [](std::string_view s, std::size_t read_size, std::string& out) {
    return translate_stream(s, read_size, out);
  });
}

void BM_TranslateStream_Text(benchmark::State& state) {
  static const std::string stream = make_text_stream(256);
  run_stream(state, stream);
}
// The OpenAI chunk decoder alone (no SSE framing, no encoder) on the recorded text fixture's
// content chunks: the per-chunk cost of reading an upstream stream. (Moved here from a
// printing unit test: figures belong in the benchmark run, not in the test suite.)
void BM_DecodeOpenAiChunks(benchmark::State& state) {
  const std::string bytes = read_fixture("openai-chat/chat-stream-text-include-usage.sse");
  std::vector<std::string> payloads;
  std::istringstream lines(bytes);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("data: {", 0) == 0 && line.find("\"content\":\"") != std::string::npos &&
        line.find("\"content\":\"\"") == std::string::npos) {
      payloads.push_back(line.substr(6));
    }
  }
  std::vector<SseEvent> events(payloads.size());
  for (std::size_t i = 0; i < payloads.size(); ++i) {
    events[i].data = payloads[i];
    events[i].has_data = true;
  }
  chat::StreamDecoder decoder;
  std::vector<sluice::ir::StreamEvent> out;
  out.reserve(8);
  for (auto _ : state) {
    for (const SseEvent& ev : events) {
      out.clear();
      decoder.on_event(ev, out);
      benchmark::DoNotOptimize(out.data());
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * events.size()));
}
BENCHMARK(BM_DecodeOpenAiChunks);

BENCHMARK(BM_TranslateStream_Text)->Arg(1 << 20)->Arg(4096)->Arg(512);

void BM_TranslateStream_RecordedText(benchmark::State& state) {
  static const std::string stream = read_fixture("openai-chat/chat-stream-text-include-usage.sse");
  run_stream(state, stream);
}
BENCHMARK(BM_TranslateStream_RecordedText)->Arg(4096);

void BM_TranslateStream_RecordedParallelTools(benchmark::State& state) {
  static const std::string stream = read_fixture("openai-chat/chat-stream-parallel-tool-calls.sse");
  run_stream(state, stream);
}
BENCHMARK(BM_TranslateStream_RecordedParallelTools)->Arg(4096);

// OpenAI caller, Anthropic upstream: the recorded thinking stream (a thinking block, its
// signature, ~95 text deltas; live padding and pings) -> anthropic::StreamDecoder -> IR ->
// openai_chat::StreamEncoder with include_usage. Items = upstream events.
void BM_TranslateStream_AnthropicToOpenAi(benchmark::State& state) {
  static const std::string stream = read_fixture("anthropic/stream-thinking-signature.sse");
  const std::size_t events =
      run_stream(state, stream, [](std::string_view s, std::size_t read_size, std::string& out) {
        return translate_stream<anthropic::StreamDecoder>(
            s, read_size, out, chat::StreamEncoder(/*include_usage=*/true, 1'700'000'000));
      });
  state.SetItemsProcessed(static_cast<std::int64_t>(events));
}
BENCHMARK(BM_TranslateStream_AnthropicToOpenAi)->Arg(4096)->Arg(512);

std::string anthropic_request(std::size_t prompt_bytes) {
  std::string text;
  const std::string sentence = "The quick brown fox jumps over the lazy dog near the river bank. ";
  while (text.size() < prompt_bytes) {
    text += sentence;
  }
  return R"({"model":"bench-model","max_tokens":256,"system":"You are a terse assistant.",)"
         R"("messages":[{"role":"user","content":")" +
         text + R"("}],"temperature":0.2})";
}

void run_request(benchmark::State& state, const std::string& body) {
  for (auto _ : state) {
    auto ir = anthropic::decode_request(body);
    if (!ir) {
      state.SkipWithError("decode failed");
      return;
    }
    std::string up = chat::encode_request(*ir, "gpt-4o-mini", false);
    benchmark::DoNotOptimize(up.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * body.size()));
}

void BM_TranslateRequest_Small(benchmark::State& state) {
  static const std::string body = anthropic_request(40);
  run_request(state, body);
}
BENCHMARK(BM_TranslateRequest_Small);

void BM_TranslateRequest_100kTokens(benchmark::State& state) {
  static const std::string body = anthropic_request(390 * 1024);
  run_request(state, body);
}
BENCHMARK(BM_TranslateRequest_100kTokens);

// anthropic::encode_request alone: the IR is decoded once, outside the loop. Arg: prompt bytes
// (40, and ~100k tokens).
void BM_EncodeAnthropicRequest(benchmark::State& state) {
  const std::string body = anthropic_request(static_cast<std::size_t>(state.range(0)));
  auto ir = anthropic::decode_request(body);
  if (!ir) {
    state.SkipWithError("decode failed");
    return;
  }
  for (auto _ : state) {
    auto up = anthropic::encode_request(*ir, "claude-sonnet-4-5", false);
    if (!up) {
      state.SkipWithError("encode failed");
      return;
    }
    benchmark::DoNotOptimize(up->data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * body.size()));
}
BENCHMARK(BM_EncodeAnthropicRequest)->Arg(40)->Arg(390 * 1024);

void BM_TranslateResponse(benchmark::State& state) {
  static const std::string body = read_fixture("openai-chat/chat-completion-text.json");
  for (auto _ : state) {
    auto ir = chat::decode_response(body);
    if (!ir) {
      state.SkipWithError("decode failed");
      return;
    }
    auto out = anthropic::encode_response(*ir);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_TranslateResponse);

}  // namespace
