#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ir/usage.h"
#include "protocol/stream.h"

namespace sluice::protocol::openai_responses {

// Passthrough of a Responses event stream (a Responses caller, a Responses upstream): every
// event is forwarded as it is. Only the events the gateway acts on are parsed; the rest
// (built-in tool events, annotations, anything newer than this code) pass unread, so the
// caller keeps every feature of its upstream. One per request.
//   response.created         the response id (stored_id(), recorded for GET /v1/responses/{id})
//   *.delta, output_item.done    saw_output() (the streaming commit point)
//   response.completed       usage, finish reason (tool_calls when a function_call item was
//                            added, else stop), answered() and done()
//   response.incomplete      the same, finish reason length (max_output_tokens),
//                            content_filter or other
//   response.failed, error   saw_error() (and done() for response.failed)
class StreamSniffer final : public protocol::StreamSniffer {
 public:
  // `store`: the request let the upstream store the answer (its `store` was not false); only
  // then does stored_id() report the response id.
  explicit StreamSniffer(bool store = true) : store_(store) {}

  Action on_event(const codec::SseEvent& event) override;

  bool done() const override { return done_; }
  bool answered() const override { return answered_; }
  bool saw_error() const override { return saw_error_; }
  bool saw_output() const override { return saw_output_; }
  const std::optional<ir::Usage>& usage() const override { return usage_; }
  std::string_view finish_reason() const override { return finish_reason_; }
  std::uint64_t events() const override { return events_; }
  std::string_view stored_id() const override {
    return store_ ? std::string_view(response_id_) : std::string_view();
  }

 private:
  void on_final(std::string_view data, bool incomplete);

  std::optional<ir::Usage> usage_;
  std::string response_id_;
  std::string_view finish_reason_;
  std::uint64_t events_ = 0;
  bool tool_calls_ = false;
  bool done_ = false;
  bool answered_ = false;
  bool saw_error_ = false;
  bool saw_output_ = false;
  bool store_ = true;
};

}  // namespace sluice::protocol::openai_responses
