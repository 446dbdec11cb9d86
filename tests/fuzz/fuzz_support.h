#pragma once

// Shared by the libFuzzer targets in this folder (README.md): invariant checks that stop the
// run, the input layout of the SSE-driven targets, and checkers for the contracts of
// ir/stream_event.h, of the Anthropic SSE that anthropic::StreamEncoder writes and of the
// OpenAI chunk SSE that openai_chat::StreamEncoder writes.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "codec/json_read.h"
#include "codec/sse.h"
#include "ir/stream_event.h"
#include "protocol/anthropic/stream_encoder.h"
#include "protocol/openai_chat/conventions.h"
#include "protocol/openai_chat/response.h"
#include "protocol/openai_chat/stream_decoder.h"
#include "protocol/openai_chat/stream_encoder.h"
#include "protocol/stream.h"

namespace sluice::fuzz {

// A broken invariant: says which on stderr and traps, so libFuzzer records the input as a
// crash (crash-<sha1> in the working directory, or -artifact_prefix=).
[[noreturn]] inline void fail(std::string_view what, std::string_view detail = {}) {
  std::fprintf(stderr, "\n*** fuzz invariant violated: %.*s\n", static_cast<int>(what.size()),
               what.data());
  if (!detail.empty()) {
    const std::size_t n = std::min<std::size_t>(detail.size(), 2000);
    std::fprintf(stderr, "*** detail: %.*s\n", static_cast<int>(n), detail.data());
  }
  std::fflush(stderr);
  __builtin_trap();
}

inline void check(bool ok, std::string_view what, std::string_view detail = {}) {
  if (!ok) {
    fail(what, detail);
  }
}

// Whether two JSON values are equal except for the last digits of doubles. Boost.JSON 1.81 reads
// decimal numbers imprecisely (no correctly rounded mode), so a double written in its shortest
// form may read back one ulp off and print differently on the next round trip: that is the
// parser's rounding, not a codec changing the request, and the fixed-point checks allow it.
inline bool same_but_float_rounding(const boost::json::value& a, const boost::json::value& b) {
  if (a.is_double() || b.is_double()) {
    if (!a.is_number() || !b.is_number()) {
      return false;
    }
    const double x = a.to_number<double>();
    const double y = b.to_number<double>();
    if (x == y || (x != x && y != y)) {
      return true;
    }
    const double scale = std::max(x < 0 ? -x : x, y < 0 ? -y : y);
    return (x - y < 0 ? y - x : x - y) <= scale * 1e-14;
  }
  if (a.kind() != b.kind()) {
    return false;
  }
  if (a.is_array()) {
    const auto& x = a.get_array();
    const auto& y = b.get_array();
    if (x.size() != y.size()) {
      return false;
    }
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (!same_but_float_rounding(x[i], y[i])) {
        return false;
      }
    }
    return true;
  }
  if (a.is_object()) {
    const auto& x = a.get_object();
    const auto& y = b.get_object();
    if (x.size() != y.size()) {
      return false;
    }
    for (const auto& member : x) {  // members in any order, as JSON means
      const boost::json::value* other = y.if_contains(member.key());
      if (other == nullptr || !same_but_float_rounding(member.value(), *other)) {
        return false;
      }
    }
    return true;
  }
  return a == b;
}

// `text` as JSON, or nullopt when it is not valid JSON. The depth bound only keeps the check
// itself from recursing without end: encoders may legitimately nest a little deeper than the
// 64 levels the decoders accept.
inline std::optional<boost::json::value> parse_json(std::string_view text) {
  boost::json::parse_options opts;
  opts.max_depth = 1024;
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(text, ec, {}, opts);
  if (ec) {
    return std::nullopt;
  }
  return v;
}

// Two encodings that are the same JSON, up to the parser's rounding of doubles
// (same_but_float_rounding).
inline bool same_encoding(std::string_view a, std::string_view b) {
  if (a == b) {
    return true;
  }
  const auto x = parse_json(a);
  const auto y = parse_json(b);
  return x && y && same_but_float_rounding(*x, *y);
}

// Checks that `text` is valid JSON and returns it.
inline boost::json::value expect_json(std::string_view text, std::string_view what) {
  auto v = parse_json(text);
  check(v.has_value(), what, text);
  return std::move(*v);
}

// Checks that an encoded request body is a JSON object whose "model" is `model`.
inline void check_model(std::string_view body, std::string_view model) {
  const boost::json::value v = expect_json(body, "encoded request is not valid JSON");
  const auto* m = v.is_object() ? v.get_object().if_contains("model") : nullptr;
  check(m != nullptr && m->is_string() && m->get_string() == model,
        "encoded request does not carry the upstream model", body);
}

