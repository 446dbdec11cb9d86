#include "protocol/turns.h"

#include <string>

namespace sluice::protocol {

namespace {

constexpr std::string_view kJsonObjectInstruction =
    "Respond with a single JSON object and nothing else.";

Error bad(std::string message, const char* param) {
  return Error(ErrorKind::kBadRequest, std::move(message)).with_param(param);
}

Result<void> add_system_part(const ir::ContentPart& p, const char* param, DroppedParts& dropped,
                             Conversation& out) {
  if (p.kind != ir::PartKind::kText) {
    return bad("the system prompt can only hold text", param);
  }
  if (keep_part(p, dropped)) {
    out.system.push_back(&p);
  }
  return {};
}

}  // namespace

void write_turn_text(codec::JsonWriter& w, const ir::ContentPart& text, bool system_prefix) {
  w.ch('"');
  if (system_prefix) {
    w.raw(kSystemPrefix);
  }
  codec::append_json_escaped(w.out(), text.text);
  w.ch('"');
}

bool keep_part(const ir::ContentPart& p, DroppedParts& dropped) {
  if (p.kind == ir::PartKind::kText && p.text.empty()) {
    ++dropped.dropped_empty;
    return false;
  }
  if (p.kind == ir::PartKind::kReasoning && p.signature.empty()) {
    ++dropped.dropped_reasoning;
    return false;
  }
  return true;
}

Result<void> group_turns(const ir::Request& request, DroppedParts& dropped, Conversation& out) {
  for (const ir::ContentPart& p : request.system) {
    if (auto r = add_system_part(p, "system", dropped, out); !r) {
      return r;
    }
  }
  bool leading = true;
  for (const ir::Message& m : request.messages) {
    const bool is_system = m.role == ir::Role::kSystem;
    if (is_system && leading) {
      for (const ir::ContentPart& p : m.content) {
        if (auto r = add_system_part(p, "messages", dropped, out); !r) {
          return r;
        }
      }
      continue;
    }
    leading = false;
    const bool assistant = m.role == ir::Role::kAssistant;
    for (const ir::ContentPart& p : m.content) {
      if (is_system && p.kind != ir::PartKind::kText) {
        return bad("system messages can only hold text", "messages");
      }
      if (p.kind == ir::PartKind::kToolCall || p.kind == ir::PartKind::kToolResult) {
        out.has_tool_blocks = true;
      }
      if (!keep_part(p, dropped)) {
        continue;
      }
      if (out.turns.empty() || out.turns.back().assistant != assistant) {
        out.turns.push_back(Turn{assistant, out.parts.size(), out.parts.size()});
      }
      out.parts.push_back(TurnPart{&p, is_system});
      out.turns.back().end = out.parts.size();
    }
  }
  if (request.response_format.kind == ir::ResponseFormat::Kind::kJsonObject) {
    out.json_instruction.text = kJsonObjectInstruction;
    out.system.push_back(&out.json_instruction);
  }
  if (out.turns.empty()) {
    return bad(
        "the request has no user or assistant message with content; this model's provider "
        "needs at least one",
        "messages");
  }
  return {};
}

}  // namespace sluice::protocol
