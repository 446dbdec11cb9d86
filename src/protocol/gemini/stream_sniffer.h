#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include <boost/json/monotonic_resource.hpp>

#include "protocol/stream.h"

namespace sluice::protocol::gemini {

// Passthrough of a streamGenerateContent?alt=sse stream (a Gemini caller, a Gemini upstream):
// every block is forwarded as it is and read lightly, without translating its parts (so parts
// the IR cannot carry, such as executableCode or inline images, pass untouched):
//   usage    the last usageMetadata (cumulative in every chunk; conventions.h from_wire_usage)
//   finish   candidates[0].finishReason (STOP after a functionCall counts as tool_calls), or
//            promptFeedback.blockReason: answered() from then on
//   output   a chunk whose candidate has parts: saw_output()
//   error    an {"error":{...}} object, as a `data:` event or as the bare JSON the API writes
// done() stays false: Gemini streams have no terminator; a stream is complete when it ends
// after its finishReason.
class StreamSniffer final : public protocol::StreamSniffer {
 public:
  StreamSniffer() = default;
  StreamSniffer(const StreamSniffer&) = delete;
  StreamSniffer& operator=(const StreamSniffer&) = delete;

  Action on_event(const codec::SseEvent& event) override;

  bool done() const override { return false; }
  bool answered() const override { return answered_; }
  bool saw_error() const override { return saw_error_; }
  bool saw_output() const override { return saw_output_; }
  const std::optional<ir::Usage>& usage() const override { return usage_; }
  std::string_view finish_reason() const override { return finish_reason_; }
  std::uint64_t events() const override { return events_; }

 private:
  std::optional<ir::Usage> usage_;
  std::string_view finish_reason_;
  std::uint64_t events_ = 0;
  bool answered_ = false;
  bool saw_error_ = false;
  bool saw_output_ = false;
  bool saw_call_ = false;
  unsigned char arena_[4096];
  boost::json::monotonic_resource mr_{arena_, sizeof arena_};
};

}  // namespace sluice::protocol::gemini
