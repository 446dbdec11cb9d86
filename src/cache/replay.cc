#include "cache/replay.h"

namespace sluice::cache {
namespace {

ir::StreamEvent event(ir::StreamEventKind kind, std::string text = {}) {
  ir::StreamEvent e;
  e.kind = kind;
  e.text = std::move(text);
  return e;
}

}  // namespace

std::vector<ir::StreamEvent> replay_events(const ir::Response& answer) {
  std::vector<ir::StreamEvent> events;
  events.reserve(answer.content.size() * 2 + 4);
  ir::StreamEvent start = event(ir::StreamEventKind::kStart);
  start.id = answer.id;
  start.model = answer.model;
  events.push_back(std::move(start));
  std::uint32_t tool_index = 0;
  for (const ir::ContentPart& part : answer.content) {
    switch (part.kind) {
      case ir::PartKind::kText:
        events.push_back(event(ir::StreamEventKind::kTextDelta, part.text));
        break;
      case ir::PartKind::kReasoning:
        events.push_back(event(ir::StreamEventKind::kReasoningDelta, part.text));
        if (!part.signature.empty()) {
          events.push_back(event(ir::StreamEventKind::kReasoningSignature, part.signature));
        }
        break;
      case ir::PartKind::kRedactedReasoning:
        events.push_back(event(ir::StreamEventKind::kRedactedReasoning, part.signature));
        break;
      case ir::PartKind::kToolCall: {
        ir::StreamEvent call = event(ir::StreamEventKind::kToolCallStart);
        call.index = tool_index;
        call.id = part.id;
        call.name = part.name;
        events.push_back(std::move(call));
        ir::StreamEvent arguments = event(ir::StreamEventKind::kToolCallDelta, part.arguments);
        arguments.index = tool_index;
        events.push_back(std::move(arguments));
        ++tool_index;
        break;
      }
      case ir::PartKind::kImage:
      case ir::PartKind::kToolResult:
        break;  // not parts of an answer (ir/response.h)
    }
  }
  if (answer.usage) {
    ir::StreamEvent usage = event(ir::StreamEventKind::kUsage);
    usage.usage = *answer.usage;
    events.push_back(std::move(usage));
  }
  ir::StreamEvent finish = event(ir::StreamEventKind::kFinish, answer.stop_sequence);
  finish.finish = answer.finish;
  events.push_back(std::move(finish));
  events.push_back(event(ir::StreamEventKind::kDone));
  return events;
}

}  // namespace sluice::cache
