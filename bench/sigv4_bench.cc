// Google Benchmark for SigV4 request signing (aws::Signer::sign), the per-request cost a Bedrock
// call adds: a POST with a 4 KB JSON body, the signing key cache warm. With the body hashed by
// the signer, and with a precomputed hash (the signing alone), plus the cold path (all five
// HMACs), with allocations counted per signature.
#include <chrono>
#include <string>

#include <benchmark/benchmark.h>

#include "alloc_counter.h"
#include "aws/sigv4.h"

namespace {

using namespace sluice;

const std::string& body_4k() {
  static const std::string body = [] {
    std::string b = R"({"messages":[{"role":"user","content":[{"text":")";
    b.append(4096 - b.size() - 5, 'x');
    b.append(R"("}]}])");
    return b;
  }();
  return body;
}

const aws::Credentials kCredentials{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", ""};
const std::chrono::system_clock::time_point kNow{std::chrono::seconds(1440938160)};

void run(benchmark::State& state, const aws::Signer& signer, aws::Payload payload) {
  const aws::HeaderView headers[] = {{"host", "bedrock-runtime.us-east-1.amazonaws.com"},
                                     {"content-type", "application/json"},
                                     {"accept", "application/json"}};
  const aws::Request request{
      "POST", "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse", {}, headers, payload};
  if (!signer.sign(request, kCredentials, kNow)) {
    state.SkipWithError("signing failed");
    return;
  }
  const std::size_t allocs_before = bench::allocation_count();
  for (auto _ : state) {
    auto signed_request = signer.sign(request, kCredentials, kNow);
    benchmark::DoNotOptimize(signed_request);
  }
  state.counters["allocs_per_signature"] =
      benchmark::Counter(static_cast<double>(bench::allocation_count() - allocs_before) /
                         static_cast<double>(state.iterations()));
}

void BM_SignWithBodyHash(benchmark::State& state) {
  const aws::Signer signer("us-east-1", "bedrock");
  run(state, signer, aws::Payload::bytes(body_4k()));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * body_4k().size()));
}
BENCHMARK(BM_SignWithBodyHash);

void BM_SignPrecomputedHash(benchmark::State& state) {
  const aws::Signer signer("us-east-1", "bedrock");
  const std::string hash = *aws::sha256_hex(body_4k());
  run(state, signer, aws::Payload::sha256_hex(hash));
}
BENCHMARK(BM_SignPrecomputedHash);

void BM_SignPrecomputedHashNoKeyCache(benchmark::State& state) {
  aws::SignerOptions options;
  options.cache_signing_key = false;
  const aws::Signer signer("us-east-1", "bedrock", options);
  const std::string hash = *aws::sha256_hex(body_4k());
  run(state, signer, aws::Payload::sha256_hex(hash));
}
BENCHMARK(BM_SignPrecomputedHashNoKeyCache);

void BM_Sha256Of4k(benchmark::State& state) {
  for (auto _ : state) {
    auto hash = aws::sha256_hex(body_4k());
    benchmark::DoNotOptimize(hash);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * body_4k().size()));
}
BENCHMARK(BM_Sha256Of4k);

}  // namespace
