#include "guardrails/body.h"

#include <array>

#include "guardrails/json_strings.h"

namespace sluice::guardrails {
namespace {

// Members whose strings are names, ids, enums or opaque tokens, not text for the model:
// rewriting one would break the request (a tool's name, a call id), and none carries a
// prompt.
constexpr std::array<std::string_view, 24> kStructural = {"model",
                                                          "role",
                                                          "type",
                                                          "id",
                                                          "tool_call_id",
                                                          "tool_use_id",
                                                          "call_id",
                                                          "previous_response_id",
                                                          "name",
                                                          "media_type",
                                                          "mime_type",
                                                          "mimeType",
                                                          "format",
                                                          "detail",
                                                          "encoding_format",
                                                          "signature",
                                                          "encrypted_content",
                                                          "tool_choice",
                                                          "service_tier",
                                                          "reasoning_effort",
                                                          "finish_reason",
                                                          "stop_reason",
                                                          "object",
                                                          "cache_control"};

// Members that carry content the detectors cannot read: base64 data, a URL the provider fetches,
// a file already uploaded.
constexpr std::array<std::string_view, 9> kUninspected = {"data",      "url",       "image_url",
                                                          "file_data", "file_id",   "file_uri",
                                                          "fileUri",   "audio_url", "input_audio"};

bool one_of(std::string_view key, std::span<const std::string_view> set) {
  for (std::string_view s : set) {
    if (s == key) return true;
  }
  return false;
}

}  // namespace

std::optional<std::string> inspect_body(std::string_view json, Inspector& inspector) {
  return rewrite_strings(json, [&](const JsonString& s) -> std::optional<std::string> {
    if (inspector.blocked() || one_of(s.key, kStructural)) {
      return std::nullopt;
    }
    if (one_of(s.key, kUninspected)) {
      inspector.uninspected();
      return std::nullopt;
    }
    return inspector.inspect(s.text);
  });
}

}  // namespace sluice::guardrails