// The input of the SSE-driven targets: the first byte says how to cut the rest into feed()
// chunks, so chunk boundaries are fuzzed along with the bytes.
//   bits 0-2: n, the number of chunk-length bytes that follow (byte b = a chunk of b + 1
//             bytes; the lengths repeat until the payload is used up). n = 0: one chunk.
//   bits 3-7: free for the target (sse_parser_fuzz: the event size limit; the *_stream_fuzz
//             targets: bit 3 set = the OpenAI caller did not ask for usage).
// A recorded SSE file becomes a seed by prefixing one 0x00 byte (scripts/run-fuzz.sh does).
struct SplitInput {
  std::uint8_t flags = 0;  // bits 3-7 of the first byte, shifted down
  std::vector<std::size_t> chunks;
  std::string_view payload;

  SplitInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) {
      return;
    }
    flags = data[0] >> 3;
    std::size_t n = std::min<std::size_t>(data[0] & 7u, size - 1);
    for (std::size_t i = 0; i < n; ++i) {
      chunks.push_back(std::size_t{data[1 + i]} + 1);
    }
    payload = std::string_view(reinterpret_cast<const char*>(data) + 1 + n, size - 1 - n);
  }

  // Calls f(std::string_view chunk) for consecutive pieces covering the payload.
  template <typename F>
  void for_each_chunk(F&& f) const {
    if (chunks.empty()) {
      f(payload);
      return;
    }
    std::size_t pos = 0;
    for (std::size_t i = 0; pos < payload.size(); ++i) {
      const std::size_t len = std::min(chunks[i % chunks.size()], payload.size() - pos);
      f(payload.substr(pos, len));
      pos += len;
    }
  }
};

// Feeds the payload to an SseParser chunk by chunk, calling on_event(const SseEvent&) for each
// block, then ends the input. Stops early when the parser gives up (kTooLarge): the relay
// abandons such a stream.
template <typename OnEvent>
void for_each_sse_event(const SplitInput& in, OnEvent&& on_event) {
  codec::SseParser parser;
  codec::SseEvent ev;
  bool too_large = false;
  in.for_each_chunk([&](std::string_view chunk) {
    if (too_large) {
      return;
    }
    parser.feed(chunk);
    codec::SseParser::Status s;
    while ((s = parser.next(ev)) == codec::SseParser::Status::kEvent) {
      on_event(ev);
    }
    too_large = s == codec::SseParser::Status::kTooLarge;
  });
  if (!too_large && parser.finish(ev) == codec::SseParser::Status::kEvent) {
    on_event(ev);
  }
}

// The ordering contract of ir/stream_event.h, checked event by event: kStart first and once
// (unless kError comes first), kFinish once before kDone, kDone or kError last with nothing after,
// tool calls numbered from 0 in order of first appearance and deltas only for started calls.
class IrStreamChecker {
 public:
  void on(const ir::StreamEvent& e) {
    using K = ir::StreamEventKind;
    check(!ended_, "IR event after kDone or kError");
    if (e.kind == K::kError) {
      ended_ = true;
      return;
    }
    if (!started_) {
      check(e.kind == K::kStart, "first IR event is neither kStart nor kError");
      started_ = true;
      return;
    }
    switch (e.kind) {
      case K::kStart:
        fail("second kStart");
      case K::kFinish:
        check(!finished_, "second kFinish");
        finished_ = true;
        break;
      case K::kDone:
        check(finished_, "kDone without a kFinish before it");
        ended_ = true;
        break;
      case K::kToolCallStart:
        check(e.index == tools_, "kToolCallStart index is not the next tool index");
        ++tools_;
        break;
      case K::kToolCallDelta:
        check(e.index < tools_, "kToolCallDelta for a tool call never started");
        break;
      default:
        break;
    }
  }
  // After the decoder was told the input ended: the stream must be over.
  void at_end() const { check(ended_, "IR stream did not end with kDone or kError"); }

 private:
  bool started_ = false;
  bool finished_ = false;
  bool ended_ = false;
  std::uint32_t tools_ = 0;
};

