#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/openai_chat/envelope.h"

namespace sluice::providers {

// The built-in `mock` provider: deterministic OpenAI-shaped answers computed in process,
// so Sluice works offline and tests need no network. Replies depend only on the request.
// Always a success: the mock has no failure modes of its own (the server answers 200 with
// application/json, or a text/event-stream of `events`).
struct MockReply {
  std::string body;                 // non-stream responses
  std::vector<std::string> events;  // stream responses: framed SSE blocks, [DONE] included
};

// A chat.completion (or chunk stream when request.stream) echoing the last user message.
// Streams always include the usage-only chunk, as if stream_options.include_usage were set.
MockReply mock_chat(const protocol::openai_chat::ChatRequest& request, std::string_view model);

// Deterministic unit vectors derived from each input's hash.
MockReply mock_embeddings(const protocol::openai_chat::ChatRequest& request, std::string_view model,
                          std::uint32_t default_dimensions);

}  // namespace sluice::providers
