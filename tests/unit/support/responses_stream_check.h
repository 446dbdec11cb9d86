#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "codec/sse.h"
#include "ir/usage.h"

// A checker for OpenAI Responses event streams, shared by the unit tests and the fuzz targets:
// the rules the official SDK's accumulator enforces (openai-node
// internal/responses/response-accumulator.js: items appended by output_index, ids non-empty and
// unique, deltas addressed to an existing item of the right type by item_id, content parts and
// summary parts appended before their deltas, output_item.done replacing an item of the same
// identity) plus the wire rules of the API (event name = data.type, sequence_number counting from
// 0, response.created first, a final response.completed / incomplete whose output matches the
// items, or an error event). What a client ends up with is returned in ResponsesObserved.
namespace sluice::test {

struct ResponsesObserved {
  std::string response_id;
  std::string model;
  std::string status;  // completed, incomplete, or failed (an error event)
  std::string incomplete_reason;
  std::string text;                    // every output_text, in output order
  std::string reasoning;               // every summary text, parts of one item separated by "\n\n"
  std::vector<std::string> encrypted;  // encrypted_content of each reasoning item that has one
  struct Call {
    std::string call_id;
    std::string name;
    std::string arguments;
  };
  std::vector<Call> calls;
  std::optional<ir::Usage> usage;
  std::string error_code;
  std::string error_message;
  std::size_t events = 0;
};

namespace detail {

namespace json = boost::json;

inline std::string str(const json::value* v) {
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

inline std::optional<std::int64_t> num(const json::value* v) {
  if (v != nullptr && v->is_int64()) {
    return v->get_int64();
  }
  if (v != nullptr && v->is_uint64()) {
    return static_cast<std::int64_t>(v->get_uint64());
  }
  return std::nullopt;
}

inline std::uint64_t count(const json::object* o, std::string_view key) {
  const json::value* v = o != nullptr ? o->if_contains(key) : nullptr;
  return v != nullptr && v->is_int64() ? static_cast<std::uint64_t>(v->get_int64()) : 0;
}

class ResponsesChecker {
 public:
  explicit ResponsesChecker(ResponsesObserved& o, bool require_sequence)
      : o_(o), require_sequence_(require_sequence) {}

  // "" or the first broken rule.
  std::string event(std::string_view name, std::string_view data) {
    if (ended_ && !(failed_ && name == "response.failed")) {
      return "event after the end of the stream: " + std::string(name);
    }
    boost::system::error_code ec;
    json::value doc = json::parse(data, ec);
    if (ec || !doc.is_object()) {
      return "data is not a JSON object";
    }
    const json::object& e = doc.get_object();
    if (str(e.if_contains("type")) != name) {
      return "event name '" + std::string(name) + "' differs from data.type";
    }
    ++o_.events;
    if (require_sequence_) {
      const auto seq = num(e.if_contains("sequence_number"));
      if (!seq || *seq != static_cast<std::int64_t>(sequence_)) {
        return "sequence_number out of order at " + std::string(name);
      }
      ++sequence_;
    }
    if (name == "error") {
      const json::value* nested = e.if_contains("error");
      const json::object& err = nested != nullptr && nested->is_object() ? nested->get_object() : e;
      o_.error_code = str(err.if_contains("code"));
      o_.error_message = str(err.if_contains("message"));
      o_.status = "failed";
      if (o_.error_message.empty()) {
        return "error event without a message";
      }
      ended_ = failed_ = true;
      return {};
    }
    if (name == "response.failed") {
      o_.status = "failed";
      ended_ = failed_ = true;
      return {};
    }
    if (!started_) {
      if (name != "response.created") {
        return "the first event is " + std::string(name) + ", not response.created";
      }
      const json::object* r = object(e, "response");
      if (r == nullptr || str(r->if_contains("id")).empty() ||
          str(r->if_contains("status")) != "in_progress") {
        return "response.created lacks an in_progress response with an id";
      }
      o_.response_id = str(r->if_contains("id"));
      o_.model = str(r->if_contains("model"));
      started_ = true;
      return {};
    }
    return dispatch(name, e);
  }

  std::string end() {
    if (!ended_) {
      return "the stream ended without response.completed, response.incomplete or an error";
    }
    return {};
  }

 private:
  static const json::object* object(const json::object& o, std::string_view key) {
    const json::value* v = o.if_contains(key);
    return v != nullptr ? v->if_object() : nullptr;
  }

  // The item an item-scoped event names, checked against its type and item_id.
  json::object* item_for(const json::object& e, std::string_view type, std::string& error) {
    const auto index = num(e.if_contains("output_index"));
    if (!index || *index < 0 || static_cast<std::size_t>(*index) >= items_.size()) {
      error = "missing output at index";
      return nullptr;
    }
    json::object& item = items_[static_cast<std::size_t>(*index)].as_object();
    if (str(item.if_contains("type")) != type) {
      error = "expected output item type " + std::string(type);
      return nullptr;
    }
    if (e.contains("item_id") && str(e.if_contains("item_id")) != str(item.if_contains("id"))) {
      error = "item_id does not match the item at output_index";
      return nullptr;
    }
    if (done_[static_cast<std::size_t>(*index)]) {
      error = "event for an item already done";
      return nullptr;
    }
    return &item;
  }

  std::string dispatch(std::string_view name, const json::object& e) {
    std::string error;
    if (name == "response.in_progress" || name == "response.queued") {
      return {};
    }
    if (name == "response.output_item.added") {
      const auto index = num(e.if_contains("output_index"));
      const json::object* item = object(e, "item");
      if (!index || *index != static_cast<std::int64_t>(items_.size()) || item == nullptr) {
        return "output_item.added does not append to the output";
      }
      const std::string id = str(item->if_contains("id"));
      const std::string type = str(item->if_contains("type"));
      if (id.empty() || type.empty()) {
        return "output item without id or type";
      }
      for (const json::value& other : items_) {
        if (str(other.as_object().if_contains("id")) == id) {
          return "duplicate output item id " + id;
        }
      }
      if (type == "function_call") {
        if (str(item->if_contains("call_id")).empty() || str(item->if_contains("name")).empty()) {
          return "function_call item without call_id or name";
        }
        for (const json::value& other : items_) {
          if (str(other.as_object().if_contains("call_id")) == str(item->if_contains("call_id"))) {
            return "duplicate call_id";
          }
        }
      }
      items_.push_back(*item);
      done_.push_back(false);
      return {};
    }
    if (name == "response.content_part.added" || name == "response.content_part.done") {
      json::object* item = item_for(e, "message", error);
      const json::object* part = object(e, "part");
      if (item == nullptr || part == nullptr) {
        return error.empty() ? "content part event without part" : error;
      }
      json::array& content = (*item)["content"].as_array();
      const auto ci = num(e.if_contains("content_index"));
      if (name == "response.content_part.added") {
        if (!ci || *ci != static_cast<std::int64_t>(content.size())) {
          return "content_part.added does not append";
        }
        content.push_back(*part);
        return {};
      }
      if (!ci || *ci < 0 || static_cast<std::size_t>(*ci) >= content.size() ||
          content[static_cast<std::size_t>(*ci)].as_object() != *part) {
        return "content_part.done differs from the accumulated part";
      }
      return {};
    }
    if (name == "response.output_text.delta" || name == "response.output_text.done") {
      json::object* item = item_for(e, "message", error);
      if (item == nullptr) {
        return error;
      }
      json::array& content = (*item)["content"].as_array();
      const auto ci = num(e.if_contains("content_index"));
      if (!ci || *ci < 0 || static_cast<std::size_t>(*ci) >= content.size() ||
          str(content[static_cast<std::size_t>(*ci)].as_object().if_contains("type")) !=
              "output_text") {
        return "text event for a missing output_text part";
      }
      json::object& part = content[static_cast<std::size_t>(*ci)].as_object();
      if (name == "response.output_text.delta") {
        part["text"] = str(part.if_contains("text")) + str(e.if_contains("delta"));
        return {};
      }
      return str(part.if_contains("text")) == str(e.if_contains("text"))
                 ? std::string()
                 : "output_text.done text differs from the deltas";
    }
    if (name == "response.reasoning_summary_part.added" ||
        name == "response.reasoning_summary_part.done" ||
        name == "response.reasoning_summary_text.delta" ||
        name == "response.reasoning_summary_text.done") {
      json::object* item = item_for(e, "reasoning", error);
      if (item == nullptr) {
        return error;
      }
      json::array& summary = (*item)["summary"].as_array();
      const auto si = num(e.if_contains("summary_index"));
      if (name == "response.reasoning_summary_part.added") {
        if (!si || *si != static_cast<std::int64_t>(summary.size()) || !object(e, "part")) {
          return "summary_part.added does not append";
        }
        summary.push_back(*object(e, "part"));
        return {};
      }
      if (!si || *si < 0 || static_cast<std::size_t>(*si) >= summary.size()) {
        return "summary event for a missing summary part";
      }
      json::object& part = summary[static_cast<std::size_t>(*si)].as_object();
      if (name == "response.reasoning_summary_text.delta") {
        part["text"] = str(part.if_contains("text")) + str(e.if_contains("delta"));
        return {};
      }
      const std::string expected = name == "response.reasoning_summary_text.done"
                                       ? str(e.if_contains("text"))
                                       : str(object(e, "part")->if_contains("text"));
      return str(part.if_contains("text")) == expected ? std::string()
                                                       : "summary done differs from the deltas";
    }
    if (name == "response.function_call_arguments.delta" ||
        name == "response.function_call_arguments.done") {
      json::object* item = item_for(e, "function_call", error);
      if (item == nullptr) {
        return error;
      }
      if (name == "response.function_call_arguments.delta") {
        (*item)["arguments"] = str(item->if_contains("arguments")) + str(e.if_contains("delta"));
        return {};
      }
      if (str(item->if_contains("arguments")) != str(e.if_contains("arguments")) ||
          (e.contains("name") && str(e.if_contains("name")) != str(item->if_contains("name")))) {
        return "function_call_arguments.done differs from the deltas";
      }
      return {};
    }
    if (name == "response.output_item.done") {
      const json::object* done = object(e, "item");
      const auto index = num(e.if_contains("output_index"));
      if (done == nullptr || !index || *index < 0 ||
          static_cast<std::size_t>(*index) >= items_.size()) {
        return "output_item.done for a missing item";
      }
      const std::size_t i = static_cast<std::size_t>(*index);
      json::object& item = items_[i].as_object();
      if (done_[i] || str(done->if_contains("id")) != str(item.if_contains("id")) ||
          str(done->if_contains("type")) != str(item.if_contains("type"))) {
        return "output_item.done changes the item's identity or repeats";
      }
      // What the deltas built must be what the done item says.
      for (const char* key : {"content", "summary", "arguments"}) {
        if (item.contains(key) && done->contains(key) && item.at(key) != done->at(key)) {
          return std::string("output_item.done ") + key + " differs from the deltas";
        }
      }
      items_[i] = *done;
      done_[i] = true;
      return {};
    }
    if (name == "response.completed" || name == "response.incomplete") {
      return final(name, e);
    }
    return "unexpected event " + std::string(name);
  }

  std::string final(std::string_view name, const json::object& e) {
    const json::object* r = object(e, "response");
    if (r == nullptr) {
      return "final event without response";
    }
    o_.status = str(r->if_contains("status"));
    if (o_.status != (name == "response.completed" ? "completed" : "incomplete")) {
      return "final status does not match the event";
    }
    if (str(r->if_contains("id")) != o_.response_id) {
      return "the final response has another id";
    }
    if (const json::object* d = object(*r, "incomplete_details")) {
      o_.incomplete_reason = str(d->if_contains("reason"));
    }
    const json::value* output = r->if_contains("output");
    if (output == nullptr || !output->is_array() || output->get_array().size() != items_.size()) {
      return "the final output does not hold every item";
    }
    for (std::size_t i = 0; i < items_.size(); ++i) {
      if (!done_[i]) {
        return "item " + std::to_string(i) + " never done";
      }
      // encrypted_content is re-encrypted for every copy the API sends; the rest must match.
      json::value final_item = output->get_array()[i];
      json::value done_item = items_[i];
      final_item.as_object().erase("encrypted_content");
      done_item.as_object().erase("encrypted_content");
      if (final_item != done_item) {
        return "final output item " + std::to_string(i) + " differs from output_item.done";
      }
      observe(items_[i].as_object());
    }
    if (const json::object* u = object(*r, "usage")) {
      ir::Usage usage;
      usage.input_tokens = count(u, "input_tokens");
      usage.output_tokens = count(u, "output_tokens");
      usage.cache_read_tokens = count(object(*u, "input_tokens_details"), "cached_tokens");
      usage.cache_write_tokens = count(object(*u, "input_tokens_details"), "cache_write_tokens");
      usage.reasoning_tokens = count(object(*u, "output_tokens_details"), "reasoning_tokens");
      if (count(u, "total_tokens") != usage.input_tokens + usage.output_tokens) {
        return "total_tokens is not input + output";
      }
      o_.usage = usage;
    }
    ended_ = true;
    return {};
  }

  void observe(const json::object& item) {
    const std::string type = str(item.if_contains("type"));
    if (type == "message") {
      for (const json::value& part : item.at("content").as_array()) {
        o_.text += str(part.as_object().if_contains("text"));
      }
    } else if (type == "reasoning") {
      bool first = true;
      for (const json::value& part : item.at("summary").as_array()) {
        if (!first) {
          o_.reasoning += "\n\n";
        }
        first = false;
        o_.reasoning += str(part.as_object().if_contains("text"));
      }
      if (item.contains("encrypted_content")) {
        o_.encrypted.push_back(str(item.if_contains("encrypted_content")));
      }
    } else if (type == "function_call") {
      o_.calls.push_back({str(item.if_contains("call_id")), str(item.if_contains("name")),
                          str(item.if_contains("arguments"))});
    }
  }

  ResponsesObserved& o_;
  bool require_sequence_;
  std::uint64_t sequence_ = 0;
  bool started_ = false;
  bool ended_ = false;
  bool failed_ = false;
  std::vector<json::value> items_;
  std::vector<bool> done_;
};

}  // namespace detail

// Checks a whole Responses stream; returns "" when it is well-formed, else the first broken
// rule. `require_sequence`: every event carries sequence_number n = 0, 1, 2, ... (the March 2025
// captures have none).
inline std::string check_responses_stream(std::string_view bytes, ResponsesObserved& observed,
                                          bool require_sequence = true) {
  detail::ResponsesChecker checker(observed, require_sequence);
  codec::SseParser parser(64 * 1024 * 1024);
  parser.feed(bytes);
  codec::SseEvent ev;
  std::string error;
  auto step = [&](const codec::SseEvent& e) {
    if (error.empty() && e.has_data) {
      error = checker.event(e.event, e.data);
    }
  };
  while (parser.next(ev) == codec::SseParser::Status::kEvent) {
    step(ev);
  }
  if (parser.finish(ev) == codec::SseParser::Status::kEvent) {
    step(ev);
  }
  return error.empty() ? checker.end() : error;
}

}  // namespace sluice::test
