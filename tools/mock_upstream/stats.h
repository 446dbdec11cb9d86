#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mock_request.h"

namespace sluice::mock {

// Process-wide counters, shared by all worker threads. Counters are relaxed atomics (each
// is exact; a snapshot across counters is not atomic). Requests to /_mock/* are not
// counted.
class Stats {
 public:
  // Cumulative counters, zeroed by reset().
  std::atomic<std::uint64_t> requests_total{0};
  std::atomic<std::uint64_t> chat_requests{0};
  std::atomic<std::uint64_t> embedding_requests{0};
  std::atomic<std::uint64_t> model_requests{0};
  // …/messages and …/messages/count_tokens.
  std::atomic<std::uint64_t> anthropic_requests{0};
  // …/models/{model}:generateContent and :streamGenerateContent, and how each carried its
  // API key (a request may carry both, or neither).
  std::atomic<std::uint64_t> gemini_requests{0};
  std::atomic<std::uint64_t> gemini_keys_in_header{0};  // x-goog-api-key
  std::atomic<std::uint64_t> gemini_keys_in_query{0};   // ?key=
  // …/model/{modelId}/converse and …/converse-stream; those with an
  // "Authorization: AWS4-HMAC-SHA256 …" and with an "Authorization: Bearer …" header
  // (counted whether or not the mock checks them); and, when it checks them
  // (--aws-access-key-id, --aws-bearer-token), how many passed and failed.
  std::atomic<std::uint64_t> bedrock_requests{0};
  std::atomic<std::uint64_t> bedrock_requests_signed{0};
  std::atomic<std::uint64_t> bedrock_requests_bearer{0};
  std::atomic<std::uint64_t> bedrock_signatures_valid{0};
  std::atomic<std::uint64_t> bedrock_signatures_invalid{0};
  // Vertex AI (paths with /publishers/), and Google's token endpoint (--gcp-service-account).
  std::atomic<std::uint64_t> vertex_requests{0};
  std::atomic<std::uint64_t> vertex_auth_failures{0};
  std::atomic<std::uint64_t> gcp_tokens_issued{0};
  std::atomic<std::uint64_t> gcp_token_refusals{0};
  // AWS STS AssumeRoleWithWebIdentity (--aws-web-identity-token).
  std::atomic<std::uint64_t> sts_credentials_issued{0};
  std::atomic<std::uint64_t> sts_refusals{0};
  // POST …/responses and GET …/responses/{id}.
  std::atomic<std::uint64_t> responses_requests{0};
  std::atomic<std::uint64_t> streams_completed{0};
  // The peer closed before the stream finished (seen while writing or while waiting).
  std::atomic<std::uint64_t> streams_aborted{0};
  // The mock itself cut the stream (x-mock-disconnect-after).
  std::atomic<std::uint64_t> streams_disconnected{0};
  // The peer closed before a non-stream response was sent (during latency or a stall).
  std::atomic<std::uint64_t> requests_aborted{0};
  // Unrequested responses written after a reply (x-mock-trailing-response).
  std::atomic<std::uint64_t> trailing_responses_sent{0};
  std::atomic<std::uint64_t> connections_accepted{0};
  std::atomic<std::uint64_t> internal_errors{0};
  // Gauges: current values, not touched by reset().
  std::atomic<std::int64_t> active_streams{0};
  std::atomic<std::int64_t> connections_active{0};

  // Counts a request and returns its number (requests_total after counting), which the
  // response carries as x-mock-request-number.
  std::uint64_t count_request();

  // Keeps a copy of `request` (header names lower-cased, query parameters decoded, body cut
  // at kMaxRecordedBody) for last_request. Takes a mutex; test-only.
  void record_last_request(const MockRequest& request);

  // Counts one request that carried x-mock-count-key: `key` (requests_by_header). Takes a
  // mutex; test-only.
  void count_key(std::string_view key);

  // Zero-based position of this request in the x-mock-status sequence named `key`.
  std::uint64_t next_in_sequence(const std::string& key);

  // Zeroes the cumulative counters, forgets last_request, the status sequences and the
  // per-key counts.
  void reset();

  // {"requests_total":..,...,"requests_by_header":{key:n,..},
  //  "last_request":{method,target,headers,query,body}|null}
  std::string to_json() const;

  static constexpr std::size_t kMaxRecordedBody = 1024 * 1024;

 private:
  mutable std::mutex mu_;
  bool has_last_ = false;
  std::string last_method_;
  std::string last_target_;
  std::vector<std::pair<std::string, std::string>> last_headers_;
  std::vector<std::pair<std::string, std::string>> last_query_;
  std::string last_body_;
  std::map<std::string, std::uint64_t, std::less<>> sequences_;
  std::map<std::string, std::uint64_t, std::less<>> key_counts_;
};

}  // namespace sluice::mock
