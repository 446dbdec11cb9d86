#include "pipeline/stream_transform.h"

namespace sluice::pipeline {

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

class Passthrough final : public StreamTransform {
 public:
  Passthrough(const protocol::IngressCodec& ingress,
              std::unique_ptr<protocol::StreamSniffer> sniffer)
      : ingress_(ingress), sniffer_(std::move(sniffer)) {}

  void on_event(const codec::SseEvent& event, bool at_end, std::string& out) override {
    if (sniffer_->on_event(event) != protocol::StreamSniffer::Action::kForward) {
      return;
    }
    out.append(event.raw);
    if (at_end && !block_terminated(event.raw)) {
      // The upstream's last block lacked its blank line; terminate it so whatever follows
      // (an error event) stays a separate event.
      out.append(event.raw.ends_with('\n') || event.raw.ends_with('\r') ? "\n" : "\n\n");
    }
    if (sniffer_->saw_error() && !failed_) {
      // The upstream ended its own stream with an error event, already relayed in the
      // caller's protocol: the stream stops here, without a second error of ours.
      failed_ = Error(ErrorKind::kUpstreamStatus, 502,
                      "the provider sent an error event in the middle of the stream")
                    .with_code("upstream_stream_error");
    }
  }
  void on_end(std::string& /*out*/) override {}
  bool complete() const override { return sniffer_->done() || sniffer_->answered(); }
  bool committed() const override { return sniffer_->saw_output() || sniffer_->answered(); }
  const std::optional<Error>& failed() const override { return failed_; }
  void on_failure(const Error& error, std::string& out) override {
    ingress_.append_stream_error(error, out);
  }
  void report(RequestContext& ctx) override {
    ctx.usage = sniffer_->usage();
    ctx.finish_reason = std::string(sniffer_->finish_reason());
    ctx.events = sniffer_->events();
  }
  std::string_view stored_id() const override { return sniffer_->stored_id(); }

 private:
  const protocol::IngressCodec& ingress_;
  std::unique_ptr<protocol::StreamSniffer> sniffer_;
  std::optional<Error> failed_;  // set once the upstream's own error event was relayed
};

// Upstream events -> IR events -> the caller's events. Text deltas go out in the same write as
// the upstream event that carried them; the encoder holds back only what the caller's shape
// needs whole.
class Translation final : public StreamTransform {
 public:
  Translation(const protocol::IngressCodec& /*ingress*/,
              std::unique_ptr<protocol::StreamDecoder> decoder,
              std::unique_ptr<protocol::StreamEncoder> encoder, const ReasoningSeal* seal,
              protocol::ProtocolId origin)
      : decoder_(std::move(decoder)), encoder_(std::move(encoder)), seal_(seal), origin_(origin) {
    events_.reserve(8);
  }

  void on_event(const codec::SseEvent& event, bool /*at_end*/, std::string& out) override {
    if (event.has_data) {
      ++upstream_events_;
    }
    events_.clear();
    decoder_->on_event(event, events_);
    encode(out);
  }
  void on_end(std::string& out) override {
    events_.clear();
    decoder_->on_end(events_);
    encode(out);
  }
  bool complete() const override { return done_ && !failed_; }
  bool committed() const override { return committed_; }
  const std::optional<Error>& failed() const override { return failed_; }
  void on_failure(const Error& error, std::string& out) override {
    ir::StreamEvent ev;
    ev.kind = ir::StreamEventKind::kError;
    ev.error = error;
    encoder_->encode(ev, out);
  }
  void report(RequestContext& ctx) override {
    ctx.usage = usage_;
    ctx.finish_reason = std::string(finish_reason_);
    ctx.events = upstream_events_;
    // Counted since the last report: the context also holds other attempts' counts.
    ctx.usage_clamped += encoder_->usage_clamped() - reported_clamped_;
    ctx.dropped_events += encoder_->dropped_events() - reported_dropped_;
    reported_clamped_ = encoder_->usage_clamped();
    reported_dropped_ = encoder_->dropped_events();
    if (!ctx.attempts.empty()) {
      ctx.attempts.back().unknown_fields = decoder_->unknown_fields();
    }
  }

 private:
  void encode(std::string& out) {
    for (ir::StreamEvent& ev : events_) {
      if (seal_ != nullptr) {
        seal_reasoning(ev, *seal_, origin_);
      }
      switch (ev.kind) {
        case ir::StreamEventKind::kUsage:
          usage_ = ev.usage;
          break;
        case ir::StreamEventKind::kFinish:
          finish_reason_ = ir::to_string(ev.finish);
          committed_ = true;
          break;
        case ir::StreamEventKind::kDone:
          done_ = true;
          committed_ = true;
          break;
        case ir::StreamEventKind::kStart:
        case ir::StreamEventKind::kError:
          break;
        default:  // content, reasoning, tool calls
          committed_ = true;
          break;
      }
      encoder_->encode(ev, out);
      if (encoder_->error()) {
        failed_ = encoder_->error();
        break;
      }
    }
  }

  std::unique_ptr<protocol::StreamDecoder> decoder_;
  std::unique_ptr<protocol::StreamEncoder> encoder_;
  const ReasoningSeal* seal_;
  protocol::ProtocolId origin_;
  std::uint32_t reported_clamped_ = 0;  // the encoder's counts at the last report
  std::uint32_t reported_dropped_ = 0;
  std::vector<ir::StreamEvent> events_;
  std::optional<Error> failed_;
  std::optional<ir::Usage> usage_;
  std::string_view finish_reason_;
  std::uint64_t upstream_events_ = 0;
  bool done_ = false;
  bool committed_ = false;
};

}  // namespace

std::unique_ptr<StreamTransform> make_passthrough(
    const protocol::IngressCodec& ingress, std::unique_ptr<protocol::StreamSniffer> sniffer) {
  return std::make_unique<Passthrough>(ingress, std::move(sniffer));
}

std::unique_ptr<StreamTransform> make_translation(const protocol::IngressCodec& ingress,
                                                  std::unique_ptr<protocol::StreamDecoder> decoder,
                                                  std::unique_ptr<protocol::StreamEncoder> encoder,
                                                  const ReasoningSeal* seal,
                                                  protocol::ProtocolId origin) {
  return std::make_unique<Translation>(ingress, std::move(decoder), std::move(encoder), seal,
                                       origin);
}

}  // namespace sluice::pipeline
