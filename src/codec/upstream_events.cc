#include "codec/upstream_events.h"

#include "codec/http_tokens.h"

namespace sluice::codec {
namespace {

constexpr std::string_view kEventStreamType = "application/vnd.amazon.eventstream";

}  // namespace

UpstreamEvents::Framing UpstreamEvents::framing_of(std::string_view content_type) {
  const std::size_t semicolon = content_type.find(';');
  std::string_view media = content_type.substr(0, semicolon);
  while (!media.empty() && (media.back() == ' ' || media.back() == '\t')) {
    media.remove_suffix(1);
  }
  while (!media.empty() && (media.front() == ' ' || media.front() == '\t')) {
    media.remove_prefix(1);
  }
  return equals_lower(media, kEventStreamType) ? Framing::kEventStream : Framing::kSse;
}

bool UpstreamEvents::is_stream(std::string_view content_type) {
  return content_type.starts_with("text/event-stream") ||
         framing_of(content_type) == Framing::kEventStream;
}

void UpstreamEvents::set_framing(Framing framing) {
  framing_ = framing;
  if (framing_ == Framing::kEventStream && !aws_) {
    aws_.emplace(max_event_bytes_);
  }
}

void UpstreamEvents::feed(std::string_view bytes) {
  if (framing_ == Framing::kSse) {
    sse_.feed(bytes);
  } else {
    aws_->feed(bytes);
  }
}

UpstreamEvents::Status UpstreamEvents::next(SseEvent& out) {
  if (framing_ == Framing::kSse) {
    switch (sse_.next(out)) {
      case SseParser::Status::kEvent:
        return Status::kEvent;
      case SseParser::Status::kNeedMore:
        return Status::kNeedMore;
      case SseParser::Status::kTooLarge:
        return Status::kTooLarge;
    }
  }
  EventStreamMessage message;
  switch (aws_->next(message)) {
    case EventStreamDecoder::Status::kMessage:
      return from_message(message, out);
    case EventStreamDecoder::Status::kNeedMore:
      return Status::kNeedMore;
    case EventStreamDecoder::Status::kError:
      break;
  }
  return aws_->error() == EventStreamError::kTooLarge ? Status::kTooLarge : Status::kMalformed;
}

UpstreamEvents::Status UpstreamEvents::finish(SseEvent& out) {
  if (framing_ == Framing::kSse) {
    return sse_.finish(out) == SseParser::Status::kEvent ? Status::kEvent : Status::kNeedMore;
  }
  return aws_->finish() == EventStreamDecoder::Status::kError ? Status::kMalformed
                                                              : Status::kNeedMore;
}

UpstreamEvents::Status UpstreamEvents::from_message(const EventStreamMessage& message,
                                                    SseEvent& out) const {
  out = SseEvent{};
  out.raw = message.raw;
  out.has_data = true;
  if (message.message_type == "exception") {
    out.event = message.exception_type;
    out.data = message.payload;
  } else if (message.message_type == "error") {
    out.event = "error";
    out.data = message.error_message;
    out.id = message.error_code;
  } else {
    out.event = message.event_type;
    out.data = message.payload;
  }
  return Status::kEvent;
}

std::string_view UpstreamEvents::malformed() const {
  if (aws_ && aws_->error() != EventStreamError::kNone) {
    return describe(aws_->error());
  }
  return "malformed stream";
}

}  // namespace sluice::codec
