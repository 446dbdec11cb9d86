#include "guardrails/body.h"

#include <array>

#include "guardrails/json_strings.h"

namespace sluice::guardrails {
namespace {

// Members whose strings are names, ids, enums or opaque tokens, not text for the model:
// rewriting one would break the request (a tool's name, a call id), and none carries a
// prompt.
constexpr std::array<std::string_view, 27> kStructural = {"model",
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
                                                          "cache_control",
                                                          "system_fingerprint",
                                                          "modelVersion",
                                                          "responseId"};

// Members that carry content the detectors cannot read: base64 data, a URL the provider fetches,
// a file already uploaded.
constexpr std::array<std::string_view, 9> kUninspected = {"data",      "url",       "image_url",
                                                          "file_data", "file_id",   "file_uri",
                                                          "fileUri",   "audio_url", "input_audio"};

// What an answer repeats of its request (a Responses answer's settings, its tools' schemas and
// descriptions): not the model's output.
constexpr std::array<std::string_view, 6> kEchoed = {
    "instructions", "tools", "metadata", "user", "prompt_cache_key", "safety_identifier"};

bool echoed(const JsonString& s) {
  for (std::string_view k : kEchoed) {
    if (s.key == k) return true;
    for (std::string_view w : s.within) {
      if (w == k) return true;
    }
  }
  return false;
}

bool one_of(std::string_view key, std::span<const std::string_view> set) {
  for (std::string_view s : set) {
    if (s == key) return true;
  }
  return false;
}

}  // namespace

std::optional<std::string> inspect_body(std::string_view json, Inspector& inspector, Side side) {
  return rewrite_strings(json, [&](const JsonString& s) -> std::optional<std::string> {
    if (inspector.blocked() || one_of(s.key, kStructural) || (side == Side::kAnswer && echoed(s))) {
      return std::nullopt;
    }
    if (one_of(s.key, kUninspected)) {
      inspector.uninspected();
      return std::nullopt;
    }
    return inspector.inspect(s.text);
  });
}

std::string body_text(std::string_view json, Side side) {
  std::string text;
  rewrite_strings(json, [&](const JsonString& s) -> std::optional<std::string> {
    if (!one_of(s.key, kStructural) && !one_of(s.key, kUninspected) && !s.text.empty() &&
        !(side == Side::kAnswer && echoed(s))) {
      if (!text.empty()) text += '\n';
      text += s.text;
    }
    return std::nullopt;
  });
  return text;
}

bool structural_member(std::string_view key) { return one_of(key, kStructural); }

bool json_text_member(std::string_view key) { return key == "arguments" || key == "partial_json"; }

std::optional<std::string> restore_body(std::string_view json, const Pseudonyms& pseudonyms) {
  if (pseudonyms.empty()) {
    return std::nullopt;
  }
  return rewrite_strings(json, [&](const JsonString& s) -> std::optional<std::string> {
    if (one_of(s.key, kStructural)) {
      return std::nullopt;
    }
    return pseudonyms.restore(s.text, json_text_member(s.key));
  });
}

bool delta_text_member(std::string_view key) {
  static constexpr std::array<std::string_view, 9> kMembers = {
      "content",  "text",    "arguments", "partial_json",     "delta",
      "thinking", "refusal", "reasoning", "reasoning_content"};
  return one_of(key, kMembers);
}

void append_stream_text(std::string_view json, std::string& out) {
  rewrite_strings(json, [&](const JsonString& s) -> std::optional<std::string> {
    const bool in_args = one_of("args", s.within);
    if (delta_text_member(s.key) || in_args) {
      out += s.text;
    }
    return std::nullopt;
  });
}

}  // namespace sluice::guardrails