// The Anthropic Messages SSE that anthropic::StreamEncoder promises: blocks of exactly
// "event: <type>\ndata: <JSON object whose type is <type>>\n\n"; message_start first (or an
// error), content blocks numbered from 0, never interleaved, deltas matching the block type,
// message_delta after the last block, then message_stop; nothing after message_stop or error.
class AnthropicSseChecker {
 public:
  // `out` is what one encode() call appended: whole events only.
  void feed(std::string_view out) {
    while (!out.empty()) {
      check(out.starts_with("event: "), "encoder output: expected 'event: '", out);
      out.remove_prefix(7);
      const std::size_t nl = out.find('\n');
      check(nl != std::string_view::npos && nl > 0, "encoder output: bad event line", out);
      const std::string_view type = out.substr(0, nl);
      out.remove_prefix(nl + 1);
      check(out.starts_with("data: "), "encoder output: expected 'data: '", out);
      out.remove_prefix(6);
      const std::size_t end = out.find("\n\n");
      check(end != std::string_view::npos, "encoder output: event not ended by a blank line");
      const boost::json::value data = expect_json(out.substr(0, end), "encoder data not JSON");
      out.remove_prefix(end + 2);
      check(data.is_object(), "encoder data is not an object");
      const auto* t = data.as_object().if_contains("type");
      check(t != nullptr && t->is_string() && t->get_string() == type,
            "encoder data type differs from the event name", type);
      on_event(type, data.as_object());
    }
  }
  // After the last encode(): the message must have been closed (message_stop or error).
  void at_end(const protocol::anthropic::StreamEncoder& encoder) const {
    check(state_ == State::kEnded, "encoder output does not end with message_stop or error");
    check(encoder.finished(), "encoder not finished after kDone or kError");
  }

 private:
  enum class State { kBefore, kMessage, kDelta, kEnded };

  static std::optional<std::uint64_t> index_of(const boost::json::object& o) {
    const auto* v = o.if_contains("index");
    return v == nullptr ? std::nullopt : codec::as_count(*v);
  }

  static std::string_view string_at(const boost::json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v != nullptr && v->is_string() ? std::string_view(v->get_string()) : "";
  }

  void on_event(std::string_view type, const boost::json::object& o) {
    check(state_ != State::kEnded, "encoder output after message_stop or error", type);
    if (type == "error") {
      state_ = State::kEnded;
    } else if (type == "message_start") {
      check(state_ == State::kBefore, "message_start not first");
      state_ = State::kMessage;
    } else if (type == "content_block_start") {
      check(state_ == State::kMessage && !open_, "content_block_start outside the message");
      check(index_of(o) == next_block_, "content_block_start index is not the next block");
      const auto* cb = o.if_contains("content_block");
      check(cb != nullptr && cb->is_object(), "content_block_start without content_block");
      open_ = next_block_++;
      open_type_ = string_at(cb->as_object(), "type");
    } else if (type == "content_block_delta") {
      check(state_ == State::kMessage && open_ && index_of(o) == open_,
            "content_block_delta for a block that is not open");
      const auto* d = o.if_contains("delta");
      check(d != nullptr && d->is_object(), "content_block_delta without delta");
      const std::string_view dt = string_at(d->as_object(), "type");
      const bool fits =
          (open_type_ == "text" && dt == "text_delta") ||
          (open_type_ == "thinking" && (dt == "thinking_delta" || dt == "signature_delta")) ||
          (open_type_ == "tool_use" && dt == "input_json_delta");
      check(fits, "delta type does not fit the block type", dt);
    } else if (type == "content_block_stop") {
      check(state_ == State::kMessage && open_ && index_of(o) == open_,
            "content_block_stop for a block that is not open");
      open_.reset();
    } else if (type == "message_delta") {
      check(state_ == State::kMessage && !open_, "message_delta with a block open");
      state_ = State::kDelta;
    } else if (type == "message_stop") {
      check(state_ == State::kDelta, "message_stop without message_delta");
      state_ = State::kEnded;
    } else {
      fail("encoder wrote an unknown event type", type);
    }
  }

  State state_ = State::kBefore;
  std::optional<std::uint64_t> open_;
  std::string open_type_;
  std::uint64_t next_block_ = 0;
};

// The OpenAI Chat Completions SSE that openai_chat::StreamEncoder promises: events of exactly
// "data: <one-line payload>\n\n"; payloads are JSON objects or [DONE]. Chunks share id (a
// "chatcmpl-" id), object "chat.completion.chunk", created and model; the first is the role
// chunk; each has one choice (index 0) and "usage":null exactly when the caller asked for usage;
// one finish chunk (empty delta, string finish_reason) after all content; then, only with
// include_usage, a usage chunk ("choices":[]); then [DONE]. An {"error":{...}} event ends the
// stream instead. Nothing follows [DONE] or the error.
class OpenAiSseChecker {
 public:
  explicit OpenAiSseChecker(bool include_usage) : include_usage_(include_usage) {}

