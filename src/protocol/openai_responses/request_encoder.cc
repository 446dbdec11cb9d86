#include "protocol/openai_responses/request_encoder.h"

#include "codec/data_url.h"
#include "codec/json_writer.h"
#include "protocol/openai_responses/conventions.h"

namespace sluice::protocol::openai_responses {
using codec::JsonWriter;
using ir::PartKind;

namespace {

constexpr std::string_view kEmptySchema = R"({"type":"object"})";
// The API's minimum for max_output_tokens (openapi.yaml CreateResponse).
constexpr std::uint32_t kMinOutputTokens = 16;
// tool_choice as a string (ToolChoiceOptions).
constexpr std::pair<std::string_view, ir::ToolChoiceMode> kToolChoiceModes[] = {
    {"auto", ir::ToolChoiceMode::kAuto},
    {"none", ir::ToolChoiceMode::kNone},
    {"required", ir::ToolChoiceMode::kRequired}};

Error bad(std::string message, std::string param) {
  return Error(ErrorKind::kBadRequest, std::move(message)).with_param(std::move(param));
}

class RequestWriter {
 public:
  RequestWriter(std::string& out, EncodeStats& stats) : w_(out), stats_(stats) {}

  void system(const std::vector<ir::ContentPart>& parts) {
    if (parts.size() <= 1) {
      return;  // instructions (see encode_request)
    }
    item_open(/*turn=*/false);
    w_.raw(R"({"role":"system","content":)");
    text_parts(parts);
    w_.ch('}');
  }

  void message(const ir::Message& m) {
    switch (m.role) {
      case ir::Role::kSystem:
        item_open(/*turn=*/false);
        w_.raw(R"({"role":"system","content":)");
        text_parts(m.content);
        w_.ch('}');
        return;
      case ir::Role::kUser:
      case ir::Role::kTool:
        user(m);
        return;
      case ir::Role::kAssistant:
        assistant(m);
        return;
    }
  }

  // Items written other than system ones: what the upstream is asked to answer.
  std::size_t turns() const { return turns_; }

 private:
  void item_open(bool turn = true) {
    if (!first_) {
      w_.ch(',');
    }
    first_ = false;
    turns_ += turn ? 1 : 0;
  }

  // Text and image parts as input content parts.
  void text_parts(const std::vector<ir::ContentPart>& parts) {
    w_.ch('[');
    bool first = true;
    for (const ir::ContentPart& p : parts) {
      if (p.kind != PartKind::kText && p.kind != PartKind::kImage) {
        continue;
      }
      if (!first) {
        w_.ch(',');
      }
      first = false;
      if (p.kind == PartKind::kText) {
        w_.raw(R"({"type":"input_text","text":)").string(p.text).ch('}');
        continue;
      }
      w_.raw(R"({"type":"input_image","image_url":")");
      codec::append_image_url_escaped(w_.out(), p.image_is_url, p.source, p.media_type);
      w_.raw(R"(","detail":)").string(p.detail.empty() ? std::string_view("auto") : p.detail);
      w_.ch('}');
    }
    w_.ch(']');
  }

  void user(const ir::Message& m) {
    bool rest = false;
    for (const ir::ContentPart& p : m.content) {
      if (p.kind != PartKind::kToolResult) {
        rest = rest || p.kind == PartKind::kText || p.kind == PartKind::kImage;
        continue;
      }
      item_open();
      w_.raw(R"({"type":"function_call_output","call_id":)").string(p.id).raw(R"(,"output":)");
      bool has_image = false;
      for (const ir::ContentPart& r : p.parts) {
        has_image = has_image || r.kind == PartKind::kImage;
      }
      if (has_image) {
        text_parts(p.parts);
      } else {
        w_.ch('"');
        for (const ir::ContentPart& r : p.parts) {
          codec::append_json_escaped(w_.out(), r.text);
        }
        w_.ch('"');
      }
      w_.ch('}');
    }
    if (rest) {
      item_open();
      w_.raw(R"({"role":"user","content":)");
      text_parts(m.content);
      w_.ch('}');
    }
  }

