#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"
#include "ir/response.h"
#include "ir/usage.h"
#include "protocol/protocol_id.h"

namespace sluice::protocol::bedrock_converse {

// Conventions of the Amazon Bedrock Converse API (Bedrock Runtime, API version 2023-09-30)
// shared by the request, response and stream codecs: usage accounting, stop reasons, tool-use
// ids, image formats. Field names and limits follow the service model AWS publishes with its
// SDKs (botocore data/bedrock-runtime/2023-09-30/service-2.json). Pure functions; no state.

// Wire format id: Converse bodies (POST /model/{modelId}/converse) and ConverseStream event
// streams (POST /model/{modelId}/converse-stream). Upstream side only: no caller speaks it.
inline constexpr ProtocolId kConverseProtocol = "bedrock_converse";

// Converse's TokenUsage. Like Anthropic's, `inputTokens` EXCLUDES the cache reads and writes:
// the recorded answers (tests/fixtures/bedrock/converse-cache-*.json) have totalTokens =
// inputTokens + cacheReadInputTokens + cacheWriteInputTokens + outputTokens.
struct WireUsage {
  std::uint64_t input_tokens = 0;
  std::uint64_t output_tokens = 0;
  std::uint64_t cache_read_input_tokens = 0;
  std::uint64_t cache_write_input_tokens = 0;
};

// Converse -> IR: input = inputTokens + cacheReadInputTokens + cacheWriteInputTokens (the IR's
// input counts every prompt token). kUpstreamProtocol on overflow. reasoning_tokens stays 0
// (Converse does not report reasoning tokens separately).
Result<ir::Usage> from_wire_usage(const WireUsage& usage);

// stopReason -> FinishReason: end_turn -> kStop, tool_use -> kToolCalls, max_tokens and
// model_context_window_exceeded -> kLength, stop_sequence -> kStopSequence,
// guardrail_intervened and content_filtered -> kContentFilter; malformed_model_output,
// malformed_tool_use and values the service model does not list -> kOther; "" -> kUnset.
ir::FinishReason finish_reason(std::string_view stop_reason);

// The toolUseId sent for an IR call id. Converse takes 1 to 64 characters of
// [a-zA-Z0-9_.:-]; such ids are kept. Others (too long, other characters) become the id with
// every other character replaced by '_', cut to 47 characters, plus "_" and a 16-hex FNV-1a
// hash of the original id: deterministic, so a toolResult names the id its toolUse was sent
// with, and two ids that differ only in replaced characters stay distinct. "" stays "".
std::string tool_use_id(std::string_view id);

// Whether `name` is a valid Converse tool name: 1 to 64 characters of [a-zA-Z0-9_-].
bool valid_tool_name(std::string_view name);

// ImageBlock.format for a media type: image/png -> png, image/jpeg -> jpeg, image/gif -> gif,
// image/webp -> webp; "" for anything else (Converse takes no other image format).
std::string_view image_format(std::string_view media_type);

// Whether `model` (a Bedrock model id, inference profile id or ARN) names an Anthropic Claude
// model: it contains "anthropic." ("anthropic.claude-...", "us.anthropic.claude-...", ARNs
// ending in either). The fields Converse passes through to the model are Claude's names then.
bool is_claude_model(std::string_view model);

// Maximum JSON nesting accepted from callers and upstreams.
inline constexpr unsigned kMaxJsonDepth = 64;

}  // namespace sluice::protocol::bedrock_converse
