#include "cache/answer_builder.h"

namespace sluice::cache {

ir::ContentPart& AnswerBuilder::part_of_kind(ir::PartKind kind) {
  std::vector<ir::ContentPart>& content = answer_.content;
  // A signed reasoning part is closed: reasoning after it is another block.
  const bool continues = !content.empty() && content.back().kind == kind &&
                         (kind != ir::PartKind::kReasoning || content.back().signature.empty());
  if (!continues) {
    content.emplace_back().kind = kind;
  }
  return content.back();
}

void AnswerBuilder::add(const ir::StreamEvent& e) {
  if (done_ || failed_) {
    return;
  }
  switch (e.kind) {
    case ir::StreamEventKind::kStart:
      answer_.id = e.id;
      answer_.model = e.model;
      break;
    case ir::StreamEventKind::kTextDelta:
      part_of_kind(ir::PartKind::kText).text += e.text;
      break;
    case ir::StreamEventKind::kReasoningDelta:
      part_of_kind(ir::PartKind::kReasoning).text += e.text;
      break;
    case ir::StreamEventKind::kReasoningSignature:
      part_of_kind(ir::PartKind::kReasoning).signature = e.text;
      break;
    case ir::StreamEventKind::kRedactedReasoning: {
      ir::ContentPart& part = answer_.content.emplace_back();
      part.kind = ir::PartKind::kRedactedReasoning;
      part.signature = e.text;
      break;
    }
    case ir::StreamEventKind::kToolCallStart: {
      if (e.index != tool_parts_.size()) {
        failed_ = true;  // indexes come in order of first appearance
        return;
      }
      tool_parts_.push_back(answer_.content.size());
      ir::ContentPart& part = answer_.content.emplace_back();
      part.kind = ir::PartKind::kToolCall;
      part.id = e.id;
      part.name = e.name;
      break;
    }
    case ir::StreamEventKind::kToolCallDelta:
      if (e.index >= tool_parts_.size()) {
        failed_ = true;
        return;
      }
      answer_.content[tool_parts_[e.index]].arguments += e.text;
      break;
    case ir::StreamEventKind::kUsage:
      answer_.usage = e.usage;
      break;
    case ir::StreamEventKind::kFinish:
      answer_.finish = e.finish;
      answer_.stop_sequence = e.text;
      break;
    case ir::StreamEventKind::kError:
      failed_ = true;
      break;
    case ir::StreamEventKind::kDone:
      done_ = true;
      break;
  }
}

std::optional<ir::Response> AnswerBuilder::take() {
  if (!done() || answer_.finish == ir::FinishReason::kUnset) {
    return std::nullopt;
  }
  for (ir::ContentPart& part : answer_.content) {
    if (part.kind == ir::PartKind::kToolCall && part.arguments.empty()) {
      part.arguments = "{}";
    }
  }
  ir::Response out = std::move(answer_);
  answer_ = ir::Response();
  tool_parts_.clear();
  done_ = false;
  return out;
}

}  // namespace sluice::cache