  void assistant(const ir::Message& m) {
    const std::vector<ir::ContentPart>& parts = m.content;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const ir::ContentPart& p = parts[i];
      switch (p.kind) {
        case PartKind::kText:
          item_open();
          w_.raw(R"({"role":"assistant","content":)").string(p.text).ch('}');
          break;
        case PartKind::kToolCall:
          item_open();
          w_.raw(R"({"type":"function_call","call_id":)").string(p.id);
          w_.raw(R"(,"name":)").string(p.name).raw(R"(,"arguments":)");
          w_.string(p.arguments.empty() ? std::string_view("{}") : p.arguments).ch('}');
          break;
        case PartKind::kReasoning:
        case PartKind::kRedactedReasoning:
          i = reasoning(parts, i);
          break;
        case PartKind::kImage:
        case PartKind::kToolResult:
          break;  // not assistant content; the IR codecs never put them there
      }
    }
  }

  // Writes the reasoning item starting at parts[i]; returns the index of its last part.
  std::size_t reasoning(const std::vector<ir::ContentPart>& parts, std::size_t i) {
    if (parts[i].id.empty()) {
      ++stats_.dropped_reasoning;
      return i;
    }
    // Reasoning without an id is dropped, so the same id on its far side would be written as
    // a second, adjacent item with that id: a Responses upstream rejects the duplicate, and
    // decode reads the two back as one. The run reaches over id-less parts instead, and
    // write_reasoning_item leaves them out.
    std::size_t end = reasoning_run_end(parts, i);
    for (std::size_t next = end; next < parts.size() && is_reasoning(parts[next]); ++next) {
      if (parts[next].id == parts[i].id) {
        end = reasoning_run_end(parts, next);
        next = end - 1;
      } else if (!parts[next].id.empty()) {
        break;
      }
    }
    item_open();
    write_reasoning_item(w_, parts[i].id, parts, i, end);
    for (std::size_t k = i; k < end; ++k) {
      stats_.dropped_reasoning += parts[k].id.empty() ? 1 : 0;
    }
    return end - 1;
  }

  static bool is_reasoning(const ir::ContentPart& p) {
    return p.kind == PartKind::kReasoning || p.kind == PartKind::kRedactedReasoning;
  }

  JsonWriter w_;
  EncodeStats& stats_;
  bool first_ = true;
  std::size_t turns_ = 0;
};

void write_text_format(JsonWriter& w, const ir::ResponseFormat& f) {
  switch (f.kind) {
    case ir::ResponseFormat::Kind::kText:
      return;  // the default
    case ir::ResponseFormat::Kind::kJsonObject:
      w.raw(R"(,"text":{"format":{"type":"json_object"}})");
      return;
    case ir::ResponseFormat::Kind::kJsonSchema:
      break;
  }
  // name and schema are required; callers of protocols without a name get a fixed one.
  w.raw(R"(,"text":{"format":{"type":"json_schema","name":)")
      .string(f.name.empty() ? std::string_view("response") : std::string_view(f.name));
  if (!f.description.empty()) {
    w.raw(R"(,"description":)").string(f.description);
  }
  w.raw(R"(,"schema":)").raw(f.schema.empty() ? kEmptySchema : f.schema);
  if (f.strict) {
    w.raw(R"(,"strict":)").boolean(*f.strict);
  }
  w.raw("}}");
}

void write_reasoning(JsonWriter& w, const ir::Reasoning& r, EncodeStats& stats) {
  std::string_view effort = r.effort;
  if (effort.empty() && r.budget_tokens) {
    effort = ir::effort_for_budget(*r.budget_tokens);
    ++stats.dropped_fields;  // the budget itself has no parameter
  }
  if (!r.enabled && effort.empty() && r.summary.empty()) {
    return;
  }
  // Callers of other protocols see their reasoning text: ask for a summary unless reasoning is
  // off or the caller chose one.
  std::string_view summary = r.summary;
  if (summary.empty() && effort != "none") {
    summary = "auto";
  }
  w.raw(R"(,"reasoning":{)");
  bool first = true;
  if (!effort.empty()) {
    w.raw(R"("effort":)").string(effort);
    first = false;
  }
  if (!summary.empty()) {
    w.raw(first ? R"("summary":)" : R"(,"summary":)").string(summary);
  }
  w.ch('}');
}

}  // namespace

