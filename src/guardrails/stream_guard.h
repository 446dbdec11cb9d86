#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "guardrails/policy.h"

namespace sluice::guardrails {

// Output guardrails on a stream (docs/guardrails.md#streams): SSE events on their way to the
// caller, in the caller's protocol, are held back until the model's text has moved at least
// `hold_back` characters past them, so that a match that crosses events (a card number split
// over five deltas) is seen whole before any byte of it is released. A `block` (and a
// `redact`, which a stream cannot take back: it blocks) ends the stream: nothing from the event
// the match starts in onwards is released. Flags are counted once each. One per stream.
//
// With `hold_back_time` (not zero), an event held that long goes out with the next write even
// when fewer than `hold_back` characters followed it: the caller sees text sooner, and a
// match whose start went out that way still ends the stream when it completes, but its first
// characters were sent. The guard runs on writes: text waits for the next event (or the end)
// after its time is up, never on a timer of its own.
class StreamGuard {
 public:
  using Time = std::chrono::steady_clock::time_point;

  StreamGuard(const Policies& policies, std::size_t hold_back,
              std::chrono::milliseconds hold_back_time = std::chrono::milliseconds(0));
  StreamGuard(Policies&&, std::size_t, std::chrono::milliseconds = {}) = delete;  // a reference

  // `data`: whole SSE events about to be written, at `now`; on return, the events that may go
  // out now (all of them when `ending`: the stream's last write). False when a block was found:
  // `data` is empty then, the held events are dropped, and verdict() says which policy and
  // detector. take() then release().
  bool pass(std::string& data, bool ending, Time now = {});
  // pass() in two steps, for a caller with work between them (an external checker asked about
  // unchecked_text()): take() holds the events of `data` (emptied) and judges the text
  // (false: a block, as pass()); release() puts into `out` the events that may go out now.
  bool take(std::string& data, bool ending, Time now = {});
  void release(std::string& out, bool ending, Time now = {});

  // Gated (an external checker judges the stream too): no event goes out, the last write's
  // included, before the text up to its end was cleared (cleared()).
  void gate() { gated_ = true; }
  // Characters of text not cleared yet.
  std::size_t unchecked_chars() const { return base_ + text_.size() - checked_; }
  // The text not cleared yet, after up to `context` characters before it (so a match that
  // starts in cleared text is seen whole; the window keeps that much of it).
  std::string_view unchecked_text(std::size_t context) const;
  // All text taken so far is cleared: its events may go out.
  void cleared() { checked_ = base_ + text_.size(); }
  // A checker refused the text: the held events are dropped.
  void drop() {
    held_.clear();
    events_.clear();
  }

  // When the oldest held event's hold_back_time is up (pass() releases it then, even with no
  // new bytes); nullopt without a time bound, with nothing held, or when what is held waits
  // for a checker (gated) rather than for time.
  std::optional<Time> release_due() const {
    if (hold_back_time_.count() <= 0 || events_.empty() ||
        (gated_ && events_.front().text_end > checked_)) {
      return std::nullopt;
    }
    return events_.front().arrived + hold_back_time_;
  }

  const Verdict& verdict() const { return inspector_.verdict(); }
  // Bytes held back right now (bounded by hold_back characters of text, plus events without
  // text in between).
  std::size_t held_bytes() const { return held_.size(); }

 private:
  void add_event(std::string_view event, Time now);

  Inspector inspector_;
  const std::size_t hold_back_;
  const std::chrono::milliseconds hold_back_time_;
  std::string held_;  // SSE bytes not released yet
  // Per held event: where its bytes end in held_, and where its text ends (absolute).
  struct Held {
    std::size_t bytes_end;
    std::size_t text_end;
    Time arrived;
  };
  std::vector<Held> events_;
  // The text of the held events, after up to hold_back characters already released (context
  // for a match that starts there); text_[0] is at absolute offset base_.
  std::string text_;
  std::size_t base_ = 0;
  std::size_t released_ = 0;  // absolute: the text before it went out
  std::size_t counted_ = 0;   // absolute: finds that begin before it were counted
  bool gated_ = false;
  std::size_t checked_ = 0;  // absolute: gated, the text before it was cleared
  std::string scratch_;
};

}  // namespace sluice::guardrails
