#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "guardrails/policy.h"
#include "guardrails/pseudonyms.h"

namespace sluice::guardrails {

// Which body a walk reads: a caller's request, or an answer on its way back (whose echoes of
// the request, a Responses answer's `instructions` and `input`, are not the model's output).
enum class Side : std::uint8_t { kRequest, kAnswer };

// Inspects a request or answer body (any protocol, passthrough or translated: the JSON as it is
// on the wire) for the text a model reads or wrote: every string value except the members that
// name or structure things (model, role, type, ids, tool and function names, media types,
// signatures). Images, audio and files (base64 data, data: and http URLs, file ids) are not
// read: each is reported to the inspector as uninspected. Returns the body with the
// inspector's redactions, every other byte as it was, or nullopt when it stays as it is (or a
// block was found).
std::optional<std::string> inspect_body(std::string_view json, Inspector& inspector,
                                        Side side = Side::kRequest);

// The text of a request or answer body that inspect_body reads, its strings joined by
// newlines: what an external checker is asked about.
std::string body_text(std::string_view json, Side side = Side::kRequest);

// Appends the model's new text in one stream event's JSON (any protocol) to `out`, without
// separators, so that text a model wrote over several events reads as one: the strings of the
// members deltas carry it in (delta_text_member) and of a Gemini function call's `args`. Not
// ids, types or anything else an event carries between two deltas (a Responses `item_id`, an
// `obfuscation` pad), which would cut a match in two.
void append_stream_text(std::string_view json, std::string& out);

// The members a stream's deltas carry the model's text in, across the protocols: Chat's
// `content`, `refusal`, `reasoning_content` and tool calls' `arguments`; Anthropic's `text`,
// `thinking` and `partial_json`; Gemini's parts' `text`; Responses' `delta`.
bool delta_text_member(std::string_view key);

// An answer body (or one stream event's JSON) with the request's pseudonyms put back in every
// string but the structural ones (names, ids, types): the model's text, its tool calls'
// arguments (escaped as the JSON text they are), and echoes of the request. Nullopt when no
// placeholder occurs.
std::optional<std::string> restore_body(std::string_view json, const Pseudonyms& pseudonyms);

// Whether a member's strings are structural (ids, names, types: never inspected or restored).
bool structural_member(std::string_view key);
// Whether a member's string is JSON text itself: a tool call's arguments, whole or a fragment.
bool json_text_member(std::string_view key);

}  // namespace sluice::guardrails