  // `out` is what one encode() call appended: whole events only.
  void feed(std::string_view out) {
    bytes_.append(out);
    while (!out.empty()) {
      check(state_ != State::kEnded, "openai encoder output after [DONE] or error", out);
      check(out.starts_with("data: "), "openai encoder output: expected 'data: '", out);
      const std::size_t end = out.find("\n\n");
      check(end != std::string_view::npos, "openai encoder event not ended by a blank line");
      const std::string_view payload = out.substr(6, end - 6);
      out.remove_prefix(end + 2);
      check(payload.find('\n') == std::string_view::npos &&
                payload.find('\r') == std::string_view::npos,
            "openai encoder payload spans lines", payload);
      if (payload == "[DONE]") {
        check(finishes_ == 1, "[DONE] without exactly one finish chunk");
        state_ = State::kEnded;
        continue;
      }
      const boost::json::value v = expect_json(payload, "openai encoder data not JSON");
      check(v.is_object(), "openai encoder data is not an object", payload);
      on_object(v.as_object(), payload);
    }
  }

  // After the last encode(): [DONE] or an error ended the stream.
  void at_end(const protocol::openai_chat::StreamEncoder& encoder) const {
    check(state_ == State::kEnded, "openai encoder output does not end with [DONE] or error");
    check(encoder.finished(), "openai encoder not finished after kDone or kError");
    check(errored_ == encoder.error().has_value(), "openai error event and error() disagree");
  }

  // Everything written so far.
  const std::string& bytes() const { return bytes_; }

 private:
  enum class State { kBefore, kChunks, kUsage, kEnded };

  void on_object(const boost::json::object& o, std::string_view payload) {
    if (const auto* e = o.if_contains("error")) {
      const auto* m = e->is_object() ? e->as_object().if_contains("message") : nullptr;
      check(m != nullptr && m->is_string(), "openai error event without a message", payload);
      state_ = State::kEnded;
      errored_ = true;
      return;
    }
    const auto* id = o.if_contains("id");
    check(id != nullptr && id->is_string() && id->get_string().starts_with("chatcmpl-"),
          "chunk id is not a chatcmpl- id", payload);
    const auto* object = o.if_contains("object");
    check(
        object != nullptr && object->is_string() && object->get_string() == "chat.completion.chunk",
        "chunk object is not chat.completion.chunk", payload);
    const auto* created = o.if_contains("created");
    const auto* model = o.if_contains("model");
    check(created != nullptr && created->is_number() && model != nullptr && model->is_string(),
          "chunk lacks created or model", payload);
    if (first_.empty()) {
      first_ = boost::json::object{{"id", *id}, {"created", *created}, {"model", *model}};
    }
    check(
        first_.at("id") == *id && first_.at("created") == *created && first_.at("model") == *model,
        "chunks disagree on id, created or model", payload);
    const auto* choices = o.if_contains("choices");
    check(choices != nullptr && choices->is_array(), "chunk without a choices array", payload);
    const auto* usage = o.if_contains("usage");
    if (choices->as_array().empty()) {
      check(include_usage_ && state_ == State::kChunks && finishes_ == 1,
            "usage chunk not asked for, or not after the finish chunk", payload);
      check(usage != nullptr && usage->is_object(), "usage chunk without usage", payload);
      state_ = State::kUsage;
      return;
    }
    check(state_ != State::kUsage, "chunk after the usage chunk", payload);
    check(include_usage_ ? (usage != nullptr && usage->is_null()) : usage == nullptr,
          "\"usage\":null present without include_usage or missing with it", payload);
    check(choices->as_array().size() == 1 && choices->as_array()[0].is_object(),
          "chunk with other than one choice", payload);
    const boost::json::object& choice = choices->as_array()[0].as_object();
    const auto* delta = choice.if_contains("delta");
    const auto* finish = choice.if_contains("finish_reason");
    check(delta != nullptr && delta->is_object() && finish != nullptr,
          "choice without delta or finish_reason", payload);
    if (state_ == State::kBefore) {
      const boost::json::object role{{"role", "assistant"}, {"content", ""}};
      check(delta->as_object() == role, "first chunk is not the role chunk", payload);
      state_ = State::kChunks;
      return;
    }
    if (!finish->is_null()) {
      check(finish->is_string() && delta->as_object().empty() && finishes_ == 0,
            "finish chunk with content, or a second one", payload);
      ++finishes_;
      return;
    }
    check(finishes_ == 0, "content after the finish chunk", payload);
    check(delta->as_object().size() == 1, "content chunk without exactly one delta field", payload);
  }

  bool include_usage_;
  State state_ = State::kBefore;
  int finishes_ = 0;
  bool errored_ = false;
  boost::json::object first_;
  std::string bytes_;
};

