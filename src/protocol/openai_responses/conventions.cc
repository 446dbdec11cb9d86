#include "protocol/openai_responses/conventions.h"

#include <limits>

#include "codec/json_read.h"
#include "codec/json_writer.h"

namespace sluice::protocol::openai_responses {
namespace json = boost::json;

namespace {

Error protocol_error(std::string message) {
  return Error(ErrorKind::kUpstreamProtocol, std::move(message));
}

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  return b > std::numeric_limits<std::uint64_t>::max() - a
             ? std::numeric_limits<std::uint64_t>::max()
             : a + b;
}

// Reads the count at `key` of `o` into `target` when present; false when it is not a count.
bool read_count(const json::object& o, std::string_view key, std::uint64_t& target) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || v->is_null()) {
    return true;
  }
  auto n = codec::as_count(*v);
  if (!n) {
    return false;
  }
  target = *n;
  return true;
}

}  // namespace

void append_usage_json(std::string& out, const ir::Usage& usage) {
  codec::JsonWriter w(out);
  w.raw(R"({"input_tokens":)")
      .number(usage.input_tokens)
      .raw(R"(,"input_tokens_details":{"cached_tokens":)")
      .number(usage.cache_read_tokens)
      .raw(R"(,"cache_write_tokens":)")
      .number(usage.cache_write_tokens)
      .raw(R"(},"output_tokens":)")
      .number(usage.output_tokens)
      .raw(R"(,"output_tokens_details":{"reasoning_tokens":)")
      .number(usage.reasoning_tokens)
      .raw(R"(},"total_tokens":)")
      .number(saturating_add(usage.input_tokens, usage.output_tokens))
      .ch('}');
}

Result<ir::Usage> read_usage(const json::value& usage) {
  const json::object* o = usage.if_object();
  if (o == nullptr) {
    return protocol_error("upstream usage is not an object");
  }
  ir::Usage out;
  struct Field {
    const json::object* in;
    std::string_view key;
    std::uint64_t* target;
  };
  const json::value* in_details = o->if_contains("input_tokens_details");
  const json::value* out_details = o->if_contains("output_tokens_details");
  const json::object* in_o = in_details != nullptr ? in_details->if_object() : nullptr;
  const json::object* out_o = out_details != nullptr ? out_details->if_object() : nullptr;
  const Field fields[] = {
      {o, "input_tokens", &out.input_tokens},
      {o, "output_tokens", &out.output_tokens},
      {in_o, "cached_tokens", &out.cache_read_tokens},
      {in_o, "cache_write_tokens", &out.cache_write_tokens},
      {out_o, "reasoning_tokens", &out.reasoning_tokens},
  };
  for (const Field& f : fields) {
    if (f.in != nullptr && !read_count(*f.in, f.key, *f.target)) {
      return protocol_error("upstream usage." + std::string(f.key) +
                            " is not a non-negative integer");
    }
  }
  return out;
}

bool read_reasoning_item(const json::object& item, std::string_view id,
                         std::vector<ir::ContentPart>& out) {
  std::string encrypted;
  if (const json::value* e = item.if_contains("encrypted_content"); e != nullptr && !e->is_null()) {
    if (!e->is_string()) {
      return false;
    }
    encrypted.assign(e->get_string());
  }
  const std::size_t first = out.size();
  if (const json::value* summary = item.if_contains("summary");
      summary != nullptr && !summary->is_null()) {
    if (!summary->is_array()) {
      return false;
    }
    for (const json::value& entry : summary->get_array()) {
      const json::object* so = entry.if_object();
      const std::optional<std::string_view> text =
          so != nullptr ? string_at(*so, "text") : std::nullopt;
      if (!text) {
        return false;
      }
      ir::ContentPart& part = out.emplace_back();
      part.kind = ir::PartKind::kReasoning;
      part.text.assign(*text);
      part.id.assign(id);
    }
  }
  if (out.size() == first) {
    ir::ContentPart& part = out.emplace_back();
    part.kind = encrypted.empty() ? ir::PartKind::kReasoning : ir::PartKind::kRedactedReasoning;
    part.id.assign(id);
  }
  out.back().signature = std::move(encrypted);
  return true;
}

std::size_t reasoning_run_end(const std::vector<ir::ContentPart>& parts, std::size_t begin) {
  auto reasoning = [](const ir::ContentPart& p) {
    return p.kind == ir::PartKind::kReasoning || p.kind == ir::PartKind::kRedactedReasoning;
  };
  std::size_t end = begin + 1;
  if (parts[begin].id.empty()) {
    return end;
  }
  while (end < parts.size() && reasoning(parts[end]) && parts[end].id == parts[begin].id) {
    ++end;
  }
  return end;
}

void write_reasoning_item(codec::JsonWriter& w, std::string_view id,
                          const std::vector<ir::ContentPart>& parts, std::size_t begin,
                          std::size_t end) {
  w.raw(R"({"type":"reasoning","id":)").string(id).raw(R"(,"summary":[)");
  std::string_view encrypted;
  bool first = true;
  for (std::size_t k = begin; k < end; ++k) {
    const ir::ContentPart& p = parts[k];
    if (p.id != parts[begin].id) {
      continue;  // an id-less part a request run reaches over (request_encoder.cc)
    }
    if (!p.signature.empty()) {
      encrypted = p.signature;
    }
    // An empty summary text carries nothing and reads back as no part at all: leaving it out
    // keeps encode(decode(x)) == x for what this encoder writes.
    if (p.kind != ir::PartKind::kReasoning || p.text.empty()) {
      continue;
    }
    w.raw(first ? R"({"type":"summary_text","text":)" : R"(,{"type":"summary_text","text":)")
        .string(p.text)
        .ch('}');
    first = false;
  }
  w.ch(']');
  if (!encrypted.empty()) {
    w.raw(R"(,"encrypted_content":)").string(encrypted);
  }
  w.ch('}');
}

std::string response_id(std::string_view id) {
  constexpr std::string_view kPrefix = "resp_";
  if (id.starts_with(kPrefix)) {
    return std::string(id);
  }
  std::string out(kPrefix);
  out.append(id);
  return out;
}

ir::FinishReason finish_from_status(std::string_view status, std::string_view incomplete_reason,
                                    bool has_tool_calls) {
  if (status == "incomplete") {
    if (incomplete_reason == "max_output_tokens") {
      return ir::FinishReason::kLength;
    }
    if (incomplete_reason == "content_filter") {
      return ir::FinishReason::kContentFilter;
    }
    return ir::FinishReason::kOther;
  }
  return has_tool_calls ? ir::FinishReason::kToolCalls : ir::FinishReason::kStop;
}

std::string_view incomplete_reason(ir::FinishReason finish) {
  switch (finish) {
    case ir::FinishReason::kLength:
      return "max_output_tokens";
    case ir::FinishReason::kContentFilter:
      return "content_filter";
    default:
      return "";
  }
}

}  // namespace sluice::protocol::openai_responses
