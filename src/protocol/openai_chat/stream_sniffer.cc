#include "protocol/openai_chat/stream_sniffer.h"

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/value.hpp>

#include "codec/json_read.h"
#include "protocol/openai_chat/conventions.h"
#include "protocol/openai_chat/response.h"

namespace sluice::protocol::openai_chat {
namespace json = boost::json;

namespace {

// True when `text` has `"key"` followed (after optional whitespace and a colon) by `open`.
// Whether `quoted_key` appears as a key whose value starts with `open` (and, when `nonempty`,
// is not the empty string "").
bool has_key_with(std::string_view text, std::string_view quoted_key, char open,
                  bool nonempty = false) {
  std::size_t pos = 0;
  while ((pos = text.find(quoted_key, pos)) != std::string_view::npos) {
    pos += quoted_key.size();
    std::size_t i = pos;
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) {
      ++i;
    }
    if (i < text.size() && text[i] == ':') {
      ++i;
      while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) {
        ++i;
      }
      if (i < text.size() && text[i] == open &&
          !(nonempty && i + 1 < text.size() && text[i + 1] == '"')) {
        return true;
      }
    }
  }
  return false;
}

// Whether a chunk carries model output, the streaming commit point: text, reasoning, a refusal
// or a tool call. The role chunk ({"role":"assistant","content":""}) does not.
bool carries_output(std::string_view data) {
  return has_key_with(data, "\"content\"", '"', true) ||
         has_key_with(data, "\"tool_calls\"", '[') ||
         has_key_with(data, "\"reasoning_content\"", '"', true) ||
         has_key_with(data, "\"reasoning\"", '"', true) ||
         has_key_with(data, "\"refusal\"", '"', true);
}

std::uint64_t read_count(const json::object& obj, std::string_view key) {
  const json::value* v = obj.if_contains(key);
  return v == nullptr ? 0 : codec::as_count(*v).value_or(0);
}

std::optional<ir::Usage> parse_usage(const json::value& u) {
  if (!u.is_object()) {
    return std::nullopt;
  }
  const json::object& o = u.get_object();
  ir::Usage usage;
  usage.input_tokens = read_count(o, "prompt_tokens");
  usage.output_tokens = read_count(o, "completion_tokens");
  if (const json::value* d = o.if_contains("prompt_tokens_details"); d && d->is_object()) {
    usage.cache_read_tokens = read_count(d->get_object(), "cached_tokens");
  }
  if (const json::value* d = o.if_contains("completion_tokens_details"); d && d->is_object()) {
    usage.reasoning_tokens = read_count(d->get_object(), "reasoning_tokens");
  }
  return usage;
}

// The DOMs here are read once and dropped: they allocate from a monotonic arena whose
// first block is on the caller's stack, so a typical chunk or response (a few KB of DOM)
// costs no heap allocation; bigger ones spill to the heap.
struct Arena {
  unsigned char block[4096];
  json::monotonic_resource resource{block, sizeof block};
};

json::value parse_bounded(std::string_view text, Arena& arena) {
  boost::system::error_code ec;
  return codec::parse_json(text, ec, &arena.resource);  // null on error
}

}  // namespace

StreamSniffer::Action StreamSniffer::on_event(const codec::SseEvent& event) {
  if (!event.has_data) {
    return Action::kForward;  // comments / keep-alives
  }
  ++events_;
  std::string_view data = event.data;
  if (data == "[DONE]") {
    done_ = true;
    return Action::kForward;
  }
  const bool has_usage = has_key_with(data, "\"usage\"", '{');
  const bool has_error = has_key_with(data, "\"error\"", '{');
  if (has_key_with(data, "\"finish_reason\"", '"')) {
    Arena arena;
    json::value doc = parse_bounded(data, arena);
    if (const json::value* choices =
            doc.is_object() ? doc.get_object().if_contains("choices") : nullptr;
        choices && choices->is_array()) {
      for (const json::value& c : choices->get_array()) {
        if (const json::value* fr =
                c.is_object() ? c.get_object().if_contains("finish_reason") : nullptr;
            fr && fr->is_string()) {
          finish_reason_ = std::string(fr->get_string());
        }
      }
    }
  }
  if (has_error) {
    saw_error_ = true;
    return Action::kForward;
  }
  if (!saw_output_ && (!finish_reason_.empty() || carries_output(data))) {
    saw_output_ = true;
  }
  if (!has_usage) {
    return Action::kForward;
  }
  Arena arena;
  json::value doc = parse_bounded(data, arena);
  if (!doc.is_object()) {
    return Action::kForward;
  }
  const json::object& obj = doc.get_object();
  if (const json::value* u = obj.if_contains("usage")) {
    if (auto parsed = parse_usage(*u)) {
      usage_ = parsed;
    }
  }
  const json::value* choices = obj.if_contains("choices");
  const bool usage_only = choices && choices->is_array() && choices->get_array().empty();
  if (usage_only && strip_usage_chunk_) {
    return Action::kDrop;
  }
  return Action::kForward;
}

std::optional<ir::Usage> usage_from_response(std::string_view body, ir::FinishReason* finish) {
  Arena arena;
  json::value doc = parse_bounded(body, arena);
  if (!doc.is_object()) {
    return std::nullopt;
  }
  if (const json::value* choices = doc.get_object().if_contains("choices");
      finish != nullptr && choices != nullptr && choices->is_array() &&
      !choices->get_array().empty() && choices->get_array().front().is_object()) {
    const json::value* reason =
        choices->get_array().front().get_object().if_contains("finish_reason");
    if (reason != nullptr && reason->is_string()) {
      *finish = finish_reason_from_openai(reason->get_string());
    }
  }
  if (const json::value* u = doc.get_object().if_contains("usage")) {
    return parse_usage(*u);
  }
  return std::nullopt;
}

}  // namespace sluice::protocol::openai_chat
