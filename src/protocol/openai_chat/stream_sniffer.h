#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "codec/sse.h"
#include "ir/response.h"
#include "ir/usage.h"
#include "protocol/stream.h"

namespace sluice::protocol::openai_chat {

// Watches an OpenAI chat.completion.chunk stream that is relayed verbatim (passthrough)
// and extracts what the gateway needs without re-encoding anything: usage, finish reason,
// the [DONE] terminator and in-stream errors. Cheap on the common path: a chunk is parsed
// as JSON only when a byte scan shows it carries a usage object or an error.
// One instance per request; not thread-safe.
class StreamSniffer final : public protocol::StreamSniffer {
 public:
  // `strip_usage_chunk`: the gateway added stream_options.include_usage on the caller's
  // behalf, so the usage-only chunk ("choices":[]) is metered but not forwarded.
  explicit StreamSniffer(bool strip_usage_chunk) : strip_usage_chunk_(strip_usage_chunk) {}

  Action on_event(const codec::SseEvent& event) override;

  bool done() const override { return done_; }
  // A finish_reason arrived: a stream that ends after it without [DONE] is complete.
  bool answered() const override { return !finish_reason_.empty(); }
  // A chunk with model output was seen (the streaming commit point has passed).
  bool saw_output() const override { return saw_output_; }
  bool saw_error() const override { return saw_error_; }
  const std::optional<ir::Usage>& usage() const override { return usage_; }
  std::string_view finish_reason() const override { return finish_reason_; }
  std::uint64_t events() const override { return events_; }

 private:
  bool strip_usage_chunk_;
  bool done_ = false;
  bool saw_output_ = false;
  bool saw_error_ = false;
  std::optional<ir::Usage> usage_;
  std::string finish_reason_;
  std::uint64_t events_ = 0;
};

// Usage of a non-streaming chat.completion or embeddings response body, if present. With
// `finish`, also the finish reason of a chat.completion's first choice (left as it is when the
// body has none).
std::optional<ir::Usage> usage_from_response(std::string_view body,
                                             ir::FinishReason* finish = nullptr);

}  // namespace sluice::protocol::openai_chat
