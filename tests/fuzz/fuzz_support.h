#pragma once

// Shared by the libFuzzer targets in this folder (README.md): invariant checks that stop the
// run, the input layout of the SSE-driven targets, and checkers for the contracts of
// ir/stream_event.h and of the Anthropic SSE that anthropic::StreamEncoder writes.

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
//   bits 3-7: free for the target (sse_parser_fuzz: the event size limit).
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

// Runs a stream decoder over the SSE events of `in`, checks its IR against the ordering
// contract and translates every IR event to Anthropic SSE, checking that output as well. The
// passthrough sniffer of the same protocol watches the same events.
inline void translate_stream(const SplitInput& in, protocol::StreamDecoder& decoder,
                             protocol::StreamSniffer& sniffer) {
  IrStreamChecker ir_check;
  protocol::anthropic::StreamEncoder encoder;
  AnthropicSseChecker sse_check;
  std::vector<ir::StreamEvent> batch;
  std::string out;
  auto deliver = [&] {
    for (const ir::StreamEvent& e : batch) {
      ir_check.on(e);
      out.clear();
      encoder.encode(e, out);
      sse_check.feed(out);
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
  // Whatever the sniffer kept must still be readable (ASan: no views into dead events).
  const std::string finish_reason(sniffer.finish_reason());
  (void)finish_reason;
}

}  // namespace sluice::fuzz