// What an OpenAI client keeps of an IR stream, folded per kind, as the OpenAI chunk stream can
// carry it. Folding the IR before openai_chat::StreamEncoder with `as_openai` and the IR that
// openai_chat::StreamDecoder reads back from its output must agree.
struct OpenAiView {
  std::string id;
  std::string model;
  std::string text;
  std::string reasoning;
  std::vector<std::string> arguments;
  std::vector<std::string> tool_heads;
  ir::FinishReason finish = ir::FinishReason::kUnset;
  std::optional<ir::Usage> usage;

  // `as_openai`: apply the encoder's rules (chatcmpl- id, tool-id fallback, finish vocabulary,
  // no cache-write count) to IR that has not been through it.
  void on(const ir::StreamEvent& e, bool as_openai) {
    using K = ir::StreamEventKind;
    switch (e.kind) {
      case K::kStart:
        id = as_openai ? protocol::openai_chat::completion_id(e.id) : e.id;
        model = e.model;
        break;
      case K::kTextDelta:
        text += e.text;
        break;
      case K::kReasoningDelta:
        reasoning += e.text;
        break;
      case K::kToolCallStart:
        tool_heads.push_back(
            (as_openai && e.id.empty() ? id + "_call_" + std::to_string(e.index) : e.id) + "|" +
            e.name);
        arguments.emplace_back();
        break;
      case K::kToolCallDelta:
        if (e.index < arguments.size()) {
          arguments[e.index] += e.text;
        }
        break;
      case K::kUsage:
        usage = e.usage;
        if (as_openai) {
          usage->cache_write_tokens = 0;
        }
        break;
      case K::kFinish:
        finish = as_openai ? protocol::openai_chat::finish_reason_from_openai(
                                 protocol::openai_chat::finish_reason_to_openai(e.finish))
                           : e.finish;
        break;
      default:
        break;
    }
  }

  bool operator==(const OpenAiView&) const = default;
};

// Runs a stream decoder over the SSE events of `in`, checks its IR against the ordering
// contract and translates every IR event to Anthropic SSE and to OpenAI chunk SSE, checking both
// outputs; the OpenAI output is decoded again and must say what the IR said. The passthrough
// sniffer of the same protocol watches the same events.
inline void translate_stream(const SplitInput& in, protocol::StreamDecoder& decoder,
                             protocol::StreamSniffer& sniffer) {
  IrStreamChecker ir_check;
  protocol::anthropic::StreamEncoder encoder;
  AnthropicSseChecker sse_check;
  const bool include_usage = (in.flags & 1u) == 0;
  protocol::openai_chat::StreamEncoder openai(include_usage, 1'700'000'000);
  OpenAiSseChecker openai_check(include_usage);
  OpenAiView view;
  std::vector<ir::StreamEvent> batch;
  std::string out;
  auto deliver = [&] {
    for (const ir::StreamEvent& e : batch) {
      ir_check.on(e);
      out.clear();
      encoder.encode(e, out);
      sse_check.feed(out);
      out.clear();
      openai.encode(e, out);
      openai_check.feed(out);
      view.on(e, /*as_openai=*/true);
    }
    batch.clear();
  };
  // kTooLarge is the caller abandoning the stream; the decoder is still told it ended.
  for_each_sse_event(in, [&](const codec::SseEvent& ev) {
    (void)sniffer.on_event(ev);
    decoder.on_event(ev, batch);
    deliver();
  });
  decoder.on_end(batch);
  deliver();
  ir_check.at_end();
  check(decoder.finished(), "decoder not finished after on_end");
  sse_check.at_end(encoder);
  openai_check.at_end(openai);
  if (!openai.error()) {
    if (!include_usage) {
      view.usage.reset();
    }
    protocol::openai_chat::StreamDecoder again;
    std::vector<ir::StreamEvent> events;
    OpenAiView read_back;
    codec::SseParser parser;
    codec::SseEvent ev;
    parser.feed(openai_check.bytes());
    while (parser.next(ev) == codec::SseParser::Status::kEvent) {
      again.on_event(ev, events);
    }
    again.on_end(events);
    check(!events.empty() && events.back().kind == ir::StreamEventKind::kDone,
          "openai encoder output does not decode to a complete stream", openai_check.bytes());
    for (const ir::StreamEvent& e : events) {
      read_back.on(e, /*as_openai=*/false);
    }
    check(read_back == view, "openai encoder output decodes to other content",
          openai_check.bytes());
  }
  // Whatever the sniffer kept must still be readable (ASan: no views into dead events).
  const std::string finish_reason(sniffer.finish_reason());
  (void)finish_reason;
}

}  // namespace sluice::fuzz
