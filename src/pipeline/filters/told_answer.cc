#include "pipeline/filters/told_answer.h"

#include "cache/replay.h"
#include "pipeline/call_context.h"

namespace sluice::pipeline {

std::optional<std::string> tell_answer(CallContext& call, const ir::Response& answer) {
  if (!call.request().stream) {
    bool clamped = false;
    Result<std::string> body = call.ingress().encode_response_for(call.request(), answer, clamped);
    if (!body) {
      return std::nullopt;
    }
    return std::move(*body);
  }
  if (answer.usage) {
    // What a protocol states before the usage event (Anthropic's message_start): known here.
    call.mutable_request().estimated_input_tokens = answer.usage->input_tokens;
  }
  std::unique_ptr<protocol::StreamEncoder> encoder =
      call.ingress().make_stream_encoder(call.request());
  if (!encoder) {
    return std::nullopt;
  }
  std::string stream;
  for (const ir::StreamEvent& event : cache::replay_events(answer)) {
    encoder->encode(event, stream);
  }
  if (encoder->error() || !encoder->finished()) {
    return std::nullopt;
  }
  return stream;
}

Awaitable<void> send_told_answer(CallContext& call, ResponseHead& head, std::string told) {
  if (!call.request().stream) {
    co_await call.send_answer(head, std::move(told));
    co_return;
  }
  head.content_type = "text/event-stream";
  head.headers.add("Cache-Control", "no-store");
  head.headers.add("X-Accel-Buffering", "no");
  co_await call.send_stream(head, std::move(told));
}

}  // namespace sluice::pipeline
