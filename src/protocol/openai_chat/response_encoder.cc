#include "protocol/openai_chat/response_encoder.h"

#include <algorithm>
#include <limits>

#include <boost/json/monotonic_resource.hpp>

#include "codec/json_read.h"
#include "codec/json_writer.h"

namespace sluice::protocol::openai_chat {
namespace json = boost::json;

namespace {

Error protocol_error(std::string message) {
  return Error(ErrorKind::kUpstreamProtocol, std::move(message));
}

// Tool arguments as the caller will parse them: any JSON text ("" stands for {}).
bool is_json(std::string_view text) {
  if (text.empty()) {
    return true;
  }
  unsigned char arena[1024];
  json::monotonic_resource mr(arena, sizeof arena);
  boost::system::error_code ec;
  (void)codec::parse_json(text, ec, &mr);
  return !ec;
}

}  // namespace

std::string_view finish_reason_to_openai(ir::FinishReason finish) {
  switch (finish) {
    case ir::FinishReason::kLength:
      return "length";
    case ir::FinishReason::kToolCalls:
      return "tool_calls";
    case ir::FinishReason::kContentFilter:
    case ir::FinishReason::kRefusal:
      return "content_filter";
    case ir::FinishReason::kStop:
    case ir::FinishReason::kStopSequence:
    case ir::FinishReason::kPauseTurn:
    case ir::FinishReason::kOther:
    case ir::FinishReason::kUnset:
      break;
  }
  return "stop";
}

void append_usage_json(std::string& out, const ir::Usage& usage) {
  const std::uint64_t total =
      usage.output_tokens > std::numeric_limits<std::uint64_t>::max() - usage.input_tokens
          ? std::numeric_limits<std::uint64_t>::max()
          : usage.input_tokens + usage.output_tokens;
  codec::JsonWriter w(out);
  w.raw(R"({"prompt_tokens":)")
      .number(usage.input_tokens)
      .raw(R"(,"completion_tokens":)")
      .number(usage.output_tokens)
      .raw(R"(,"total_tokens":)")
      .number(total)
      .raw(R"(,"prompt_tokens_details":{"cached_tokens":)")
      .number(usage.cache_read_tokens)
      .raw(R"(},"completion_tokens_details":{"reasoning_tokens":)")
      .number(usage.reasoning_tokens)
      .raw("}}");
}

std::string completion_id(std::string_view id) {
  constexpr std::string_view kPrefix = "chatcmpl-";
  if (id.starts_with(kPrefix)) {
    return std::string(id);
  }
  std::string out;
  out.reserve(kPrefix.size() + id.size());
  out.append(kPrefix).append(id);
  return out;
}

Result<std::string> encode_response(const ir::Response& response, std::int64_t created,
                                    std::uint32_t* dropped_parts) {
  std::uint32_t dropped = 0;
  bool has_reasoning = false;
  std::size_t tool_calls = 0;
  std::size_t estimate = 320 + response.id.size() + response.model.size();
  for (const ir::ContentPart& part : response.content) {
    estimate += 64 + part.text.size() + part.arguments.size() + part.id.size() + part.name.size();
    switch (part.kind) {
      case ir::PartKind::kText:
        break;
      case ir::PartKind::kReasoning:
        has_reasoning = true;
        dropped += part.signature.empty() ? 0 : 1;
        break;
      case ir::PartKind::kRedactedReasoning:
        ++dropped;
        break;
      case ir::PartKind::kToolCall:
        if (!is_json(part.arguments)) {
          return protocol_error("tool call '" + part.name +
                                "' has arguments that are not JSON; cannot encode an OpenAI "
                                "tool call");
        }
        ++tool_calls;
        break;
      case ir::PartKind::kImage:
      case ir::PartKind::kToolResult:
        return protocol_error("a response cannot contain image or tool_result content");
    }
  }
  if (dropped_parts != nullptr) {
    *dropped_parts = dropped;
  }

  // The parts of one kind joined into one JSON string: `content` and `reasoning_content`.
  auto joined = [&](codec::JsonWriter& w, ir::PartKind kind) {
    w.ch('"');
    for (const ir::ContentPart& part : response.content) {
      if (part.kind == kind) {
        codec::append_json_escaped(w.out(), part.text);
      }
    }
    w.ch('"');
  };

  std::string out;
  out.reserve(estimate);
  codec::JsonWriter w(out);
  const std::string id = completion_id(response.id);
  w.raw(R"({"id":)").string(id).raw(R"(,"object":"chat.completion","created":)").number(created);
  w.raw(R"(,"model":)").string(response.model);
  w.raw(R"(,"choices":[{"index":0,"message":{"role":"assistant","content":)");
  const bool has_text =
      std::any_of(response.content.begin(), response.content.end(),
                  [](const ir::ContentPart& p) { return p.kind == ir::PartKind::kText; });
  if (has_text || tool_calls == 0) {
    joined(w, ir::PartKind::kText);
  } else {
    w.null();
  }
  if (has_reasoning) {
    w.raw(R"(,"reasoning_content":)");
    joined(w, ir::PartKind::kReasoning);
  }
  if (tool_calls > 0) {
    w.raw(R"(,"tool_calls":[)");
    std::size_t n = 0;
    for (const ir::ContentPart& part : response.content) {
      if (part.kind != ir::PartKind::kToolCall) {
        continue;
      }
      if (n > 0) {
        w.ch(',');
      }
      w.raw(R"({"id":)");
      if (part.id.empty()) {
        w.string(id + "_call_" + std::to_string(n));
      } else {
        w.string(part.id);
      }
      w.raw(R"(,"type":"function","function":{"name":)")
          .string(part.name)
          .raw(R"(,"arguments":)")
          .string(part.arguments.empty() ? std::string_view("{}") : part.arguments)
          .raw("}}");
      ++n;
    }
    w.ch(']');
  }
  w.raw(R"(,"refusal":null},"logprobs":null,"finish_reason":)")
      .string(finish_reason_to_openai(response.finish))
      .raw("}]");
  if (response.usage) {
    w.raw(R"(,"usage":)");
    append_usage_json(out, *response.usage);
  }
  w.ch('}');
  return out;
}

}  // namespace sluice::protocol::openai_chat
