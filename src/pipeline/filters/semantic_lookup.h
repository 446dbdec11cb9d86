#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cache/key.h"
#include "cache/semantic_index.h"
#include "cache/shared_store.h"
#include "config/cache.h"
#include "pipeline/filter.h"

namespace sluice::pipeline {

class CallContext;

// The semantic half of a route's cache (docs/cache.md#semantic-cache), used by CacheFilter
// after an exact miss. The caller's question (the last message's text, cache/key.h
// semantic_question) is embedded through the configured embeddings route as an internal call
// (pipeline/internal_call.h: routed, metered and limited like the caller's own), and the
// nearest question already answered in the same bucket (tenant, route, system prompt, tools,
// parameters, earlier turns) answers it when the two are at least `threshold` alike.
//
// Never in the way: a request without such a question, a route whose breaker is open, an
// embedding slower than `timeout` (then cancelled) or failing, all go on as an ordinary miss.
// Three failures in a row open the breaker for 30 s (one log line when it opens, one when it
// closes). One instance per chain; the index and breaker are the process's.
class SemanticLookup {
 public:
  SemanticLookup(config::SemanticSettings settings, cache::SemanticIndex& index,
                 cache::SkipBreaker& breaker, std::string embedder_scope);

  // A question embedded: its bucket and unit vector.
  struct Probe {
    cache::Key bucket{};
    std::vector<float> unit;
  };
  // The question of `request` a lookup may answer, if it has one (cache/key.h).
  std::optional<cache::SemanticQuestion> question(const ir::Request& request,
                                                  const cache::KeyScope& scope) const;
  // `question` embedded, or nullopt when the embedding failed, took too long, or the route's
  // breaker is open.
  Awaitable<std::optional<Probe>> embed(CallContext& call, const cache::SemanticQuestion& question);
  std::optional<cache::SemanticIndex::Match> nearest(const Probe& probe) const;
  // The vectors of the probe's bucket that other instances added since this index last read
  // the shared log (cache/shared_store.h), into the index. Bounded by the store's timeout; a
  // store that does not answer leaves the index as it was.
  Awaitable<void> catch_up(cache::SharedStore& shared, std::string_view alias,
                           std::string_view tenant, const Probe& probe);
  // The answer stored under `answer` is the one to this question.
  void remember(Probe probe, const cache::Key& answer);
  // ... on every instance: the vector goes to the shared log too, for `ttl` (its answer's).
  void share(cache::SharedStore& shared, std::string_view alias, std::string_view tenant,
             const Probe& probe, const cache::Key& answer, std::chrono::milliseconds ttl);
  // `answer` is gone from the answer store: its vector goes too.
  void forget(const Probe& probe, const cache::Key& answer);

 private:
  // The embedding in the answer body (OpenAI's embeddings shape), scaled to unit length.
  static std::optional<std::vector<float>> read_embedding(std::string_view body);
  void failed(CallContext& call, std::string_view why);

  const config::SemanticSettings settings_;
  cache::SemanticIndex& index_;
  cache::SkipBreaker& breaker_;
  // The embeddings route's alias and targets (cache/key.h KeyScope::route's form): another
  // embedding model's vectors are in another bucket.
  const std::string embedder_scope_;
};

}  // namespace sluice::pipeline
