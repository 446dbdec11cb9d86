#pragma once

#include <optional>
#include <string>
#include <vector>

#include "protocol/anthropic/stream_decoder.h"
#include "protocol/stream.h"

namespace sluice::protocol::anthropic {

// Passthrough of an Anthropic Messages stream (an Anthropic caller, an Anthropic upstream):
// every event is forwarded as it is, and also decoded (stream_decoder.h) for usage (from
// message_start and message_delta), the stop reason and the commit point. One per request.
class StreamSniffer final : public protocol::StreamSniffer {
 public:
  Action on_event(const codec::SseEvent& event) override;

  bool done() const override { return done_; }
  bool answered() const override { return decoder_.answered(); }
  bool saw_error() const override { return saw_error_; }
  bool saw_output() const override { return saw_output_; }
  const std::optional<ir::Usage>& usage() const override { return usage_; }
  std::string_view finish_reason() const override { return finish_reason_; }
  std::uint64_t events() const override { return events_; }

 private:
  StreamDecoder decoder_;
  std::vector<ir::StreamEvent> scratch_;
  std::optional<ir::Usage> usage_;
  std::string_view finish_reason_;
  std::uint64_t events_ = 0;
  bool done_ = false;
  bool saw_error_ = false;
  bool saw_output_ = false;
};

}  // namespace sluice::protocol::anthropic
