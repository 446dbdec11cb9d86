#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "guardrails/pseudonyms.h"

namespace sluice::guardrails {

// Puts a request's pseudonyms back in its streamed answer (docs/guardrails.md#pseudonymise):
// SSE events in the caller's protocol, on their way out. A placeholder the model wrote over
// several deltas ("[EMA" then "IL_1]") is put back whole: an event whose delta text ends in the
// beginning of a placeholder waits, its tail moves to the next delta of the same member, and
// the restored value goes out with that one. If the next event is not such a delta (the block
// ended, the stream ended), the waiting event goes out as it was. At most one event waits.
// One per stream.
class StreamRestorer {
 public:
  explicit StreamRestorer(const Pseudonyms& pseudonyms) : pseudonyms_(pseudonyms) {}
  explicit StreamRestorer(Pseudonyms&&) = delete;  // it keeps a reference

  // `data`: whole SSE events about to be written; on return, what goes out now (everything
  // when `ending`).
  void pass(std::string& data, bool ending);

 private:
  // `event` with its placeholders put back. Its delta text starts with `carry` (taken), and
  // when `cut`, a last delta's unfinished placeholder is cut off into `carry` (and
  // `carry_member` names its member).
  std::string rewrite(std::string_view event, std::string& carry, bool cut);
  // The member of the event's first delta text, or "" when it has none.
  std::string first_delta_member(std::string_view event) const;
  void release_waiting(std::string& out, bool as_it_was);

  const Pseudonyms& pseudonyms_;
  std::string carry_;         // the unfinished placeholder cut from the waiting event
  std::string carry_member_;  // its member ("content", "arguments", ...)
  // The waiting event: as it came, the carry it began with, and rewritten with its tail cut.
  std::string waiting_;
  std::string waiting_carry_in_;
  std::string waiting_rewritten_;
  std::string queued_;  // pings that came after it
  bool is_waiting_ = false;
};

}  // namespace sluice::guardrails