Result<std::string> encode_request(const ir::Request& request, std::string_view upstream_model,
                                   bool stream, EncodeStats* stats) {
  EncodeStats local;
  EncodeStats& st = stats != nullptr ? *stats : local;
  if (request.max_tokens && *request.max_tokens < kMinOutputTokens) {
    return bad("max_tokens " + std::to_string(*request.max_tokens) +
                   " is below 16, the least an OpenAI Responses upstream accepts "
                   "(max_output_tokens)",
               "max_tokens");
  }
  std::size_t estimate = 256;
  for (const ir::ContentPart& p : request.system) {
    estimate += p.text.size() + 32;
  }
  for (const ir::Message& m : request.messages) {
    for (const ir::ContentPart& p : m.content) {
      estimate += p.text.size() + p.source.size() + p.arguments.size() + p.signature.size() + 96;
      for (const ir::ContentPart& r : p.parts) {
        estimate += r.text.size() + r.source.size() + 48;
      }
    }
  }
  for (const ir::Tool& t : request.tools) {
    estimate += t.name.size() + t.description.size() + t.parameters.size() + 96;
  }
  std::string out;
  out.reserve(estimate + estimate / 8);
  JsonWriter w(out);
  w.raw(R"({"model":)").string(upstream_model);
  if (request.system.size() == 1) {
    w.raw(R"(,"instructions":)").string(request.system.front().text);
  }
  w.raw(R"(,"input":[)");
  RequestWriter items(out, st);
  items.system(request.system);
  for (const ir::Message& m : request.messages) {
    items.message(m);
  }
  if (items.turns() == 0) {
    // Every turn was dropped (reasoning without an id, a message without content): the
    // upstream would get system text and nothing to answer.
    return bad(
        "Nothing in 'messages' can be sent to an OpenAI Responses upstream: every turn is "
        "empty or reasoning without an id.",
        "messages");
  }
  w.ch(']');
  if (!request.tools.empty()) {
    w.raw(R"(,"tools":[)");
    for (std::size_t i = 0; i < request.tools.size(); ++i) {
      const ir::Tool& t = request.tools[i];
      w.raw(i == 0 ? R"({"type":"function","name":)" : R"(,{"type":"function","name":)")
          .string(t.name);
      if (!t.description.empty()) {
        w.raw(R"(,"description":)").string(t.description);
      }
      w.raw(R"(,"parameters":)").raw(t.parameters.empty() ? kEmptySchema : t.parameters);
      w.raw(R"(,"strict":false})");
    }
    w.ch(']');
  }
  if (request.tool_choice.mode == ir::ToolChoiceMode::kNamed) {
    w.raw(R"(,"tool_choice":{"type":"function","name":)").string(request.tool_choice.name).ch('}');
  } else {
    for (const auto& [text, mode] : kToolChoiceModes) {
      if (mode == request.tool_choice.mode) {
        w.raw(R"(,"tool_choice":)").string(text);
      }
    }
  }
  if (request.tool_choice.disable_parallel_tool_use && !request.tools.empty()) {
    w.raw(R"(,"parallel_tool_calls":false)");
  }
  if (request.max_tokens) {
    w.raw(R"(,"max_output_tokens":)").number(static_cast<std::uint64_t>(*request.max_tokens));
  }
  if (request.temperature) {
    w.raw(R"(,"temperature":)").number(*request.temperature);
  }
  if (request.top_p) {
    w.raw(R"(,"top_p":)").number(*request.top_p);
  }
  write_reasoning(w, request.reasoning, st);
  if (!request.user.empty()) {
    w.raw(R"(,"user":)").string(request.user);
  }
  write_text_format(w, request.response_format);
  st.dropped_fields += static_cast<std::uint32_t>(!request.stop.empty()) +
                       static_cast<std::uint32_t>(request.top_k.has_value());
  w.raw(R"(,"store":false)");
  if (stream) {
    w.raw(R"(,"stream":true)");
  }
  w.ch('}');
  return out;
}

}  // namespace sluice::protocol::openai_responses
