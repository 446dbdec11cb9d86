#include "protocol/gemini/response.h"

#include <boost/json/monotonic_resource.hpp>

#include "codec/json_read.h"
#include "codec/json_writer.h"
#include "protocol/drift.h"
#include "protocol/gemini/conventions.h"
#include "protocol/gemini/parts.h"
#include "protocol/gemini/wire_json.h"

namespace sluice::protocol::gemini {
namespace json = boost::json;
using wire::member;
using wire::string_member;

namespace {

Error protocol_error(std::string message) {
  return Error(ErrorKind::kUpstreamProtocol, std::move(message));
}

class AnswerIds final : public parts::CallIds {
 public:
  explicit AnswerIds(std::string_view response_id) : response_id_(response_id) {}
  std::string call_id(std::string_view given, std::size_t /*part*/,
                      std::string_view /*name*/) override {
    const std::size_t k = calls_++;
    return given.empty() ? answer_call_id(response_id_, k) : std::string(given);
  }
  Result<std::string> response_id(std::string_view, std::string_view, const std::string&) override {
    return protocol_error("an answer cannot contain a functionResponse");
  }

 private:
  std::string_view response_id_;
  std::size_t calls_ = 0;
};

}  // namespace

Result<ir::Response> decode_response(std::string_view body) {
  codec::SmallDocumentArena arena;
  boost::system::error_code ec;
  json::value doc = codec::parse_json(body, ec, &arena.resource, kMaxJsonDepth);
  if (ec || !doc.is_object()) {
    return protocol_error("upstream GenerateContentResponse is not a JSON object" +
                          (ec ? ": " + ec.message() : std::string()));
  }
  const json::object& o = doc.get_object();
  if (auto error = wire::upstream_error(o)) {
    return std::move(*error);
  }
  ir::Response out;
  Drift drift;
  drift.fields(o, wire::known::kResponse, /*snake_case=*/true);
  out.id.assign(string_member(o, "responseId").value_or(""));
  out.model.assign(string_member(o, "modelVersion").value_or(""));
  if (const json::value* u = member(o, "usageMetadata")) {
    auto usage = wire::ir_usage(*u);
    if (!usage) {
      return std::move(usage).error();
    }
    out.usage = *usage;
    drift.fields(u->get_object(), wire::known::kUsage, true);
  }
  const json::value* candidates = member(o, "candidates");
  if (candidates != nullptr && !candidates->is_array()) {
    return protocol_error("upstream candidates is not a list");
  }
  if (candidates == nullptr || candidates->get_array().empty()) {
    bool bad = false;
    const json::object* feedback = wire::object_member(o, "promptFeedback", bad);
    const auto reason =
        feedback != nullptr ? string_member(*feedback, "blockReason") : std::nullopt;
    out.finish = reason ? block_reason(*reason) : ir::FinishReason::kOther;
    out.unknown_fields = drift.count();
    return out;
  }
  const json::value& first = candidates->get_array().front();
  if (!first.is_object()) {
    return protocol_error("upstream candidates[0] is not an object");
  }
  const json::object& c = first.get_object();
  drift.fields(c, wire::known::kCandidate, true);
  bool bad = false;
  if (const json::object* content = wire::object_member(c, "content", bad)) {
    drift.fields(*content, wire::known::kContent, true);
    if (const json::value* parts = member(*content, "parts")) {
      AnswerIds ids(out.id);
      if (auto r = parts::read_parts(*parts, parts::Source::kUpstream,
                                     "candidates[0].content.parts", ids, out.content);
          !r) {
        return std::move(r).error();
      }
      for (const json::value& p : parts->get_array()) {  // read_parts checked the shapes
        drift.fields(p.get_object(), wire::known::kPart, true);
      }
    }
  }
  if (bad) {
    return protocol_error("upstream candidates[0].content is not an object");
  }
  bool called = false;
  for (const ir::ContentPart& p : out.content) {
    called = called || p.kind == ir::PartKind::kToolCall;
  }
  out.finish = finish_reason(string_member(c, "finishReason").value_or(""), called);
  if (out.finish == ir::FinishReason::kUnset) {
    out.finish = ir::FinishReason::kOther;  // a complete answer without a reason: not clean
  }
  out.unknown_fields = drift.count();
  return out;
}

Result<std::string> encode_response(const ir::Response& response, bool* usage_clamped) {
  std::string out;
  std::size_t estimate = 256 + response.id.size() + response.model.size();
  for (const ir::ContentPart& part : response.content) {
    estimate += 64 + part.text.size() + part.arguments.size() + part.signature.size();
  }
  out.reserve(estimate);
  codec::JsonWriter w(out);
  w.raw(R"({"candidates":[{"content":{"parts":)");
  parts::WriteOptions options;
  options.call_ids = true;
  parts::WriteStats stats;
  std::size_t written = 0;
  if (auto r = parts::write_parts(out, response.content, options, stats, written); !r) {
    return std::move(r).error();
  }
  w.raw(R"(,"role":"model"},"finishReason":)")
      .string(finish_reason_name(response.finish))
      .raw(R"(,"index":0}],"usageMetadata":)");
  bool clamped = false;
  append_usage_json(out, to_wire_usage(response.usage.value_or(ir::Usage{}), clamped));
  if (usage_clamped != nullptr) {
    *usage_clamped = clamped;
  }
  w.raw(R"(,"modelVersion":)").string(response.model);
  if (!response.id.empty()) {
    w.raw(R"(,"responseId":)").string(response.id);
  }
  w.ch('}');
  return out;
}

}  // namespace sluice::protocol::gemini
