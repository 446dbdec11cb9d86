#include "cache/capture.h"

#include "cache/replay.h"

namespace sluice::cache {

AnswerCapture::AnswerCapture(const protocol::UpstreamCodec& codec, std::size_t max_bytes,
                             OnEvents on_events)
    : codec_(codec), max_bytes_(max_bytes), on_events_(std::move(on_events)), parser_(max_bytes) {}

void AnswerCapture::add(std::span<const ir::StreamEvent> events) {
  for (const ir::StreamEvent& e : events) {
    builder_.add(e);
  }
  if (on_events_ && !events.empty()) {
    on_events_(events);
  }
}

void AnswerCapture::body(std::string_view body) {
  if (failed_ || body.size() > max_bytes_) {
    failed_ = true;
    return;
  }
  Result<ir::Response> decoded = codec_.decode_response(body);
  if (!decoded) {
    failed_ = true;
    return;
  }
  add(replay_events(*decoded));
}

void AnswerCapture::stream(std::string_view bytes) {
  if (failed_) {
    return;
  }
  bytes_ += bytes.size();
  if (bytes_ > max_bytes_) {
    failed_ = true;
    return;
  }
  if (!decoder_) {
    decoder_ = codec_.make_stream_decoder();
    if (!decoder_) {
      failed_ = true;
      return;
    }
  }
  parser_.feed(bytes);
  codec::SseEvent event;
  for (;;) {
    const codec::SseParser::Status status = parser_.next(event);
    if (status == codec::SseParser::Status::kNeedMore) {
      break;
    }
    if (status == codec::SseParser::Status::kTooLarge) {
      failed_ = true;
      return;
    }
    if (!event.has_data) {
      continue;  // comments (keep-alives)
    }
    events_.clear();
    decoder_->on_event(event, events_);
    add(events_);
  }
}

std::optional<ir::Response> AnswerCapture::finish() {
  if (!failed_ && decoder_ && !builder_.done() && !builder_.failed()) {
    // The caller's stream ended: a decoder that saw the final answer completes it.
    events_.clear();
    decoder_->on_end(events_);
    add(events_);
  }
  if (failed_) {
    return std::nullopt;
  }
  return builder_.take();
}

}  // namespace sluice::cache
