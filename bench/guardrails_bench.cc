// The input guardrails' cost on the request path (guardrails/body.h): a caller's chat body
// walked for its text and scanned by every built-in PII and secret detector, on the worker
// thread. Arguments: body size in bytes, and whether the text holds findings to redact (a
// few e-mail addresses and a card per KiB) or none (the common case: nothing rewritten). The
// measure to read is time per request; issue 19's goal is <= 20 us for a 4 KB prompt.
//
//   BM_InspectBody/<bytes>/<with findings>

#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "guardrails/body.h"
#include "guardrails/policy.h"

namespace {

namespace g = sluice::guardrails;

g::Policies builtin_sets() {
  sluice::config::GuardrailPolicy p;
  p.name = "bench";
  for (const char* set : {"pii", "secrets"}) {
    sluice::config::GuardrailDetector d;
    d.name = set;
    d.action = sluice::config::GuardrailAction::kRedact;
    p.detectors.push_back(d);
  }
  return g::Policies{*g::Policy::compile(p)};
}

// Prose with the digits, dots, colons and at-signs real prompts have (times, versions, prices),
// so the scanners' candidate checks run, not only their fast skips.
std::string body_of(std::size_t bytes, bool findings) {
  const std::string prose =
      "At 10:30 the team reviewed release 2.4.1 of the billing service; invoice INV-2024-0042 "
      "totalled 1,299.00 EUR and order 4111111111111112 shipped. Please summarise the thread "
      "and list the open questions for the next meeting. ";
  const std::string pii = "Reach Jane at jane.roe@example.org or card 4111 1111 1111 1111. ";
  std::string text;
  while (text.size() < bytes) {
    text += prose;
    if (findings && text.size() % 1024 < prose.size()) text += pii;
  }
  text.resize(bytes);
  return R"({"model":"gpt-4o-mini","messages":[{"role":"system","content":"You are helpful."},)"
         R"({"role":"user","content":")" +
         text + R"("}]})";
}

void BM_InspectBody(benchmark::State& state) {
  const g::Policies policies = builtin_sets();
  const std::string body = body_of(static_cast<std::size_t>(state.range(0)), state.range(1) != 0);
  for (auto _ : state) {
    g::Inspector inspector(policies);
    benchmark::DoNotOptimize(g::inspect_body(body, inspector));
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * body.size()));
}

// One built-in detector over the 4 KB prompt's text without findings: where the time goes.
void BM_Detector(benchmark::State& state) {
  const std::string_view name =
      g::builtin_detector_names()[static_cast<std::size_t>(state.range(0))];
  const std::unique_ptr<g::Detector> detector = g::builtin_detector(name);
  const std::string text = body_of(4096, false);
  std::vector<g::Span> spans;
  for (auto _ : state) {
    spans.clear();
    detector->scan(text, 0, spans);
    benchmark::DoNotOptimize(spans.data());
  }
  state.SetLabel(std::string(name));
}
BENCHMARK(BM_Detector)->DenseRange(0, 15)->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_InspectBody)
    ->Args({4096, 0})
    ->Args({4096, 1})
    ->Args({102400, 0})
    ->Args({102400, 1})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
