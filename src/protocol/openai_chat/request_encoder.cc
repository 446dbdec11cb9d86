#include "protocol/openai_chat/request_encoder.h"

#include <algorithm>
#include <cstdint>

#include "codec/data_url.h"
#include "codec/json_writer.h"

namespace sluice::protocol::openai_chat {
using codec::JsonWriter;
using ir::PartKind;

namespace {

constexpr std::string_view kEmptySchema = R"({"type":"object"})";
constexpr std::size_t kMaxStop = 4;  // Chat Completions takes at most 4 stop sequences

std::size_t count_kind(const std::vector<ir::ContentPart>& parts, PartKind kind) {
  std::size_t n = 0;
  for (const ir::ContentPart& p : parts) {
    n += p.kind == kind ? 1 : 0;
  }
  return n;
}

const ir::ContentPart* first_of(const std::vector<ir::ContentPart>& parts, PartKind kind) {
  for (const ir::ContentPart& p : parts) {
    if (p.kind == kind) {
      return &p;
    }
  }
  return nullptr;
}

// "content": the text parts of `parts`, a string for one part, an array of text parts for
// several, `empty` (raw JSON) for none.
void write_text_content(JsonWriter& w, const std::vector<ir::ContentPart>& parts,
                        std::string_view empty) {
  w.key("content");
  const std::size_t n = count_kind(parts, PartKind::kText);
  if (n == 0) {
    w.raw(empty);
    return;
  }
  if (n == 1) {
    w.string(first_of(parts, PartKind::kText)->text);
    return;
  }
  w.ch('[');
  bool first = true;
  for (const ir::ContentPart& p : parts) {
    if (p.kind != PartKind::kText) {
      continue;
    }
    if (!first) {
      w.ch(',');
    }
    first = false;
    w.raw(R"({"type":"text","text":)").string(p.text).ch('}');
  }
  w.ch(']');
}

void write_image(JsonWriter& w, const ir::ContentPart& p) {
  w.raw(R"({"type":"image_url","image_url":{"url":")");
  // OpenAI takes inline images only as data URLs (RFC 2397).
  codec::append_image_url_escaped(w.out(), p.image_is_url, p.source, p.media_type);
  w.ch('"');
  if (!p.detail.empty()) {
    w.raw(R"(,"detail":)").string(p.detail);
  }
  w.raw("}}");
}

void write_name(JsonWriter& w, const ir::Message& m) {
  if (!m.name.empty()) {
    w.raw(R"(,"name":)").string(m.name);
  }
}

// A user (or tool) message: its tool results first, as tool messages, then the rest.
void write_user(JsonWriter& w, const ir::Message& m, bool& first) {
  auto sep = [&] {
    if (!first) {
      w.ch(',');
    }
    first = false;
  };
  std::size_t rest = 0;
  for (const ir::ContentPart& p : m.content) {
    if (p.kind != PartKind::kToolResult) {
      rest += (p.kind == PartKind::kText || p.kind == PartKind::kImage) ? 1 : 0;
      continue;
    }
    sep();
    w.raw(R"({"role":"tool","tool_call_id":)").string(p.id).ch(',');
    write_text_content(w, p.parts, R"("")");
    w.ch('}');
  }
  const bool only_tool_results = rest == 0 && count_kind(m.content, PartKind::kToolResult) > 0;
  if (only_tool_results) {
    return;
  }
  sep();
  w.raw(R"({"role":"user")");
  write_name(w, m);
  w.ch(',');
  if (rest == 1 && first_of(m.content, PartKind::kText) != nullptr) {
    write_text_content(w, m.content, R"("")");
  } else if (rest == 0) {
    w.raw(R"("content":"")");
  } else {
    w.raw(R"("content":[)");
    bool first_part = true;
    for (const ir::ContentPart& p : m.content) {
      if (p.kind != PartKind::kText && p.kind != PartKind::kImage) {
        continue;
      }
      if (!first_part) {
        w.ch(',');
      }
      first_part = false;
      if (p.kind == PartKind::kText) {
        w.raw(R"({"type":"text","text":)").string(p.text).ch('}');
      } else {
        write_image(w, p);
      }
    }
    w.ch(']');
  }
  w.ch('}');
}

void write_assistant(JsonWriter& w, const ir::Message& m) {
  w.raw(R"({"role":"assistant")");
  write_name(w, m);
  w.ch(',');
  const bool has_calls = first_of(m.content, PartKind::kToolCall) != nullptr;
  write_text_content(w, m.content, has_calls ? "null" : R"("")");
  if (has_calls) {
    w.raw(R"(,"tool_calls":[)");
    bool first = true;
    for (const ir::ContentPart& p : m.content) {
      if (p.kind != PartKind::kToolCall) {
        continue;
      }
      if (!first) {
        w.ch(',');
      }
      first = false;
      w.raw(R"({"id":)").string(p.id);
      w.raw(R"(,"type":"function","function":{"name":)").string(p.name);
      w.raw(R"(,"arguments":)").string(p.arguments.empty() ? std::string_view("{}") : p.arguments);
      w.raw("}}");
    }
    w.ch(']');
  }
  w.ch('}');
}

void write_response_format(JsonWriter& w, const ir::ResponseFormat& f) {
  switch (f.kind) {
    case ir::ResponseFormat::Kind::kText:
      return;  // the default
    case ir::ResponseFormat::Kind::kJsonObject:
      w.raw(R"(,"response_format":{"type":"json_object"})");
      return;
    case ir::ResponseFormat::Kind::kJsonSchema:
      break;
  }
  // json_schema.name is required; callers of protocols without one (Gemini, Anthropic) get a
  // fixed name.
  w.raw(R"(,"response_format":{"type":"json_schema","json_schema":{"name":)")
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

}  // namespace

std::string encode_request(const ir::Request& request, std::string_view upstream_model, bool stream,
                           const EncodeOptions& options) {
  std::string out;
  std::size_t estimate = 256;
  for (const ir::ContentPart& p : request.system) {
    estimate += p.text.size() + 32;
  }
  for (const ir::Message& m : request.messages) {
    for (const ir::ContentPart& p : m.content) {
      estimate += p.text.size() + p.source.size() + p.arguments.size() + 64;
      for (const ir::ContentPart& r : p.parts) {
        estimate += r.text.size() + 32;
      }
    }
  }
  for (const ir::Tool& t : request.tools) {
    estimate += t.name.size() + t.description.size() + t.parameters.size() + 64;
  }
  out.reserve(estimate + estimate / 8);
  JsonWriter w(out);

  w.raw(R"({"model":)").string(upstream_model).raw(R"(,"messages":[)");
  bool first = true;
  if (!request.system.empty()) {
    w.raw(R"({"role":"system",)");
    write_text_content(w, request.system, R"("")");
    w.ch('}');
    first = false;
  }
  for (const ir::Message& m : request.messages) {
    switch (m.role) {
      case ir::Role::kSystem:
        if (!first) {
          w.ch(',');
        }
        first = false;
        w.raw(R"({"role":"system")");
        write_name(w, m);
        w.ch(',');
        write_text_content(w, m.content, R"("")");
        w.ch('}');
        break;
      case ir::Role::kUser:
      case ir::Role::kTool:
        write_user(w, m, first);
        break;
      case ir::Role::kAssistant:
        if (!first) {
          w.ch(',');
        }
        first = false;
        write_assistant(w, m);
        break;
    }
  }
  w.ch(']');

  if (!request.tools.empty()) {
    w.raw(R"(,"tools":[)");
    for (std::size_t i = 0; i < request.tools.size(); ++i) {
      const ir::Tool& t = request.tools[i];
      if (i > 0) {
        w.ch(',');
      }
      w.raw(R"({"type":"function","function":{"name":)").string(t.name);
      if (!t.description.empty()) {
        w.raw(R"(,"description":)").string(t.description);
      }
      w.raw(R"(,"parameters":)").raw(t.parameters.empty() ? kEmptySchema : t.parameters);
      w.raw("}}");
    }
    w.ch(']');
  }
  switch (request.tool_choice.mode) {
    case ir::ToolChoiceMode::kUnset:
      break;
    case ir::ToolChoiceMode::kAuto:
      w.raw(R"(,"tool_choice":"auto")");
      break;
    case ir::ToolChoiceMode::kNone:
      w.raw(R"(,"tool_choice":"none")");
      break;
    case ir::ToolChoiceMode::kRequired:
      w.raw(R"(,"tool_choice":"required")");
      break;
    case ir::ToolChoiceMode::kNamed:
      w.raw(R"(,"tool_choice":{"type":"function","function":{"name":)")
          .string(request.tool_choice.name)
          .raw("}}");
      break;
  }
  if (request.tool_choice.disable_parallel_tool_use && !request.tools.empty()) {
    w.raw(R"(,"parallel_tool_calls":false)");
  }
  if (request.max_tokens) {
    w.raw(options.use_max_completion_tokens ? R"(,"max_completion_tokens":)" : R"(,"max_tokens":)")
        .number(static_cast<std::uint64_t>(*request.max_tokens));
  }
  if (request.temperature) {
    w.raw(R"(,"temperature":)").number(*request.temperature);
  }
  if (request.top_p) {
    w.raw(R"(,"top_p":)").number(*request.top_p);
  }
  if (!request.stop.empty()) {
    // Chat Completions takes at most 4 stop sequences; the first 4 are sent.
    w.raw(R"(,"stop":[)");
    for (std::size_t i = 0; i < std::min<std::size_t>(request.stop.size(), kMaxStop); ++i) {
      if (i > 0) {
        w.ch(',');
      }
      w.string(request.stop[i]);
    }
    w.ch(']');
  }
  if (!request.user.empty()) {
    w.raw(R"(,"user":)").string(request.user);
  }
  if (!request.reasoning.effort.empty()) {
    w.raw(R"(,"reasoning_effort":)").string(request.reasoning.effort);
  } else if (request.reasoning.enabled && request.reasoning.budget_tokens &&
             *request.reasoning.budget_tokens > 0) {
    // A thinking budget (Anthropic, Gemini callers) becomes the effort that budget buys.
    w.raw(R"(,"reasoning_effort":)")
        .string(ir::effort_for_budget(*request.reasoning.budget_tokens));
  }
  write_response_format(w, request.response_format);
  if (stream) {
    w.raw(R"(,"stream":true,"stream_options":{"include_usage":true})");
  }
  w.ch('}');
  return out;
}

}  // namespace sluice::protocol::openai_chat
