#pragma once

#include <string>
#include <string_view>

// Chat Completions stream events for the stream filters' tests: one content delta per event, and
// the text of every content delta of a stream, in order. The texts hold no quotes or escapes.
namespace sluice::guardrails::testing {

inline std::string chat_delta(std::string_view text) {
  return R"(data: {"choices":[{"index":0,"delta":{"content":")" + std::string(text) + "\"}}]}\n\n";
}

inline std::string content_of(std::string_view sse) {
  std::string text;
  constexpr std::string_view kMarker = "\"content\":\"";
  std::size_t at = 0;
  while ((at = sse.find(kMarker, at)) != std::string_view::npos) {
    at += kMarker.size();
    const std::size_t end = sse.find('"', at);
    text.append(sse.substr(at, end - at));
    at = end;
  }
  return text;
}

}  // namespace sluice::guardrails::testing
