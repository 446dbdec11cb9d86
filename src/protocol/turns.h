#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "codec/json_writer.h"
#include "core/result.h"
#include "ir/request.h"

namespace sluice::protocol {

// The IR conversation regrouped as the strictly alternating user / assistant turns that
// Anthropic's Messages API and Bedrock's Converse both require, with a system prompt beside
// them. Shared by the request encoders of anthropic/ and bedrock_converse/; each writes the
// turns in its own wire shape. Sans-I/O, no state beyond the Conversation it fills.

// Prefix of a mid-conversation system message's text once it becomes user text, so the model
// sees whose words they are.
inline constexpr std::string_view kSystemPrefix = "System: ";

// What grouping left out because neither upstream can take it (both encoders report these in
// their EncodeStats).
struct DroppedParts {
  std::uint32_t dropped_reasoning = 0;  // reasoning parts without a signature
  std::uint32_t dropped_empty = 0;      // empty text parts
};

// Whether `p` is sent: not an empty text part (both APIs reject empty text blocks) and not a
// reasoning part without a signature (another provider's reasoning: Claude rejects unsigned
// thinking). A dropped part is counted in `dropped`; every other part is kept as it is.
bool keep_part(const ir::ContentPart& p, DroppedParts& dropped);

// One part of a turn, and whether it came from a mid-conversation system message (to be
// written with kSystemPrefix).
struct TurnPart {
  const ir::ContentPart* part;
  bool system_prefix;
};

// One wire message: its role and its parts, Conversation::parts[begin, end).
struct Turn {
  bool assistant;
  std::size_t begin;
  std::size_t end;
};

// The result of group_turns. Points into the ir::Request it was made from (and, for the
// json_object instruction, into itself): neither copyable nor movable, valid while that
// request lives.
struct Conversation {
  Conversation() = default;
  Conversation(const Conversation&) = delete;
  Conversation& operator=(const Conversation&) = delete;

  // The system prompt's text parts, in order.
  std::vector<const ir::ContentPart*> system;
  std::vector<TurnPart> parts;
  std::vector<Turn> turns;
  // Some non-system message holds a tool call or a tool result.
  bool has_tool_blocks = false;
  // The text "Respond with a single JSON object and nothing else.", which `system` ends with
  // for response_format json_object (neither API has a schema-less JSON mode).
  ir::ContentPart json_instruction;
};

// Fills `out` (empty) from `request`:
//   - system = request.system's text parts, then the text parts of Role::kSystem messages
//     that come before any other message, then the json_object instruction when asked for.
//   - Every later message is a turn: kAssistant an assistant turn; kUser, kTool and kSystem a
//     user turn (a kSystem message's parts marked system_prefix). Consecutive messages of the
//     same role are merged into one turn; a message left without parts adds none.
//   - Parts not kept (keep_part) are left out and counted in `dropped`; the others keep their
//     order.
// Errors: ErrorKind::kBadRequest worded for the caller: non-text content in request.system
// (param "system") or in a leading system message ("messages"): "the system prompt can only
// hold text"; in a later system message: "system messages can only hold text" ("messages");
// no turn left ("messages").
Result<void> group_turns(const ir::Request& request, DroppedParts& dropped, Conversation& out);

// Writes each of `items` with `write(const T&) -> Result<void>`, a ',' between them; stops at
// the first error and returns it.
template <class T, class Write>
Result<void> write_each(codec::JsonWriter& w, std::span<const T> items, Write&& write) {
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) {
      w.ch(',');
    }
    if (auto r = write(items[i]); !r) {
      return r;
    }
  }
  return {};
}

// The parts of `turn`.
inline std::span<const TurnPart> parts_of(const Conversation& conversation, const Turn& turn) {
  return std::span<const TurnPart>(conversation.parts).subspan(turn.begin, turn.end - turn.begin);
}

// Writes `text` as a JSON string, its text prefixed with kSystemPrefix when `system_prefix`.
void write_turn_text(codec::JsonWriter& w, const ir::ContentPart& text, bool system_prefix);

}  // namespace sluice::protocol
