#include "pipeline/filters/guardrail_checks.h"

#include <algorithm>
#include <string>

#include "codec/http_head.h"
#include "guardrails/body.h"
#include "pipeline/call_context.h"
#include "pipeline/pipeline.h"
#include "pipeline/snapshot.h"
#include "pipeline/upstream_connector.h"
#include "spdlog/spdlog.h"

namespace sluice::pipeline {
namespace {

constexpr std::size_t kMaxAnswerBytes = 256 * 1024;

const ProviderRuntime* provider_named(const Snapshot& snapshot, std::string_view id) {
  for (const auto& p : snapshot.providers()) {
    if (p->config->id == id) return p.get();
  }
  return nullptr;
}

bool at_stage(const guardrails::Policy::External& e, GuardrailChecks::Stage stage) {
  switch (stage) {
    case GuardrailChecks::Stage::kBeforeSend:
      return !e.checker.parallel;
    case GuardrailChecks::Stage::kBesideUpstream:
      return e.checker.parallel;
    case GuardrailChecks::Stage::kAnswer:
      return true;
  }
  return false;
}

// Into the request's finds; the same find again (a streamed answer's next window) adds to
// the count instead of repeating itself.
void add_find(RequestContext& ctx, const GuardrailFind& find) {
  for (GuardrailFind& f : ctx.guardrails) {
    if (f.policy == find.policy && f.detector == find.detector && f.action == find.action &&
        f.output == find.output) {
      f.count += find.count;
      return;
    }
  }
  ctx.guardrails.push_back(find);
}

}  // namespace

GuardrailChecks::GuardrailChecks(const Snapshot& snapshot, const RouteRuntime& route) {
  // Every checker of every policy the route may apply (a policy of both sides, or of the route
  // and a key group, is met more than once: one checker each), and the stages they run at.
  std::vector<const guardrails::Policy::External*> externals;
  for (const bool input : {true, false}) {
    for (const guardrails::Policies* set : route.guardrail_sets(input)) {
      for (const auto& policy : *set) {
        for (const guardrails::Policy::External& e : policy->externals()) {
          if (std::find(externals.begin(), externals.end(), &e) == externals.end()) {
            externals.push_back(&e);
          }
          const Stage stage = !input               ? Stage::kAnswer
                              : e.checker.parallel ? Stage::kBesideUpstream
                                                   : Stage::kBeforeSend;
          stages_[static_cast<std::size_t>(stage)] = true;
          if (stage == Stage::kAnswer) {
            stream_window_ = stream_window_ == 0
                                 ? e.checker.stream_window_chars
                                 : std::min(stream_window_, e.checker.stream_window_chars);
          }
        }
      }
    }
  }
  for (const guardrails::Policy::External* e : externals) {
    auto checker = std::make_unique<Checker>();
    checker->external = e;
    checker->provider = provider_named(snapshot, e->checker.provider);  // the snapshot checked it
    if (checker->provider != nullptr) {
      if (auto url = providers::parse_base_url(checker->provider->config->base_url)) {
        checker->url = std::move(*url);
      }
    }
    checkers_.push_back(std::move(checker));
  }
}

Awaitable<std::optional<guardrails::CheckerVerdict>> GuardrailChecks::ask(
    CallContext& call, Checker& checker, std::string_view text, guardrails::Direction direction) {
  const guardrails::Policy::External& e = *checker.external;
  UpstreamConnector* connector = call.pipeline().connector();
  if (checker.provider == nullptr || connector == nullptr ||
      !checker.breaker.allow(call.clock().now())) {
    co_return std::nullopt;
  }
  FramedRequest request;
  request.provider = checker.provider;
  request.body = guardrails::checker_request(e.checker, text, direction);
  codec::HeadWriter head(request.head);
  head.request_line("POST", checker.url.path_prefix, e.checker.path)
      .field("Host", checker.url.host_header)
      .field("User-Agent", "sluice")
      .field("Content-Type", "application/json")
      .field("Accept", "application/json")
      .field("x-request-id", call.ctx().request_id);
  // The checker's own credential, from its provider entry; never the caller's.
  if (const std::string& key = checker.provider->config->api_key; !key.empty()) {
    head.field("Authorization", "Bearer " + key);
  }
  head.field("Content-Length", static_cast<std::uint64_t>(request.body.size()));
  head.end();
  const config::Millis timeout = e.checker.timeout;
  request.timeouts.connect = std::min(timeout, checker.provider->config->timeout.connect);
  request.timeouts.first_byte = timeout;
  request.timeouts.idle = timeout;
  request.timeouts.total = timeout;
  providers::Cancellation cancel;
  std::string why;
  std::optional<guardrails::CheckerVerdict> verdict;
  auto exchange = co_await connector->open(request, cancel);
  if (!exchange) {
    why = exchange.error().message();
  } else {
    const int status = (*exchange)->status();
    auto body = co_await (*exchange)->read_all(kMaxAnswerBytes);
    if (status < 200 || status > 299) {
      why = "answered " + std::to_string(status);
    } else if (!body) {
      why = body.error().message();
    } else {
      verdict = guardrails::read_checker_answer(e.checker, *body);
      if (verdict->kind == guardrails::CheckerVerdict::Kind::kUnusable) {
        why = "answered something that is not a verdict";
        verdict.reset();
      }
    }
  }
  if (!verdict) {
    if (checker.breaker.failure(call.clock().now())) {
      spdlog::warn("guardrails: checker '{}' (provider {}) {}; skipped for 30 s", e.name,
                   e.checker.provider, why);
    }
    co_return std::nullopt;
  }
  if (checker.breaker.success()) {
    spdlog::info("guardrails: checker '{}' answers again", e.name);
  }
  co_return verdict;
}

Awaitable<std::optional<Error>> GuardrailChecks::run(CallContext& call,
                                                     const guardrails::Policies& policies,
                                                     Stage stage, std::string_view body) {
  const bool asked = std::any_of(policies.begin(), policies.end(), [&](const auto& policy) {
    return std::any_of(policy->externals().begin(), policy->externals().end(),
                       [&](const guardrails::Policy::External& e) { return at_stage(e, stage); });
  });
  if (!asked) {
    co_return std::nullopt;
  }
  const bool answer = stage == Stage::kAnswer;
  const std::string text =
      guardrails::body_text(body, answer ? guardrails::Side::kAnswer : guardrails::Side::kRequest);
  if (answer && text.empty()) {
    co_return std::nullopt;  // no text: a tool call's name only
  }
  co_return co_await run_on_text(call, policies, stage, text);
}

Awaitable<std::optional<Error>> GuardrailChecks::run_on_text(CallContext& call,
                                                             const guardrails::Policies& policies,
                                                             Stage stage, std::string_view text) {
  const bool answer = stage == Stage::kAnswer;
  const std::string_view what = answer ? "answer" : "request";
  // What a checker that did not answer leaves the caller without.
  const std::string_view withheld = stage == Stage::kBeforeSend ? "so it was not sent"
                                    : answer                    ? "so it was withheld"
                                                                : "so its answer was withheld";
  for (const auto& policy : policies) {
    for (const guardrails::Policy::External& e : policy->externals()) {
      if (!at_stage(e, stage)) continue;
      auto it = std::find_if(checkers_.begin(), checkers_.end(),
                             [&](const auto& c) { return c->external == &e; });
      if (it == checkers_.end()) continue;
      const std::optional<guardrails::CheckerVerdict> verdict =
          co_await ask(call, **it, text,
                       answer ? guardrails::Direction::kOutput : guardrails::Direction::kInput);
      RequestContext& ctx = call.ctx();
      if (!verdict) {
        if (e.checker.fail_open) {
          add_find(ctx, GuardrailFind{policy->name(), e.name, "unchecked", answer, 1});
          continue;
        }
        add_find(ctx, GuardrailFind{policy->name(), e.name, "unavailable", answer, 1});
        co_return Error(ErrorKind::kUnavailable, 503,
                        "The " + std::string(what) +
                            " could not be checked by guardrail policy \"" + policy->name() +
                            "\" (its checker \"" + e.name + "\" did not answer), " +
                            std::string(withheld) + ".")
            .with_code("guardrail_unavailable");
      }
      if (verdict->kind != guardrails::CheckerVerdict::Kind::kFound) continue;
      const bool generic = e.checker.format == config::ExternalChecker::Format::kGeneric;
      const guardrails::Action action =
          generic ? (verdict->block ? guardrails::Action::kBlock : guardrails::Action::kFlag)
                  : e.action;
      add_find(ctx, GuardrailFind{policy->name(), e.name, guardrails::to_string(action), answer,
                                  verdict->count});
      if (action == guardrails::Action::kBlock) {
        co_return Error(ErrorKind::kBadRequest, policy->block_status(),
                        "The " + std::string(what) + " was blocked by guardrail policy \"" +
                            policy->name() + "\": its checker \"" + e.name +
                            "\" found it unacceptable.")
            .with_code("guardrail_blocked");
      }
    }
  }
  co_return std::nullopt;
}

}  // namespace sluice::pipeline
