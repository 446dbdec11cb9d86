#pragma once

// Helpers shared by the Gemini codec tests.

#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "../../support/fixtures.h"
#include "codec/sse.h"
#include "ir/stream_event.h"
#include "protocol/gemini/stream_decoder.h"

namespace sluice::protocol::gemini::test {

inline std::string fixture(std::string_view name) {
  return sluice::test::read_fixture("gemini", name);
}

// Decodes a whole SSE body, feeding the parser `step` bytes at a time (0 = all at once).
inline std::vector<ir::StreamEvent> decode_stream(std::string_view bytes, std::size_t step = 0) {
  StreamDecoder decoder;
  std::vector<ir::StreamEvent> out;
  sluice::test::for_each_sse_event(bytes, step,
                                   [&](const codec::SseEvent& ev) { decoder.on_event(ev, out); });
  decoder.on_end(out);
  return out;
}

// Decodes a body fed as two pieces, split at byte `at`.
inline std::vector<ir::StreamEvent> decode_split(std::string_view bytes, std::size_t at) {
  StreamDecoder decoder;
  std::vector<ir::StreamEvent> out;
  codec::SseParser parser;
  codec::SseEvent ev;
  for (std::string_view piece : {bytes.substr(0, at), bytes.substr(at)}) {
    parser.feed(piece);
    while (parser.next(ev) == codec::SseParser::Status::kEvent) {
      decoder.on_event(ev, out);
    }
  }
  if (parser.finish(ev) == codec::SseParser::Status::kEvent) {
    decoder.on_event(ev, out);
  }
  decoder.on_end(out);
  return out;
}

inline std::string describe(const ir::StreamEvent& e) {
  std::ostringstream s;
  s << static_cast<int>(e.kind) << "|" << e.index << "|" << e.text << "|" << e.id << "|" << e.name
    << "|" << e.model << "|" << static_cast<int>(e.finish) << "|" << e.usage.input_tokens << ","
    << e.usage.output_tokens << "," << e.usage.cache_read_tokens << ","
    << e.usage.cache_write_tokens << "," << e.usage.reasoning_tokens << "|" << e.error.message();
  return s.str();
}

inline std::vector<std::string> describe(const std::vector<ir::StreamEvent>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) {
    out.push_back(describe(e));
  }
  return out;
}

// What a client keeps of an IR stream: text, reasoning, signatures, tool calls, finish, usage.
struct Folded {
  std::string id;
  std::string model;
  std::string text;
  std::string reasoning;
  std::string signatures;
  std::vector<std::string> calls;  // "id|name|arguments"
  ir::FinishReason finish = ir::FinishReason::kUnset;
  ir::Usage usage;
  bool done = false;
  bool error = false;

  bool operator==(const Folded&) const = default;
};

inline Folded fold(const std::vector<ir::StreamEvent>& events) {
  Folded f;
  std::vector<std::string> ids;
  std::vector<std::string> names;
  std::vector<std::string> args;
  for (const ir::StreamEvent& e : events) {
    switch (e.kind) {
      case ir::StreamEventKind::kStart:
        f.id = e.id;
        f.model = e.model;
        break;
      case ir::StreamEventKind::kTextDelta:
        f.text += e.text;
        break;
      case ir::StreamEventKind::kReasoningDelta:
        f.reasoning += e.text;
        break;
      case ir::StreamEventKind::kReasoningSignature:
        f.signatures += e.text + ";";
        break;
      case ir::StreamEventKind::kToolCallStart:
        if (e.index >= ids.size()) {
          ids.resize(e.index + 1);
          names.resize(e.index + 1);
          args.resize(e.index + 1);
        }
        ids[e.index] = e.id;
        names[e.index] = e.name;
        break;
      case ir::StreamEventKind::kToolCallDelta:
        if (e.index < args.size()) {
          args[e.index] += e.text;
        }
        break;
      case ir::StreamEventKind::kUsage:
        f.usage = e.usage;
        break;
      case ir::StreamEventKind::kFinish:
        f.finish = e.finish;
        break;
      case ir::StreamEventKind::kDone:
        f.done = true;
        break;
      case ir::StreamEventKind::kError:
        f.error = true;
        break;
      case ir::StreamEventKind::kRedactedReasoning:
        break;
    }
  }
  for (std::size_t i = 0; i < ids.size(); ++i) {
    f.calls.push_back(ids[i] + "|" + names[i] + "|" + args[i]);
  }
  return f;
}

}  // namespace sluice::protocol::gemini::test
