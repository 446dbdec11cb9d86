#include "guardrails/stream_restore.h"

#include "guardrails/body.h"
#include "guardrails/json_strings.h"
#include "guardrails/sse_events.h"

namespace sluice::guardrails {
namespace {

bool delta_member(std::string_view key, std::string_view event_name) {
  return !repeats_deltas(event_name) && delta_text_member(key);
}

// A Responses function call's argument deltas are JSON text under `delta`.
bool holds_json(std::string_view key, std::string_view event_name) {
  return json_text_member(key) ||
         (key == "delta" && event_name.find("arguments") != std::string_view::npos);
}

// The event's single data line's JSON, or empty (no data, several lines, [DONE]).
std::string_view json_of(std::string_view event, const SseEvent& e) {
  if (e.data_lines != 1) {
    return {};
  }
  const std::string_view data = event.substr(e.data_begin, e.data_end - e.data_begin);
  return !data.empty() && data.front() == '{' ? data : std::string_view{};
}

}  // namespace

std::string StreamRestorer::rewrite(std::string_view event, std::string& carry, bool cut) {
  const SseEvent e = read_sse_event(event);
  const std::string_view json = json_of(event, e);
  if (json.empty()) {
    return std::string(event);
  }
  std::optional<std::string> rewritten =
      rewrite_strings(json, [&](const JsonString& s) -> std::optional<std::string> {
        if (structural_member(s.key)) {
          return std::nullopt;
        }
        const bool inner = holds_json(s.key, e.name);
        if (!delta_member(s.key, e.name)) {
          return pseudonyms_.restore(s.text, inner);
        }
        std::string text = std::move(carry);
        carry.clear();
        const bool changed = !text.empty();
        text += s.text;
        std::size_t partial = cut ? pseudonyms_.partial_tail(text) : 0;
        if (partial > 0) {
          carry.assign(text, text.size() - partial);
          carry_member_ = std::string(s.key);
          text.resize(text.size() - partial);
        }
        if (std::optional<std::string> restored = pseudonyms_.restore(text, inner)) {
          return restored;
        }
        return changed || partial > 0 ? std::optional<std::string>(std::move(text)) : std::nullopt;
      });
  if (!rewritten) {
    return std::string(event);
  }
  std::string out;
  out.reserve(event.size() + rewritten->size() - json.size());
  out.append(event.substr(0, e.data_begin));
  out += *rewritten;
  out.append(event.substr(e.data_end));
  return out;
}

std::string StreamRestorer::first_delta_member(std::string_view event) const {
  const SseEvent e = read_sse_event(event);
  const std::string_view json = json_of(event, e);
  std::string member;
  if (!json.empty()) {
    rewrite_strings(json, [&](const JsonString& s) -> std::optional<std::string> {
      if (member.empty() && !structural_member(s.key) && delta_member(s.key, e.name)) {
        member = std::string(s.key);
      }
      return std::nullopt;
    });
  }
  return member;
}

void StreamRestorer::release_waiting(std::string& out, bool as_it_was) {
  if (as_it_was) {
    // The tail was not a placeholder after all: the event goes out with it, as it came (its
    // own complete placeholders put back).
    carry_.clear();
    std::string carry_in = std::move(waiting_carry_in_);
    out += rewrite(waiting_, carry_in, /*cut=*/false);
  } else {
    out += waiting_rewritten_;  // its tail goes on with the next delta (carry_)
  }
  out += queued_;
  waiting_.clear();
  waiting_carry_in_.clear();
  waiting_rewritten_.clear();
  queued_.clear();
  is_waiting_ = false;
}

void StreamRestorer::pass(std::string& data, bool ending) {
  if (pseudonyms_.empty()) {
    return;
  }
  std::string out;
  out.reserve(data.size());
  std::size_t at = 0;
  while (at < data.size()) {
    std::size_t end = sse_event_end(data, at);
    if (end == std::string_view::npos) end = data.size();
    const std::string_view event = std::string_view(data).substr(at, end - at);
    at = end;
    if (is_waiting_) {
      if (read_sse_event(event).name == "ping") {
        queued_.append(event);
        continue;
      }
      release_waiting(out, /*as_it_was=*/first_delta_member(event) != carry_member_);
    }
    std::string carry_in = carry_;
    std::string rewritten = rewrite(event, carry_, /*cut=*/true);
    if (carry_.empty()) {
      out += rewritten;
      continue;
    }
    is_waiting_ = true;
    waiting_.assign(event);
    waiting_carry_in_ = std::move(carry_in);
    waiting_rewritten_ = std::move(rewritten);
  }
  if (ending && is_waiting_) {
    release_waiting(out, /*as_it_was=*/true);
  }
  data = std::move(out);
}

}  // namespace sluice::guardrails
