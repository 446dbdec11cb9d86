#include "codec/upstream_events.h"

#include "codec/base64.h"
#include "codec/http_tokens.h"
#include "codec/json_members.h"

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
                                                    SseEvent& out) {
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
  } else if (message.event_type == "chunk") {
    return unwrap_chunk(message.payload, out);
  } else {
    out.event = message.event_type;
    out.data = message.payload;
  }
  return Status::kEvent;
}

UpstreamEvents::Status UpstreamEvents::unwrap_chunk(std::string_view payload, SseEvent& out) {
  // {"bytes":"<base64>"}: the model's own event, its type in its "type" member. The payload is
  // small and written by AWS; a member scan is all it needs.
  constexpr std::string_view kBytes = R"("bytes":")";
  const std::size_t begin = payload.find(kBytes);
  const std::size_t end =
      begin == std::string_view::npos ? begin : payload.find('"', begin + kBytes.size());
  std::optional<std::string> decoded =
      end == std::string_view::npos
          ? std::nullopt
          : decode_base64(payload.substr(begin + kBytes.size(), end - begin - kBytes.size()));
  if (!decoded) {
    malformed_chunk_ = true;
    return Status::kMalformed;
  }
  chunk_data_ = std::move(*decoded);
  chunk_type_.clear();
  if (const auto types = find_member(chunk_data_, {.key = "type", .inner = {}}); !types.empty()) {
    const std::string_view value =
        std::string_view(chunk_data_)
            .substr(types.back().begin, types.back().end - types.back().begin);
    // A plain name ("content_block_delta"): anything else would not make an SSE event line.
    const bool plain =
        value.size() >= 2 && value.front() == '"' && value.back() == '"' &&
        value.substr(1, value.size() - 2).find_first_of("\"\\\r\n") == std::string_view::npos;
    if (plain) {
      chunk_type_ = value.substr(1, value.size() - 2);
    }
  }
  // The same event as an SSE block, so a relay that forwards blocks verbatim (an Anthropic
  // caller on InvokeModelWithResponseStream) writes what the Messages API would have sent.
  chunk_raw_.clear();
  if (!chunk_type_.empty()) {
    chunk_raw_.append("event: ").append(chunk_type_).push_back('\n');
  }
  chunk_raw_.append("data: ").append(chunk_data_).append("\n\n");
  out.event = chunk_type_;
  out.data = chunk_data_;
  out.raw = chunk_raw_;
  return Status::kEvent;
}

std::string_view UpstreamEvents::malformed() const {
  if (malformed_chunk_) {
    return "a chunk whose bytes are not base64";
  }
  if (aws_ && aws_->error() != EventStreamError::kNone) {
    return describe(aws_->error());
  }
  return "malformed stream";
}

}  // namespace sluice::codec
