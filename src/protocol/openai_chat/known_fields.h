#pragma once

#include <string_view>

// The fields of an OpenAI chat.completion / chat.completion.chunk the translation decoders
// (response.h, stream_decoder.h) know, per level: read, or skipped on purpose. Anything else
// counts as schema drift (protocol/drift.h). OpenAI's documented fields plus Azure's content
// filter results; other compatible servers' extensions count as drift of that provider.
namespace sluice::protocol::openai_chat::known {

inline constexpr std::string_view kRoot[] = {
    "id",
    "object",
    "created",
    "model",
    "choices",
    "usage",
    "error",
    "service_tier",
    "system_fingerprint",
    "obfuscation",            // streams: random padding
    "prompt_filter_results",  // Azure
};

inline constexpr std::string_view kChoice[] = {
    "index",
    "message",
    "delta",
    "finish_reason",
    "logprobs",
    "content_filter_results",  // Azure
};

// choices[].message and choices[].delta.
inline constexpr std::string_view kMessage[] = {
    "role",  "content",       "refusal",           "tool_calls", "annotations",
    "audio", "function_call", "reasoning_content", "reasoning",
};

inline constexpr std::string_view kToolCall[] = {"index", "id", "type", "function"};

inline constexpr std::string_view kFunction[] = {"name", "arguments"};

inline constexpr std::string_view kUsage[] = {
    "prompt_tokens",         "completion_tokens",         "total_tokens",
    "prompt_tokens_details", "completion_tokens_details",
};

}  // namespace sluice::protocol::openai_chat::known
