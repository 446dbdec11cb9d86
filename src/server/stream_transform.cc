#include "server/stream_transform.h"

#include <vector>

#include "ir/stream_event.h"
#include "protocol/anthropic/stream_encoder.h"
#include "protocol/openai_chat/errors.h"
#include "protocol/openai_chat/ir_stream.h"
#include "protocol/openai_chat/stream_monitor.h"

namespace sluice::server {
namespace chat = protocol::openai_chat;

namespace {

// True when an SSE block ends with an empty line (its last line terminator is preceded by
// another one).
bool block_terminated(std::string_view raw) {
  if (raw.ends_with("\r\n")) {
    raw.remove_suffix(2);
  } else if (raw.ends_with('\n') || raw.ends_with('\r')) {
    raw.remove_suffix(1);
  } else {
    return false;
  }
  return raw.ends_with('\n') || raw.ends_with('\r');
}

class OpenAiPassthrough final : public StreamTransform {
 public:
  explicit OpenAiPassthrough(bool strip_usage_chunk) : monitor_(strip_usage_chunk) {}

  void on_event(const codec::SseEvent& event, bool at_end, std::string& out) override {
    if (monitor_.on_event(event) != chat::StreamMonitor::Action::kForward) {
      return;
    }
    out.append(event.raw);
    if (at_end && !block_terminated(event.raw)) {
      // The upstream's last block lacked its blank line; terminate it so whatever follows
      // (an error event) stays a separate event.
      out.append(event.raw.ends_with('\n') || event.raw.ends_with('\r') ? "\n" : "\n\n");
    }
  }
  bool done() const override { return monitor_.done(); }
  const std::optional<Error>& failed() const override { return failed_; }
  void on_failure(const Error& error, std::string& out) override {
    codec::append_data_event(out, chat::encode_error(error));
  }
  void report(RequestContext& ctx) const override {
    ctx.usage = monitor_.usage();
    ctx.finish_reason = monitor_.finish_reason();
    ctx.events = monitor_.events();
  }

 private:
  chat::StreamMonitor monitor_;
  std::optional<Error> failed_;  // passthrough relays upstream error events as they are
};

// OpenAI chunks -> IR events -> Anthropic events. Text deltas go out in the same write as
// the chunk that carried them; the encoder holds back only what Anthropic's shape needs
// whole (parallel tool calls) and the final usage (OpenAI sends it last).
class OpenAiToAnthropic final : public StreamTransform {
 public:
  OpenAiToAnthropic() { events_.reserve(8); }

  void on_event(const codec::SseEvent& event, bool /*at_end*/, std::string& out) override {
    if (event.has_data) {
      ++upstream_events_;
    }
    events_.clear();
    decoder_.on_event(event, events_);
    for (const ir::StreamEvent& ev : events_) {
      switch (ev.kind) {
        case ir::StreamEventKind::kFinish:
          finish_reason_ = ir::to_string(ev.finish);
          break;
        case ir::StreamEventKind::kDone:
          done_ = true;
          break;
        default:
          break;
      }
      encoder_.encode(ev, out);
      if (encoder_.error()) {
        failed_ = encoder_.error();
        break;
      }
    }
  }
  bool done() const override { return done_ && !failed_; }
  const std::optional<Error>& failed() const override { return failed_; }
  void on_failure(const Error& error, std::string& out) override {
    ir::StreamEvent ev;
    ev.kind = ir::StreamEventKind::kError;
    ev.error = error;
    encoder_.encode(ev, out);
  }
  void report(RequestContext& ctx) const override {
    if (encoder_.has_usage()) {
      ctx.usage = encoder_.usage();
    }
    ctx.finish_reason = std::string(finish_reason_);
    ctx.events = upstream_events_;
  }

 private:
  protocol::openai_chat::StreamDecoder decoder_;
  protocol::anthropic::StreamEncoder encoder_;
  std::vector<ir::StreamEvent> events_;
  std::optional<Error> failed_;
  std::string_view finish_reason_;
  std::uint64_t upstream_events_ = 0;
  bool done_ = false;
};

}  // namespace

std::unique_ptr<StreamTransform> make_openai_to_anthropic() {
  return std::make_unique<OpenAiToAnthropic>();
}

std::unique_ptr<StreamTransform> make_openai_passthrough(bool strip_usage_chunk) {
  return std::make_unique<OpenAiPassthrough>(strip_usage_chunk);
}

}  // namespace sluice::server
