#include "protocol/openai_responses/tool_names.h"

#include <algorithm>

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/value.hpp>

#include "codec/json_read.h"
#include "protocol/openai_responses/conventions.h"
#include "protocol/tool_ids.h"

namespace sluice::protocol::openai_responses {
namespace json = boost::json;

namespace {

// append_id_hash adds "_" and 16 hex digits.
constexpr std::size_t kHashLength = 17;

bool fits(std::string_view name) {
  return !name.empty() && name.size() <= ToolNames::kMaxName &&
         std::all_of(name.begin(), name.end(), is_id_word_char);
}

// Codex's own join (codex-rs/protocol/src/tool_name.rs canonical_flat_name), so a model sees
// the names Codex uses wherever it cannot keep the namespace apart.
std::string join(std::string_view space, std::string_view name) {
  while (!space.empty() && space.back() == '_') {
    space.remove_suffix(1);
  }
  while (!name.empty() && name.front() == '_') {
    name.remove_prefix(1);
  }
  std::string out;
  out.reserve(space.size() + 2 + name.size());
  out.append(space).append("__").append(name);
  return out;
}

}  // namespace

void ToolNames::add(std::string space, std::string name, bool custom) {
  CallerTool& tool = tools_.emplace_back();
  tool.space = std::move(space);
  tool.name = std::move(name);
  tool.custom = custom;
  if (tool.space.empty()) {
    tool.flat = tool.name;
  }
}

bool ToolNames::taken(std::string_view flat, std::size_t upto) const {
  for (std::size_t i = 0; i < tools_.size(); ++i) {
    const CallerTool& t = tools_[i];
    // Top-level names are always taken; namespaced ones once assigned (those before `upto`).
    if ((t.space.empty() || i < upto) && t.flat == flat) {
      return true;
    }
  }
  return false;
}

std::string ToolNames::make_flat(std::string_view space, std::string_view name,
                                 std::size_t upto) const {
  std::string flat = join(space, name);
  if (fits(flat) && !taken(flat, upto)) {
    return flat;
  }
  std::string key;
  key.append(space).push_back('\0');
  key.append(name);
  for (unsigned salt = 0;; ++salt) {
    std::string short_form = flat.substr(0, kMaxName - kHashLength);
    std::replace_if(
        short_form.begin(), short_form.end(), [](char c) { return !is_id_word_char(c); }, '_');
    append_id_hash(short_form, salt == 0 ? key : key + '\0' + std::to_string(salt));
    if (!taken(short_form, upto)) {
      return short_form;
    }
  }
}

void ToolNames::assign() {
  for (std::size_t i = 0; i < tools_.size(); ++i) {
    if (!tools_[i].space.empty()) {
      tools_[i].flat = make_flat(tools_[i].space, tools_[i].name, i);
    }
  }
}

const CallerTool* ToolNames::find(std::string_view flat) const {
  for (const CallerTool& t : tools_) {
    if (t.flat == flat) {
      return &t;
    }
  }
  return nullptr;
}

std::string ToolNames::flat_name(std::string_view space, std::string_view name) const {
  if (space.empty()) {
    return std::string(name);
  }
  for (const CallerTool& t : tools_) {
    if (t.space == space && t.name == name) {
      return t.flat;
    }
  }
  return make_flat(space, name, tools_.size());
}

bool ToolNames::restores() const {
  return std::any_of(tools_.begin(), tools_.end(),
                     [](const CallerTool& t) { return t.custom || !t.space.empty(); });
}

std::string custom_tool_input(std::string_view arguments) {
  codec::SmallDocumentArena arena;
  boost::system::error_code ec;
  json::value doc = codec::parse_json(arguments, ec, &arena.resource, kMaxJsonDepth);
  const json::object* o = ec ? nullptr : doc.if_object();
  if (o == nullptr) {
    return std::string(arguments);
  }
  if (const json::value* input = o->if_contains("input"); input != nullptr && input->is_string()) {
    return std::string(input->get_string());
  }
  if (o->empty()) {
    return {};
  }
  if (o->size() == 1 && o->begin()->value().is_string()) {
    return std::string(o->begin()->value().get_string());
  }
  return std::string(arguments);
}

}  // namespace sluice::protocol::openai_responses
