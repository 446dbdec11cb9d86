#include "protocol/anthropic/stream_sniffer.h"

namespace sluice::protocol::anthropic {

StreamSniffer::Action StreamSniffer::on_event(const codec::SseEvent& event) {
  if (!event.has_data) {
    return Action::kForward;
  }
  ++events_;
  scratch_.clear();
  decoder_.on_event(event, scratch_);
  for (const ir::StreamEvent& ev : scratch_) {
    switch (ev.kind) {
      case ir::StreamEventKind::kUsage:
        usage_ = ev.usage;
        break;
      case ir::StreamEventKind::kFinish:
        finish_reason_ = ir::to_string(ev.finish);
        break;
      case ir::StreamEventKind::kDone:
        done_ = true;
        break;
      case ir::StreamEventKind::kError:
        // Upstream error events and events this gateway cannot read are relayed unchanged
        // all the same: the caller speaks this protocol.
        saw_error_ = true;
        break;
      case ir::StreamEventKind::kTextDelta:
      case ir::StreamEventKind::kReasoningDelta:
      case ir::StreamEventKind::kToolCallStart:
      case ir::StreamEventKind::kToolCallDelta:
      case ir::StreamEventKind::kRedactedReasoning:
        saw_output_ = true;
        break;
      default:
        break;
    }
  }
  return Action::kForward;
}

}  // namespace sluice::protocol::anthropic
