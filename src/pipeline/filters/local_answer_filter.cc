#include "pipeline/filters/local_answer_filter.h"

#include "pipeline/call_context.h"
#include "pipeline/error_reply.h"
#include "pipeline/upstream_request.h"

namespace sluice::pipeline {

std::unique_ptr<Filter> LocalAnswerFilter::make(const FilterSetup& setup) {
  if (!setup.ingress.answers_locally()) {
    return nullptr;
  }
  return std::make_unique<LocalAnswerFilter>();
}

Awaitable<FilterStatus> LocalAnswerFilter::before_attempt(CallContext& call,
                                                          UpstreamRequest& attempt) {
  if (attempt.passthrough()) {
    co_return FilterStatus::proceed();
  }
  auto local = call.ingress().local_answer(call.mutable_request());
  if (!local) {
    co_return FilterStatus::proceed();
  }
  if (!*local) {
    co_return FilterStatus::stop(std::move(*local).error());
  }
  const protocol::IngressCodec::LocalAnswer& answer = **local;
  call.ctx().outcome = Outcome::kComplete;
  ResponseHead& head = call.downstream().new_head();
  add_standard_fields(call.ctx(), head);
  if (!answer.header.empty()) {
    head.headers.add(answer.header, answer.value);
  }
  co_await call.send_answer(head, answer.body);
  co_return FilterStatus::answered();
}

}  // namespace sluice::pipeline
