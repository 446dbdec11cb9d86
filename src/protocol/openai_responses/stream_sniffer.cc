#include "protocol/openai_responses/stream_sniffer.h"

#include <boost/json/value.hpp>

#include "codec/json_read.h"
#include "protocol/openai_responses/conventions.h"

namespace sluice::protocol::openai_responses {
namespace json = boost::json;

namespace {

// The object at `key` of the JSON object `data`, parsed into `doc`; null when there is none.
const json::object* member(std::string_view data, std::string_view key, json::value& doc) {
  boost::system::error_code ec;
  doc = codec::parse_json(data, ec, {}, kMaxJsonDepth);
  const json::object* o = ec ? nullptr : doc.if_object();
  const json::value* v = o != nullptr ? o->if_contains(key) : nullptr;
  return v != nullptr ? v->if_object() : nullptr;
}

std::string type_of(std::string_view data) {
  json::value doc;
  boost::system::error_code ec;
  doc = codec::parse_json(data, ec, {}, kMaxJsonDepth);
  const json::object* o = ec ? nullptr : doc.if_object();
  return std::string(o != nullptr ? string_at(*o, "type").value_or("") : "");
}

}  // namespace

StreamSniffer::Action StreamSniffer::on_event(const codec::SseEvent& event) {
  if (!event.has_data) {
    return Action::kForward;
  }
  ++events_;
  std::string fallback;
  std::string_view type = event.event;
  if (type.empty()) {
    fallback = type_of(event.data);
    type = fallback;
  }
  if (type.ends_with(".delta") || type == "response.output_item.done") {
    saw_output_ = true;  // the commit point: an item's opening (output_item.added) is prelude
  } else if (type == "response.output_item.added") {
    json::value doc;
    if (const json::object* item = member(event.data, "item", doc)) {
      tool_calls_ = tool_calls_ || string_at(*item, "type") == "function_call";
    }
  } else if (type == "response.created") {
    json::value doc;
    if (const json::object* response = member(event.data, "response", doc)) {
      response_id_.assign(string_at(*response, "id").value_or(""));
    }
  } else if (type == "response.completed" || type == "response.incomplete") {
    on_final(event.data, type == "response.incomplete");
  } else if (type == "response.failed") {
    saw_error_ = true;
    done_ = true;
  } else if (type == "error") {
    saw_error_ = true;
  }
  return Action::kForward;
}

void StreamSniffer::on_final(std::string_view data, bool incomplete) {
  done_ = true;
  answered_ = true;
  json::value doc;
  const json::object* response = member(data, "response", doc);
  std::string_view reason;
  if (response != nullptr) {
    if (const json::value* u = response->if_contains("usage"); u != nullptr && !u->is_null()) {
      if (auto usage = read_usage(*u)) {
        usage_ = *usage;
      }
    }
    if (const json::value* d = response->if_contains("incomplete_details");
        d != nullptr && d->is_object()) {
      reason = string_at(d->get_object(), "reason").value_or("");
    }
    if (response_id_.empty()) {
      response_id_.assign(string_at(*response, "id").value_or(""));
    }
  }
  finish_reason_ = ir::to_string(
      finish_from_status(incomplete ? "incomplete" : "completed", reason, tool_calls_));
}

}  // namespace sluice::protocol::openai_responses
