#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <boost/json/value.hpp>

#include "core/result.h"
#include "ir/response.h"
#include "ir/usage.h"
#include "protocol/protocol_id.h"

namespace sluice::protocol::anthropic {

// Conventions of the Anthropic Messages API shared by the request, response and stream codecs:
// usage accounting, id shapes, stop reasons. Pure functions; no state.

// Wire format ids: Messages bodies and streams (POST /v1/messages), and token counting
// (POST /v1/messages/count_tokens), which only an Anthropic upstream answers.
inline constexpr ProtocolId kMessagesProtocol = "anthropic_messages";
inline constexpr ProtocolId kCountTokensProtocol = "anthropic_count_tokens";

// Anthropic's `usage` object. Unlike the IR (OpenAI semantics), `input_tokens` EXCLUDES the
// cache reads and writes: total prompt = input + cache_creation + cache_read.
struct WireUsage {
  std::uint64_t input_tokens = 0;
  std::uint64_t cache_creation_input_tokens = 0;
  std::uint64_t cache_read_input_tokens = 0;
  std::uint64_t output_tokens = 0;
};

// IR -> Anthropic: input = ir.input - cache_read - cache_write. When the IR's input is smaller
// than its cache parts the numbers are inconsistent and no correct Anthropic usage exists: the
// result is an ErrorKind::kUpstreamProtocol error ("usage cannot be converted: ..."), never a
// clamped or wrapped number.
Result<WireUsage> to_wire_usage(const ir::Usage& usage);

// The same conversion for an answer that is already paid for and must reach the caller: when
// the IR's input is smaller than its cache parts, input_tokens becomes 0 (cache counts as
// reported) and `clamped` is set so metering can count the anomaly. The exact figures stay in
// the IR, which is what metering records.
WireUsage to_wire_usage_clamped(const ir::Usage& usage, bool& clamped);

// Anthropic -> IR: input = input + cache_creation + cache_read. kUpstreamProtocol on overflow.
// reasoning_tokens stays 0 (Anthropic does not report thinking tokens separately).
Result<ir::Usage> from_wire_usage(const WireUsage& usage);

// Appends {"input_tokens":..,"cache_creation_input_tokens":..,"cache_read_input_tokens":..,
// "output_tokens":..} (the key order of the live API).
void append_usage_json(std::string& out, const WireUsage& usage);

// Deterministic tool-call id mapping: the same input always gives the same output, so the
// tool_result a client sends back matches the tool_use it received. Ids already shaped like
// Anthropic's (prefix "toolu_", characters [A-Za-z0-9_-]) are kept. Others get the prefix;
// characters outside [A-Za-z0-9_-] become '_' and, because that replacement could make two ids
// collide, such ids also get a "_" + 16-hex FNV-1a hash of the original id appended.
// An empty id maps to "" (the caller must supply a fallback, see tool_use_id_or).
std::string tool_use_id(std::string_view id);
// tool_use_id(id), or for an empty id tool_use_id(fallback_seed) — callers pass something
// stable per call, e.g. "<message id>_<tool index>".
std::string tool_use_id_or(std::string_view id, std::string_view fallback_seed);

// Message ids: ids not starting with "msg_" get that prefix.
std::string message_id(std::string_view id);

// FinishReason -> stop_reason. kStop, kUnset and kOther -> "end_turn" (Anthropic has no
// "unknown" reason and clients treat end_turn as the neutral end); kContentFilter -> "refusal".
std::string_view stop_reason(ir::FinishReason finish);
// stop_reason -> FinishReason. Unknown non-empty values (new API reasons) -> kOther;
// "model_context_window_exceeded" -> kLength.
ir::FinishReason finish_reason(std::string_view stop_reason);

// Appends `value` as compact JSON text (no whitespace). Doubles use the shortest form that
// round-trips (std::to_chars), so 1.0 becomes 1; everything else is reproduced exactly.
void append_compact_json(std::string& out, const boost::json::value& value);

// Maximum JSON nesting accepted from callers and upstreams.
inline constexpr unsigned kMaxJsonDepth = 64;

}  // namespace sluice::protocol::anthropic
