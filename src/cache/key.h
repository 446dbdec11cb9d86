#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "ir/request.h"

namespace sluice::cache {

// The identity of a cached answer: SHA-256 over the canonical request (below). Two requests
// with one key get one answer, whichever protocol and mode they arrive in.
using Key = std::array<std::uint8_t, 32>;

// For maps by key: its first bytes (SHA-256 bytes are uniform already).
struct KeyHash {
  std::size_t operator()(const Key& key) const {
    std::size_t h = 0;
    std::memcpy(&h, key.data(), sizeof h);
    return h;
  }
};

// What besides the IR request decides which answer a request may get.
struct KeyScope {
  // The route and what it routes to ("alias|provider/model|..."): the same question on another
  // route, or after the route's targets changed, is another entry.
  std::string_view route;
  // Whose answers these are: "g:<key group>", "k:<key id>", or "*" for a route that shares
  // its answers across tenants (config::CacheSettings::Scope).
  std::string_view tenant;
  // The route's vary_headers and each one's value in the request ("" when absent), in the
  // route's order.
  std::span<const std::pair<std::string_view, std::string_view>> vary;
};

// The key of `request` within `scope`. The canonical form is every IR field that can change
// the answer, each tagged and length-prefixed so that no two requests serialize alike: system,
// messages (roles, names, every part's content, tool calls and results, reasoning and its
// signatures), tools, tool choice, response format, max_tokens, temperature, top_p, top_k,
// stop sequences, reasoning settings and the caller's provider_options. Left out, because they do
// not change the answer: the model alias (the route is in the scope), `stream`, the end-user id,
// and prompt-cache breakpoints (a provider's billing hint).
Key answer_key(const ir::Request& request, const KeyScope& scope);

// The digest a request's bytes are known by in cache/key_aliases.h: its caller protocol's api
// (`api`: ingress api_name, which names the operation too), its path (a Gemini path names the
// model and the method) and its body, within `scope`. Requests with one alias decode to one IR,
// so they have one answer_key. The query is left out: it carries a Gemini caller's API key.
Key body_alias(const KeyScope& scope, std::string_view api, std::string_view path,
               std::string_view body);

// What the semantic cache compares by meaning, and what it requires to be equal.
struct SemanticQuestion {
  // The text of the request's last message: the caller's, text parts only, joined by '\n'.
  std::string text;
  // Everything else: the scope, the embeddings route (`embedder`: its alias and targets), the
  // system prompt, tools, tool choice, response format, parameters, and every earlier message
  // (cache/semantic_index.h compares only vectors of one bucket).
  Key bucket{};
};
// The question of `request`, or nullopt when it has none a semantic lookup may answer: the
// last message is not the user's, holds more than text (an image, a tool result) or only
// white space, or the conversation has more than `max_turns` user messages.
std::optional<SemanticQuestion> semantic_question(const ir::Request& request, const KeyScope& scope,
                                                  std::string_view embedder,
                                                  std::uint32_t max_turns);

// An Idempotency-Key's identity: the caller's key within its tenant and route. Two tenants
// sending the same Idempotency-Key never meet.
Key idempotency_key(std::string_view tenant, std::string_view alias, std::string_view key);
// What a request was, byte for byte (its protocol, path and body): a retry under the same
// Idempotency-Key must be the same request.
Key request_digest(std::string_view protocol, std::string_view path, std::string_view body);

// The key in 64 lower-case hex digits (logs, the admin API).
std::string to_hex(const Key& key);

}  // namespace sluice::cache
