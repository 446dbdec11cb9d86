#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "cache/answer_builder.h"
#include "codec/sse.h"
#include "ir/response.h"
#include "ir/stream_event.h"
#include "protocol/stream.h"
#include "protocol/upstream.h"

namespace sluice::cache {

// Reads the answer a caller was sent back into IR, for the cache: the bytes as they went out
// (in the caller's protocol, after every response filter before the cache), decoded with that
// protocol's upstream codec. Whether the call was passed through or translated, and from which
// provider, does not matter: what is stored is what the caller got. Costs a parse of the
// answer on a miss of a cached route only. One per request; one worker.
class AnswerCapture {
 public:
  // Each batch of IR events as it is read (a shared call's followers are fed from it).
  using OnEvents = std::function<void(std::span<const ir::StreamEvent>)>;

  // `codec`: the caller's protocol's upstream side. Answers past `max_bytes` are not kept.
  AnswerCapture(const protocol::UpstreamCodec& codec, std::size_t max_bytes,
                OnEvents on_events = {});

  // A complete (non-stream) answer's body.
  void body(std::string_view body);
  // Stream bytes written to the caller (whole events).
  void stream(std::string_view bytes);
  // Nothing of this answer may be kept (a non-200 head, the caller stopped reading, ...).
  void abandon() { failed_ = true; }
  bool abandoned() const { return failed_ || builder_.failed(); }
  // A stream's terminator has been read, with nothing wrong before it: the answer is whole
  // before its last bytes are written.
  bool complete() const { return !failed_ && builder_.done(); }

  // The answer, when the caller got a whole one that decoded (a stream: its terminator seen,
  // no error event) within max_bytes; nullopt otherwise.
  std::optional<ir::Response> finish();

 private:
  void add(std::span<const ir::StreamEvent> events);

  const protocol::UpstreamCodec& codec_;
  const std::size_t max_bytes_;
  OnEvents on_events_;
  std::size_t bytes_ = 0;
  bool failed_ = false;
  AnswerBuilder builder_;
  // Streams only.
  std::unique_ptr<protocol::StreamDecoder> decoder_;
  codec::SseParser parser_;
  std::vector<ir::StreamEvent> events_;
};

}  // namespace sluice::cache
