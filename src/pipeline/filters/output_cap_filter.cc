#include "pipeline/filters/output_cap_filter.h"

#include "codec/json_members.h"
#include "pipeline/call_context.h"
#include "pipeline/upstream_request.h"
#include "providers/adapter.h"

namespace sluice::pipeline {

namespace {

// A limit the filter added to a request that had none: the member it wrote (renamed per
// upstream when the protocol has several names for it).
struct Added final : FilterState {
  codec::MemberPath field;
};

std::string field_name(const codec::MemberPath& field) {
  return field.inner.empty() ? std::string(field.key)
                             : std::string(field.key) + "." + std::string(field.inner);
}

Error refused(const codec::MemberPath& field, std::uint32_t limit, std::string_view why) {
  return Error(ErrorKind::kBadRequest, std::string(why) + "; this model accepts " +
                                           field_name(field) + " of at most " +
                                           std::to_string(limit))
      .with_code("max_output_tokens_exceeded")
      .with_param(field_name(field));
}

}  // namespace

std::unique_ptr<Filter> OutputCapFilter::make(const FilterSetup& setup) {
  const config::OutputCap& cap = setup.route.config->max_output_tokens;
  if (cap.limit == 0 || setup.ingress.output_limit_fields().empty()) {
    return nullptr;
  }
  return std::make_unique<OutputCapFilter>(cap);
}

FilterStatus OutputCapFilter::after_decode(CallContext& call) {
  const auto fields = call.ingress().output_limit_fields();
  const std::string_view body = call.request().body;
  const std::string limit = std::to_string(cap_.limit);
  const bool refuse = cap_.action == config::OutputCap::Action::kRefuse;
  std::string rewritten(body);
  bool stated = false;
  bool changed = false;
  std::uint64_t asked = 0;
  for (const codec::MemberPath& field : fields) {
    const codec::UnsignedMember m = codec::read_unsigned_member(body, field);
    if (!m.present) {
      continue;
    }
    stated = true;
    if (m.valid && *m.value <= cap_.limit) {
      asked = std::max(asked, *m.value);
      continue;
    }
    if (refuse) {
      return FilterStatus::stop(
          refused(field, cap_.limit,
                  m.valid ? "the request asks for " + std::to_string(*m.value) + " output tokens"
                          : field_name(field) + " is not a non-negative integer"));
    }
    if (auto capped = codec::set_member(rewritten, field, limit)) {
      rewritten = std::move(*capped);
      changed = true;
    }
    asked = cap_.limit;
  }
  if (!stated) {
    if (refuse) {
      return FilterStatus::stop(refused(fields.front(), cap_.limit, "the request sets no limit"));
    }
    if (auto added = codec::set_member(rewritten, fields.front(), limit)) {
      rewritten = std::move(*added);
      changed = true;
      call.state<Added>(*this).field = fields.front();
    }
    asked = cap_.limit;
  }
  if (changed) {
    if (std::optional<Error> invalid = call.replace_body(std::move(rewritten))) {
      return FilterStatus::stop(std::move(*invalid));
    }
  }
  call.set_output_limit(asked);
  return FilterStatus::proceed();
}

Awaitable<FilterStatus> OutputCapFilter::before_attempt(CallContext& call,
                                                        UpstreamRequest& attempt) {
  Added* added = call.find_state<Added>(*this);
  if (added == nullptr || !attempt.passthrough()) {
    co_return FilterStatus::proceed();  // a translated attempt writes the IR's limit its own way
  }
  std::string_view wanted = attempt.adapter().output_limit_field(attempt.wire_protocol());
  if (wanted.empty()) {
    wanted = call.ingress().output_limit_fields().front().key;
  }
  if (!added->field.inner.empty() || wanted == added->field.key) {
    co_return FilterStatus::proceed();
  }
  std::string renamed = codec::rename_member(call.request().body, added->field, wanted);
  if (std::optional<Error> invalid = call.replace_body(std::move(renamed))) {
    co_return FilterStatus::stop(std::move(*invalid));
  }
  // `wanted` views the adapter's or codec's static names, which outlive the call.
  added->field = codec::MemberPath{wanted, ""};
  co_return FilterStatus::proceed();
}

}  // namespace sluice::pipeline
