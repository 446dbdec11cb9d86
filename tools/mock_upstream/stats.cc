#include "stats.h"

#include <algorithm>

#include <boost/json.hpp>

namespace sluice::mock {
namespace {

// {name: value, ...}; the values of a repeated name are joined with ", ".
boost::json::object joined_object(const std::vector<std::pair<std::string, std::string>>& pairs) {
  boost::json::object out;
  for (const auto& [name, value] : pairs) {
    if (auto* existing = out.if_contains(name)) {
      std::string joined(existing->get_string());
      joined += ", ";
      joined += value;
      *existing = joined;
    } else {
      out[name] = value;
    }
  }
  return out;
}

}  // namespace

std::uint64_t Stats::count_request() {
  return requests_total.fetch_add(1, std::memory_order_relaxed) + 1;
}

void Stats::record_last_request(const MockRequest& request) {
  std::lock_guard lock(mu_);
  has_last_ = true;
  last_method_.assign(request.method);
  last_target_.assign(request.target);
  last_headers_.resize(request.headers.size());
  for (std::size_t i = 0; i < request.headers.size(); ++i) {
    assign_lower(last_headers_[i].first, request.headers[i].first);
    last_headers_[i].second.assign(request.headers[i].second);
  }
  last_query_ = query_params(request.target);
  std::size_t cut = std::min(request.body.size(), kMaxRecordedBody);
  // Back off to a UTF-8 boundary so the stats JSON stays valid UTF-8.
  while (cut < request.body.size() && cut > 0 &&
         (static_cast<unsigned char>(request.body[cut]) & 0xC0) == 0x80) {
    --cut;
  }
  last_body_.assign(request.body.substr(0, cut));
}

std::uint64_t Stats::next_in_sequence(const std::string& key) {
  std::lock_guard lock(mu_);
  return sequences_[key]++;
}

void Stats::count_key(std::string_view key) {
  std::lock_guard lock(mu_);
  auto it = key_counts_.find(key);
  if (it == key_counts_.end()) {
    it = key_counts_.emplace(std::string(key), 0).first;
  }
  ++it->second;
}

void Stats::reset() {
  for (auto* c : {&requests_total,
                  &chat_requests,
                  &embedding_requests,
                  &model_requests,
                  &anthropic_requests,
                  &gemini_requests,
                  &gemini_keys_in_header,
                  &gemini_keys_in_query,
                  &bedrock_requests,
                  &bedrock_requests_signed,
                  &bedrock_requests_bearer,
                  &bedrock_signatures_valid,
                  &bedrock_signatures_invalid,
                  &vertex_requests,
                  &vertex_auth_failures,
                  &gcp_tokens_issued,
                  &gcp_token_refusals,
                  &sts_credentials_issued,
                  &sts_refusals,
                  &responses_requests,
                  &streams_completed,
                  &streams_aborted,
                  &streams_disconnected,
                  &requests_aborted,
                  &trailing_responses_sent,
                  &connections_accepted,
                  &internal_errors}) {
    c->store(0, std::memory_order_relaxed);
  }
  std::lock_guard lock(mu_);
  has_last_ = false;
  last_method_.clear();
  last_target_.clear();
  last_headers_.clear();
  last_query_.clear();
  last_body_.clear();
  sequences_.clear();
  key_counts_.clear();
}

std::string Stats::to_json() const {
  namespace json = boost::json;
  json::object o;
  auto load = [](const auto& a) { return a.load(std::memory_order_relaxed); };
  o["requests_total"] = load(requests_total);
  o["chat_requests"] = load(chat_requests);
  o["embedding_requests"] = load(embedding_requests);
  o["model_requests"] = load(model_requests);
  o["anthropic_requests"] = load(anthropic_requests);
  o["gemini_requests"] = load(gemini_requests);
  o["gemini_keys_in_header"] = load(gemini_keys_in_header);
  o["gemini_keys_in_query"] = load(gemini_keys_in_query);
  o["bedrock_requests"] = load(bedrock_requests);
  o["bedrock_requests_signed"] = load(bedrock_requests_signed);
  o["bedrock_requests_bearer"] = load(bedrock_requests_bearer);
  o["bedrock_signatures_valid"] = load(bedrock_signatures_valid);
  o["bedrock_signatures_invalid"] = load(bedrock_signatures_invalid);
  o["vertex_requests"] = load(vertex_requests);
  o["vertex_auth_failures"] = load(vertex_auth_failures);
  o["gcp_tokens_issued"] = load(gcp_tokens_issued);
  o["gcp_token_refusals"] = load(gcp_token_refusals);
  o["sts_credentials_issued"] = load(sts_credentials_issued);
  o["sts_refusals"] = load(sts_refusals);
  o["responses_requests"] = load(responses_requests);
  o["active_streams"] = load(active_streams);
  o["streams_completed"] = load(streams_completed);
  o["streams_aborted"] = load(streams_aborted);
  o["streams_disconnected"] = load(streams_disconnected);
  o["requests_aborted"] = load(requests_aborted);
  o["trailing_responses_sent"] = load(trailing_responses_sent);
  o["connections_accepted"] = load(connections_accepted);
  o["connections_active"] = load(connections_active);
  o["internal_errors"] = load(internal_errors);
  std::lock_guard lock(mu_);
  json::object by_key;
  for (const auto& [key, n] : key_counts_) {
    by_key[key] = n;
  }
  o["requests_by_header"] = std::move(by_key);
  if (has_last_) {
    json::object last;
    last["method"] = last_method_;
    last["target"] = last_target_;
    last["headers"] = joined_object(last_headers_);
    last["query"] = joined_object(last_query_);
    last["body"] = last_body_;
    o["last_request"] = std::move(last);
  } else {
    o["last_request"] = nullptr;
  }
  return json::serialize(o);
}

}  // namespace sluice::mock
