#include "reply_content.h"

#include <algorithm>

#include "json_text.h"

namespace sluice::mock {
namespace json = boost::json;

namespace {

constexpr std::uint32_t kToolOutputTokens = 3;

void append_word(std::string& out, std::uint32_t i) {
  out.push_back('w');
  out += std::to_string(i);
}

}  // namespace

std::string_view tool_arguments(const ReplySpec& spec) {
  return spec.tool_arguments.empty() ? kToolArguments : std::string_view(spec.tool_arguments);
}

std::array<std::string_view, 3> tool_argument_fragments(std::string_view arguments) {
  if (arguments == kToolArguments) {
    return kToolArgumentFragments;
  }
  // A cut never splits a UTF-8 sequence: it moves past continuation bytes.
  auto cut = [&](std::size_t at) {
    while (at < arguments.size() && (static_cast<unsigned char>(arguments[at]) & 0xC0) == 0x80) {
      ++at;
    }
    return at;
  };
  std::size_t a = cut(arguments.size() / 3);
  std::size_t b = std::max(a, cut(arguments.size() * 2 / 3));
  return {arguments.substr(0, a), arguments.substr(a, b - a), arguments.substr(b)};
}

std::uint32_t output_tokens(bool tool_call, std::uint32_t words) {
  return tool_call ? kToolOutputTokens : words + 2;
}

void append_reply_text(std::string& out, std::uint32_t words) {
  out += "Mock reply";
  for (std::uint32_t i = 1; i <= words; ++i) {
    out.push_back(' ');
    append_word(out, i);
  }
}

void append_reply_piece(std::string& out, std::uint32_t i) {
  out += i == 1 ? "Mock reply " : " ";
  append_word(out, i);
}

std::uint32_t estimate_tokens(std::size_t chars) {
  return static_cast<std::uint32_t>(chars / 4 + 1);
}

std::size_t text_chars(const json::value& content) {
  if (const auto* s = content.if_string()) {
    return s->size();
  }
  std::size_t n = 0;
  if (const auto* parts = content.if_array()) {
    for (const auto& part : *parts) {
      if (const auto* obj = part.if_object()) {
        if (const auto* text = string_member(*obj, "text")) {
          n += text->size();
        }
      }
    }
  }
  return n;
}

const json::string* string_member(const json::object& obj, std::string_view key) {
  const auto* v = obj.if_contains(key);
  return v ? v->if_string() : nullptr;
}

const json::array* array_member(const json::object& obj, std::string_view key) {
  const auto* v = obj.if_contains(key);
  return v ? v->if_array() : nullptr;
}

const json::object* object_member(const json::object& obj, std::string_view key) {
  const auto* v = obj.if_contains(key);
  return v ? v->if_object() : nullptr;
}

std::optional<std::string_view> name_member(const json::value& v) {
  const auto* obj = v.if_object();
  const auto* name = obj ? string_member(*obj, "name") : nullptr;
  return name ? std::optional<std::string_view>(*name) : std::nullopt;
}

std::optional<std::string_view> first_tool(const json::object& root, ToolNameReader name_of) {
  const auto* tools = array_member(root, "tools");
  if (!tools || tools->empty()) {
    return std::nullopt;
  }
  return name_of(tools->front()).value_or("tool");
}

std::optional<std::string> choose_tool(std::optional<std::string_view> first,
                                       const ToolChoice& choice, bool answered) {
  if (!first || choice.forbidden || (answered && !choice.forced && !choice.required)) {
    return std::nullopt;
  }
  return std::string(choice.forced.value_or(*first));
}

bool PhasedStream::next(std::string& out, EventKind& kind) {
  std::uint32_t i = position_;
  if (i < prelude_) {
    kind = EventKind::kPrelude;
    prelude_event(i, out);
  } else if ((i -= prelude_) < counted_) {
    kind = EventKind::kCounted;
    counted_event(i, out);
  } else if ((i -= counted_) < trailer_) {
    kind = EventKind::kTrailer;
    trailer_event(i, out);
  } else {
    return false;
  }
  ++position_;
  return true;
}

void PhasedStream::set_phases(std::uint32_t prelude, std::uint32_t counted, std::uint32_t trailer) {
  prelude_ = prelude;
  counted_ = counted;
  trailer_ = trailer;
}

void begin_typed_event(std::string& out, std::string_view type) {
  out += "event: ";
  out += type;
  out += "\ndata: {\"type\":";
  append_json_string(out, type);
}

void end_sse_event(std::string& out) { out += "\n\n"; }

}  // namespace sluice::mock
