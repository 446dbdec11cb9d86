#include "pipeline/filters/semantic_lookup.h"

#include <boost/asio/this_coro.hpp>
#include <boost/json/monotonic_resource.hpp>

#include "cache/vector_record.h"
#include "codec/json_read.h"
#include "codec/json_writer.h"
#include "pipeline/call_context.h"
#include "pipeline/internal_call.h"
#include "spdlog/spdlog.h"

namespace sluice::pipeline {

namespace {

// An embedding's answer: one vector of a few thousand floats, a few tens of KiB as JSON.
constexpr std::uint64_t kMaxEmbeddingAnswerBytes = 1024 * 1024;

}  // namespace

SemanticLookup::SemanticLookup(config::SemanticSettings settings, cache::SemanticIndex& index,
                               cache::SkipBreaker& breaker, std::string embedder_scope)
    : settings_(std::move(settings)),
      index_(index),
      breaker_(breaker),
      embedder_scope_(std::move(embedder_scope)) {}

std::optional<cache::SemanticQuestion> SemanticLookup::question(
    const ir::Request& request, const cache::KeyScope& scope) const {
  std::optional<cache::SemanticQuestion> question =
      cache::semantic_question(request, scope, embedder_scope_, settings_.max_turns);
  if (question && question->text.size() > settings_.max_text_bytes) {
    return std::nullopt;
  }
  return question;
}

Awaitable<std::optional<SemanticLookup::Probe>> SemanticLookup::embed(
    CallContext& call, const cache::SemanticQuestion& question) {
  if (!breaker_.allow(call.clock().now())) {
    co_return std::nullopt;
  }
  InternalRequest embedding;
  embedding.purpose = "embedding";
  embedding.target = "/v1/embeddings";
  embedding.headers.emplace_back("content-type", "application/json");
  embedding.max_answer_bytes = kMaxEmbeddingAnswerBytes;
  codec::JsonWriter body(embedding.body);
  body.ch('{').key("model").string(settings_.embeddings);
  body.ch(',').key("input").string(question.text);
  if (settings_.dimensions != 0) {
    body.ch(',').key("dimensions").number(std::uint64_t{settings_.dimensions});
  }
  body.ch('}');
  std::shared_ptr<InternalCall> internal = InternalCall::start(
      call.pipeline(), call.ctx(), std::move(embedding), co_await boost::asio::this_coro::executor);
  if (internal == nullptr) {
    breaker_.abandon();
    co_return std::nullopt;  // the worker runs as many internal calls as it may: not a failure
  }
  std::optional<InternalAnswer> answer = co_await internal->answer_within(settings_.timeout);
  if (!answer) {
    failed(call, "timed out");
    co_return std::nullopt;
  }
  if (answer->status >= 400 && answer->status < 500) {
    // The caller's own limits or budget refused it (429, 402, 403): the caller's business,
    // not a sign the route is unwell.
    breaker_.abandon();
    co_return std::nullopt;
  }
  if (answer->status != 200 || !answer->complete) {
    failed(call, "answered " + std::to_string(answer->status));
    co_return std::nullopt;
  }
  std::optional<std::vector<float>> unit = read_embedding(answer->body);
  if (!unit) {
    failed(call, "answered no usable embedding");
    co_return std::nullopt;
  }
  if (breaker_.success()) {
    spdlog::info("semantic cache: embeddings route '{}' answers again", settings_.embeddings);
  }
  co_return Probe{question.bucket, std::move(*unit)};
}

void SemanticLookup::failed(CallContext& call, std::string_view why) {
  if (breaker_.failure(call.clock().now())) {
    spdlog::warn("semantic cache: embeddings route '{}' {}; skipped for 30 s", settings_.embeddings,
                 why);
  }
}

std::optional<cache::SemanticIndex::Match> SemanticLookup::nearest(const Probe& probe) const {
  return index_.nearest(probe.bucket, probe.unit, static_cast<float>(settings_.threshold));
}

Awaitable<void> SemanticLookup::catch_up(cache::SharedStore& shared, std::string_view alias,
                                         std::string_view tenant, const Probe& probe) {
  const cache::LogPosition from = index_.read_to(probe.bucket);
  std::optional<cache::SharedStore::VectorLog> log = co_await shared.vectors_after(
      alias, tenant, probe.bucket, from, cache::SemanticIndex::kMaxBucketVectors);
  if (!log) {
    co_return;
  }
  for (const std::string& record : log->records) {
    if (std::optional<cache::VectorRecord> read = cache::decode_vector_record(record)) {
      index_.insert(probe.bucket, read->answer, std::move(read->unit));
    }
  }
  index_.set_read_to(probe.bucket, log->last);
}

void SemanticLookup::share(cache::SharedStore& shared, std::string_view alias,
                           std::string_view tenant, const Probe& probe, const cache::Key& answer,
                           std::chrono::milliseconds ttl) {
  shared.append_vector(alias, tenant, probe.bucket, cache::encode_vector_record(answer, probe.unit),
                       ttl);
}

void SemanticLookup::remember(Probe probe, const cache::Key& answer) {
  index_.insert(probe.bucket, answer, std::move(probe.unit));
}

void SemanticLookup::forget(const Probe& probe, const cache::Key& answer) {
  index_.erase(probe.bucket, answer);
}

std::optional<std::vector<float>> SemanticLookup::read_embedding(std::string_view body) {
  boost::json::monotonic_resource arena;
  boost::system::error_code ec;
  const boost::json::value doc = codec::parse_json(body, ec, &arena);
  if (ec || !doc.is_object()) {
    return std::nullopt;
  }
  const boost::json::value* data = doc.get_object().if_contains("data");
  if (data == nullptr || !data->is_array() || data->get_array().empty() ||
      !data->get_array().front().is_object()) {
    return std::nullopt;
  }
  const boost::json::value* embedding =
      data->get_array().front().get_object().if_contains("embedding");
  if (embedding == nullptr || !embedding->is_array()) {
    return std::nullopt;  // base64 (encoding_format) is never asked for
  }
  std::vector<float> unit;
  unit.reserve(embedding->get_array().size());
  for (const boost::json::value& x : embedding->get_array()) {
    std::optional<double> number = codec::as_number(x);
    if (!number) {
      return std::nullopt;
    }
    unit.push_back(static_cast<float>(*number));
  }
  if (!cache::SemanticIndex::normalize(unit)) {
    return std::nullopt;
  }
  return unit;
}

}  // namespace sluice::pipeline
