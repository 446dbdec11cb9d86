#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "codec/sse.h"
#include "ir/stream_event.h"
#include "protocol/json_stream_decoder.h"

namespace sluice::protocol::openai_responses {

// Translates an OpenAI Responses event stream (`event: <type>` + `data: {json}`, no [DONE])
// into IR stream events, keeping the ordering contract of ir/stream_event.h. One instance per
// upstream response; not thread-safe; not copyable (it owns a parse arena).
//
//   response.created (or the first response.in_progress / queued) -> kStart {id, model}
//   response.output_item.added        function_call -> kToolCallStart {index = function calls so
//                                     far, id = call_id, name} (+ kToolCallDelta for arguments
//                                     it already carries); message and reasoning items are
//                                     tracked by output_index
//   response.output_text.delta, response.refusal.delta           -> kTextDelta
//   response.function_call_arguments.delta                       -> kToolCallDelta
//   response.reasoning_summary_text.delta, reasoning_text.delta -> kReasoningDelta; a second
//                                     and later summary part of an item first adds "\n\n"
//                                     (the IR has one reasoning text, the API several parts)
//   response.output_item.done         reasoning with encrypted_content -> kReasoningSignature
//                                     when the item had summary parts, else kRedactedReasoning
//                                     (the rule of conventions.h read_reasoning_item); text,
//                                     arguments or summary the item carries that no delta
//                                     streamed are emitted now
//   response.completed                -> kUsage, kFinish (kToolCalls when a function call was
//                                     seen, else kStop), kDone
//   response.incomplete               -> kUsage, kFinish (max_output_tokens -> kLength,
//                                     content_filter -> kContentFilter, else kOther), kDone
//   response.failed                   -> kError (response.error)
//   error                             -> kError (code, message, param; top-level as in the
//                                     OpenAPI spec or nested under "error" as recorded)
//   response.in_progress, content_part.added / .done, *.done, summary_part.done, keepalive
//                                     -> nothing
//   an event type not named here    -> nothing; counted as schema drift (unknown_fields())
// Anything else — built-in tool items (web_search_call, ...), annotation and audio events,
// invalid JSON, events for unknown output indexes — becomes one kError (kUpstreamProtocol,
// "cannot translate ...") that ends the stream: never dropped.
// After kDone or kError further input is ignored. finished() and unknown_fields() (distinct
// unknown event types, skipped, and unknown fields of the events, response object, output
// items, content parts and usage: conventions.h known::) come from JsonStreamDecoder.
class StreamDecoder final : public protocol::JsonStreamDecoder {
 public:
  // `event.event` names the type; when it is empty the JSON `type` field is used.
  void on_event(const codec::SseEvent& event, std::vector<ir::StreamEvent>& out) override;
  void decode(std::string_view event_name, std::string_view data,
              std::vector<ir::StreamEvent>& out);
  // End of the upstream body: a stream without response.completed / incomplete gets kError.
  void on_end(std::vector<ir::StreamEvent>& out) override;
  // response.completed or response.incomplete has been seen.
  bool answered() const { return answered_; }

 private:
  enum class ItemKind : std::uint8_t { kNone, kMessage, kFunctionCall, kReasoning };
  struct Item {
    ItemKind kind = ItemKind::kNone;
    std::uint32_t tool_index = 0;
    std::uint32_t summary_parts = 0;
    bool streamed = false;  // a delta carried some of its content
  };

  void dispatch(std::string_view type, const boost::json::object& o,
                std::vector<ir::StreamEvent>& out);
  void on_item_added(const boost::json::object& o, std::vector<ir::StreamEvent>& out);
  void on_item_done(const boost::json::object& o, std::vector<ir::StreamEvent>& out);
  // A delta event for an item of `kind` -> `event` with the delta text.
  void on_delta(const boost::json::object& o, ItemKind kind, ir::StreamEventKind event,
                std::vector<ir::StreamEvent>& out);
  void on_final(const boost::json::object& o, std::vector<ir::StreamEvent>& out);
  Item* item_at(const boost::json::object& o, ItemKind kind, std::string_view what,
                std::vector<ir::StreamEvent>& out);

  static constexpr std::size_t kMaxItems = 4096;

  std::vector<Item> items_;
  std::uint32_t tools_ = 0;
  bool started_ = false;
  bool answered_ = false;
};

}  // namespace sluice::protocol::openai_responses
