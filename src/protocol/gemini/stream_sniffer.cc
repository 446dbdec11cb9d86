#include "protocol/gemini/stream_sniffer.h"

#include "codec/json_read.h"
#include "protocol/gemini/conventions.h"
#include "protocol/gemini/stream_decoder.h"
#include "protocol/gemini/wire_json.h"

namespace sluice::protocol::gemini {
namespace json = boost::json;
using wire::member;
using wire::string_member;

StreamSniffer::Action StreamSniffer::on_event(const codec::SseEvent& event) {
  const std::string_view text = chunk_text(event);
  if (text.empty()) {
    return Action::kForward;
  }
  ++events_;
  {
    boost::system::error_code ec;
    json::value doc = codec::parse_json(text, ec, json::storage_ptr(&mr_), kMaxJsonDepth);
    if (!ec && doc.is_object()) {
      const json::object& o = doc.get_object();
      if (o.contains("error")) {
        saw_error_ = true;
      }
      std::string_view finish;
      const json::value* candidates = member(o, "candidates");
      if (candidates != nullptr && candidates->is_array() && !candidates->get_array().empty() &&
          candidates->get_array().front().is_object()) {
        const json::object& c = candidates->get_array().front().get_object();
        bool bad = false;
        const json::object* content = wire::object_member(c, "content", bad);
        const json::value* parts = content != nullptr ? member(*content, "parts") : nullptr;
        if (parts != nullptr && parts->is_array()) {
          for (const json::value& p : parts->get_array()) {
            if (!p.is_object()) {
              continue;
            }
            const json::value* t = member(p.get_object(), "text");
            const bool empty_text = t != nullptr && t->is_string() && t->get_string().empty();
            saw_output_ = saw_output_ || (!p.get_object().empty() && !empty_text);
            saw_call_ = saw_call_ || member(p.get_object(), "functionCall") != nullptr;
          }
        }
        finish = string_member(c, "finishReason").value_or("");
        if (!finish.empty() && !answered_) {
          answered_ = true;
          finish_reason_ = ir::to_string(gemini::finish_reason(finish, saw_call_));
        }
      } else if (candidates == nullptr) {
        bool bad = false;
        const json::object* feedback = wire::object_member(o, "promptFeedback", bad);
        if (auto reason =
                feedback != nullptr ? string_member(*feedback, "blockReason") : std::nullopt;
            reason && !answered_) {
          answered_ = true;
          finish_reason_ = ir::to_string(block_reason(*reason));
        }
      }
      if (const json::value* u = member(o, "usageMetadata")) {
        if (auto usage = wire::ir_usage(*u)) {
          usage_ = *usage;
        }
      }
    }
  }
  mr_.release();
  return Action::kForward;
}

}  // namespace sluice::protocol::gemini
