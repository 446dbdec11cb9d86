#include "guardrails/stream_guard.h"

#include <algorithm>

#include "guardrails/body.h"
#include "guardrails/sse_events.h"

namespace sluice::guardrails {

StreamGuard::StreamGuard(const Policies& policies, std::size_t hold_back,
                         std::chrono::milliseconds hold_back_time)
    : inspector_(policies), hold_back_(hold_back), hold_back_time_(hold_back_time) {}

// The model's text of one event: its data lines' JSON as append_stream_text reads it. A
// Responses stream repeats the whole text in its *.done and response.completed events: only
// its deltas count, or every find would be counted five times.
void StreamGuard::add_event(std::string_view event, Time now) {
  scratch_.clear();
  const SseEvent e = read_sse_event(event, &scratch_);
  if (!repeats_deltas(e.name) && !scratch_.empty() && scratch_ != "[DONE]") {
    append_stream_text(scratch_, text_);
  }
  held_ += event;
  events_.push_back(Held{held_.size(), base_ + text_.size(), now});
}

bool StreamGuard::pass(std::string& data, bool ending, Time now) {
  if (!take(data, ending, now)) {
    return false;
  }
  release(data, ending, now);
  return true;
}

std::string_view StreamGuard::unchecked_text(std::size_t context) const {
  const std::size_t from = checked_ > base_ + context ? checked_ - context - base_ : 0;
  return std::string_view(text_).substr(std::min(from, text_.size()));
}

bool StreamGuard::take(std::string& data, bool ending, Time now) {
  std::size_t at = 0;
  while (at < data.size()) {
    std::size_t end = sse_event_end(data, at);
    if (end == std::string_view::npos) end = data.size();  // a last event without its blank line
    add_event(std::string_view(data).substr(at, end - at), now);
    at = end;
  }
  data.clear();
  for (const Inspector::Find& f : inspector_.find(text_)) {
    // A find at the newest character may be undone by the next one ("falcon" of "falconry", a
    // card number with a seventeenth digit): it waits for more text, or the end.
    if (!ending && f.end == text_.size()) continue;
    // One that ends in text already released was judged when that text came in, with more
    // context than the window keeps (the window may have cut a digit run in two, or a word from
    // the letter before it); so was one at the window's first character.
    if (base_ + f.end <= released_ || (base_ > 0 && f.begin == 0)) continue;
    const Action action = f.action == Action::kFlag ? Action::kFlag : Action::kBlock;
    if (action == Action::kBlock) {
      inspector_.record(f, action);
      held_.clear();
      events_.clear();
      return false;
    }
    if (base_ + f.begin >= counted_) {  // a find seen growing over several writes counts once
      inspector_.record(f, action);
      counted_ = base_ + f.end;
    }
  }
  return true;
}

void StreamGuard::release(std::string& out, bool ending, Time now) {
  // Release every event whose text is hold_back characters behind the newest, or that was
  // held hold_back_time (all of them at the end); the others wait for more text. Gated, none
  // whose text is not cleared.
  const std::size_t newest = base_ + text_.size();
  const bool timed = hold_back_time_.count() > 0;
  std::size_t count = 0;
  while (count < events_.size() && (!gated_ || events_[count].text_end <= checked_) &&
         (ending || events_[count].text_end + hold_back_ <= newest ||
          (timed && now - events_[count].arrived >= hold_back_time_))) {
    ++count;
  }
  if (count > 0) {
    const std::size_t release = events_[count - 1].bytes_end;
    released_ = events_[count - 1].text_end;
    out.append(held_, 0, release);
    held_.erase(0, release);
    events_.erase(events_.begin(), events_.begin() + static_cast<std::ptrdiff_t>(count));
    for (Held& e : events_) e.bytes_end -= release;
  }
  // Keep hold_back characters of released text as context, drop the rest; gated, also the
  // text not cleared yet and as much before it (the checker's context).
  std::size_t keep_from = released_ > hold_back_ ? released_ - hold_back_ : 0;
  if (gated_) {
    keep_from = std::min(keep_from, checked_ > hold_back_ ? checked_ - hold_back_ : 0);
  }
  if (keep_from > base_) {
    text_.erase(0, keep_from - base_);
    base_ = keep_from;
  }
}

}  // namespace sluice::guardrails
