#include "protocol/gemini/request_encoder.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "codec/json_writer.h"
#include "protocol/gemini/conventions.h"
#include "protocol/gemini/parts.h"
#include "protocol/gemini/wire_json.h"

namespace sluice::protocol::gemini {

namespace {

constexpr std::string_view kEmptySchema = R"({"type":"object"})";
constexpr std::string_view kSystemPrefix = "System: ";

Error encode_error(std::string message, std::string param) {
  return Error(ErrorKind::kBadRequest, std::move(message)).with_param(std::move(param));
}

class RequestEncoder {
 public:
  RequestEncoder(const ir::Request& request, const EncodeOptions& options, EncodeStats& stats,
                 std::string& out)
      : request_(request), options_(options), stats_(stats), out_(out), w_(out) {}

  Result<void> encode() {
    w_.raw(R"({"contents":[)");
    std::size_t leading_system = 0;
    while (leading_system < request_.messages.size() &&
           request_.messages[leading_system].role == ir::Role::kSystem) {
      ++leading_system;
    }
    std::size_t contents = 0;
    for (std::size_t i = leading_system; i < request_.messages.size(); ++i) {
      if (auto r = message(request_.messages[i], contents); !r) {
        return r;
      }
    }
    if (contents == 0) {
      return encode_error(
          "the request has no message with content; Gemini needs at least one Content", "messages");
    }
    w_.ch(']');
    if (auto r = system(leading_system); !r) {
      return r;
    }
    if (auto r = tools(); !r) {
      return r;
    }
    return generation_config();
  }

 private:
  Result<void> message(const ir::Message& m, std::size_t& contents) {
    ++message_;
    const std::size_t mark = out_.size();
    w_.raw(contents > 0 ? "," : "")
        .raw(m.role == ir::Role::kAssistant ? R"({"role":"model","parts":)"
                                            : R"({"role":"user","parts":)");
    std::size_t written = 0;
    if (m.role == ir::Role::kSystem) {
      // A system message mid-conversation: user text the model can tell apart.
      std::vector<ir::ContentPart> prefixed;
      for (const ir::ContentPart& p : m.content) {
        if (p.kind != ir::PartKind::kText) {
          return encode_error("only text can be translated in a system message", "messages");
        }
        prefixed.push_back(ir::ContentPart::make_text(std::string(kSystemPrefix) + p.text));
      }
      if (auto r = write(prefixed, written); !r) {
        return r;
      }
    } else {
      std::vector<ir::ContentPart> reordered;
      using Parts = std::span<const ir::ContentPart>;
      if (auto r = write(pair_results(m.content, reordered) ? Parts(reordered) : Parts(m.content),
                         written);
          !r) {
        return r;
      }
    }
    if (written == 0) {
      out_.resize(mark);  // Gemini rejects a Content without parts
      ++stats_.dropped_empty;
      return {};
    }
    w_.ch('}');
    ++contents;
    return {};
  }

  // Where a call is: its message and its position in it.
  struct CallAt {
    std::size_t message;
    std::size_t part;
  };
  // The order in which decode_request pairs responses of one name with calls: the latest
  // message with calls first, in order within it.
  static bool pairs_before(const CallAt& a, const CallAt& b) {
    return a.message != b.message ? a.message > b.message : a.part < b.part;
  }

  // Names the tool results of one message after the calls they answer (the latest call with
  // that id before the result: in an earlier message or earlier in this one), and, because
  // Gemini pairs a response with its call by name and order, puts results of the same name in
  // the order of their calls. True when `reordered` holds the message's parts in a new order.
  bool pair_results(std::span<const ir::ContentPart> content,
                    std::vector<ir::ContentPart>& reordered) {
    result_names_.clear();
    struct Slot {
      std::size_t at;
      std::string name;
      CallAt call;
      bool repeated;  // its call was answered before: order cannot tell which one it answers
    };
    std::vector<Slot> results;
    for (std::size_t i = 0; i < content.size(); ++i) {
      const ir::ContentPart& p = content[i];
      if (p.kind == ir::PartKind::kToolCall && !p.id.empty()) {
        calls_[p.id] = {p.name, {message_, i}};
      } else if (p.kind == ir::PartKind::kToolResult) {
        auto it = calls_.find(p.id);
        if (it != calls_.end()) {
          result_names_.try_emplace(p.id, it->second.first);
          const bool repeated = !answered_.insert(p.id).second;
          results.push_back({i, it->second.first, it->second.second, repeated});
        }
      }
    }
    // Names whose results are reordered: every one answers a call not answered before, made in
    // an earlier message. A call in this same message (a user turn that also calls: not a shape
    // Gemini produces) leaves its name's results as they are, since decoding pairs such results
    // by position and a reorder would not survive a second round trip.
    auto movable = [&](std::string_view name) {
      for (const Slot& r : results) {
        if (r.name == name && (r.repeated || r.call.message == message_)) {
          return false;
        }
      }
      return true;
    };
    bool ordered = true;
    for (std::size_t a = 0; a < results.size() && ordered; ++a) {
      for (std::size_t b = a + 1; b < results.size() && ordered; ++b) {
        ordered = results[a].name != results[b].name ||
                  !pairs_before(results[b].call, results[a].call) || !movable(results[a].name);
      }
    }
    if (ordered) {
      return false;
    }
    reordered.assign(content.begin(), content.end());
    std::vector<bool> placed(results.size(), false);
    for (std::size_t a = 0; a < results.size(); ++a) {
      if (placed[a] || !movable(results[a].name)) {
        continue;
      }
      std::vector<std::size_t> group;  // the results named like results[a], in part order
      for (std::size_t b = a; b < results.size(); ++b) {
        if (!placed[b] && results[b].name == results[a].name) {
          group.push_back(b);
          placed[b] = true;
        }
      }
      std::vector<std::size_t> by_call = group;
      std::stable_sort(by_call.begin(), by_call.end(), [&](std::size_t x, std::size_t y) {
        return pairs_before(results[x].call, results[y].call);
      });
      for (std::size_t j = 0; j < group.size(); ++j) {
        reordered[results[group[j]].at] = content[results[by_call[j]].at];
      }
    }
    return true;
  }

  Result<void> write(std::span<const ir::ContentPart> content, std::size_t& written) {
    auto lookup = [this](std::string_view id) -> std::string_view {
      auto it = result_names_.find(std::string(id));
      return it == result_names_.end() ? std::string_view() : std::string_view(it->second);
    };
    FunctionRef<std::string_view(std::string_view)> name_of(lookup);
    parts::WriteOptions o;
    o.error_kind = ErrorKind::kBadRequest;
    o.result_name = &name_of;
    parts::WriteStats ws;
    auto r = parts::write_parts(out_, content, o, ws, written);
    stats_.dropped_empty += ws.dropped_empty;
    stats_.dropped_redacted += ws.dropped_redacted;
    return r;
  }

  Result<void> system(std::size_t leading_system) {
    bool any = false;
    auto add = [&](const ir::ContentPart& p) -> Result<void> {
      if (p.kind != ir::PartKind::kText) {
        return encode_error("only text can be translated in a system prompt", "messages");
      }
      if (p.text.empty()) {
        return {};
      }
      w_.raw(any ? "," : R"(,"systemInstruction":{"parts":[)");
      w_.raw(R"({"text":)").string(p.text).ch('}');
      any = true;
      return {};
    };
    for (const ir::ContentPart& p : request_.system) {
      if (auto r = add(p); !r) {
        return r;
      }
    }
    for (std::size_t i = 0; i < leading_system; ++i) {
      for (const ir::ContentPart& p : request_.messages[i].content) {
        if (auto r = add(p); !r) {
          return r;
        }
      }
    }
    if (any) {
      w_.raw("]}");
    }
    return {};
  }

  Result<void> tools() {
    if (request_.tools.empty()) {
      return {};
    }
    w_.raw(R"(,"tools":[{"functionDeclarations":[)");
    for (std::size_t i = 0; i < request_.tools.size(); ++i) {
      const ir::Tool& t = request_.tools[i];
      const std::string param = "tools[" + std::to_string(i) + "]";
      if (t.name.empty()) {
        return encode_error("a tool needs a name", param);
      }
      w_.raw(i > 0 ? "," : "").raw(R"({"name":)").string(t.name);
      if (!t.description.empty()) {
        w_.raw(R"(,"description":)").string(t.description);
      }
      if (!t.parameters.empty() && t.parameters != kEmptySchema) {
        if (!wire::is_json_object(t.parameters)) {
          return encode_error("the parameters of tool '" + t.name + "' are not a JSON object",
                              param);
        }
        w_.raw(R"(,"parametersJsonSchema":)").raw(t.parameters);
      }
      w_.ch('}');
    }
    w_.raw("]}]");
    const ir::ToolChoice& choice = request_.tool_choice;
    std::string_view mode;
    switch (choice.mode) {
      case ir::ToolChoiceMode::kUnset:
        return {};
      case ir::ToolChoiceMode::kAuto:
        mode = "AUTO";
        break;
      case ir::ToolChoiceMode::kNone:
        mode = "NONE";
        break;
      case ir::ToolChoiceMode::kRequired:
      case ir::ToolChoiceMode::kNamed:
        mode = "ANY";
        break;
    }
    w_.raw(R"(,"toolConfig":{"functionCallingConfig":{"mode":)").string(mode);
    if (choice.mode == ir::ToolChoiceMode::kNamed) {
      w_.raw(R"(,"allowedFunctionNames":[)").string(choice.name).ch(']');
    }
    w_.raw("}}");
    return {};
  }

  Result<void> generation_config() {
    std::string g;
    codec::JsonWriter gw(g);
    auto field = [&](std::string_view key) -> codec::JsonWriter& {
      gw.raw(g.empty() ? "{" : ",");
      return gw.key(key);
    };
    if (request_.max_tokens) {
      field("maxOutputTokens").number(std::uint64_t{*request_.max_tokens});
    }
    if (request_.temperature) {
      field("temperature").number(*request_.temperature);
    }
    if (request_.top_p) {
      field("topP").number(*request_.top_p);
    }
    if (request_.top_k) {
      field("topK").number(std::uint64_t{*request_.top_k});
    }
    if (!request_.stop.empty()) {
      // The API takes at most 5 stop sequences; the first 5 are sent.
      field("stopSequences").ch('[');
      for (std::size_t i = 0; i < std::min<std::size_t>(request_.stop.size(), 5); ++i) {
        gw.raw(i > 0 ? "," : "").string(request_.stop[i]);
      }
      gw.ch(']');
    }
    const ir::Reasoning& r = request_.reasoning;
    if (r.enabled) {
      std::optional<std::uint32_t> budget = r.budget_tokens;
      if (!budget && !r.effort.empty()) {
        auto b = effort_budget(r.effort);
        if (!b) {
          return std::move(b).error();
        }
        budget = *b;
      }
      field("thinkingConfig").raw(R"({"includeThoughts":)").boolean(!budget || *budget > 0);
      if (budget) {
        gw.raw(R"(,"thinkingBudget":)").number(std::uint64_t{*budget});
      }
      gw.ch('}');
    } else if (r.budget_tokens && *r.budget_tokens == 0) {
      field("thinkingConfig").raw(R"({"thinkingBudget":0})");
    }
    const ir::ResponseFormat& f = request_.response_format;
    if (f.kind != ir::ResponseFormat::Kind::kText) {
      field("responseMimeType").string("application/json");
      if (f.kind == ir::ResponseFormat::Kind::kJsonSchema && !f.schema.empty()) {
        field("responseJsonSchema").raw(f.schema);
      }
    }
    if (!g.empty()) {
      w_.raw(R"(,"generationConfig":)").raw(g).ch('}');
    }
    w_.ch('}');
    return {};
  }

  Result<std::uint32_t> effort_budget(std::string_view effort) const {
    const EffortBudgets& b = options_.effort_budgets;
    if (effort == "none") {
      return 0u;
    }
    if (effort == "minimal") {
      return b.minimal;
    }
    if (effort == "low") {
      return b.low;
    }
    if (effort == "medium") {
      return b.medium;
    }
    if (effort == "high") {
      return b.high;
    }
    if (effort == "xhigh") {
      return b.xhigh;
    }
    return encode_error("reasoning effort '" + std::string(effort) +
                            "' is not known; use minimal, low, medium, high or xhigh",
                        "reasoning_effort");
  }

  const ir::Request& request_;
  const EncodeOptions& options_;
  EncodeStats& stats_;
  std::string& out_;
  codec::JsonWriter w_;
  // IR id -> (function name, where the call is), calls seen so far.
  std::unordered_map<std::string, std::pair<std::string, CallAt>> calls_;
  std::size_t message_ = 0;                                    // index of the message being written
  std::unordered_map<std::string, std::string> result_names_;  // this message's results
  std::unordered_set<std::string> answered_;                   // call ids answered so far
};

}  // namespace

Result<std::string> encode_request(const ir::Request& request, const EncodeOptions& options,
                                   EncodeStats* stats) {
  EncodeStats local;
  std::string out;
  std::size_t estimate = 256;
  for (const ir::Message& m : request.messages) {
    for (const ir::ContentPart& p : m.content) {
      estimate += 48 + p.text.size() + p.arguments.size() + p.source.size() + p.signature.size();
    }
  }
  out.reserve(estimate);
  RequestEncoder encoder(request, options, stats != nullptr ? *stats : local, out);
  if (auto r = encoder.encode(); !r) {
    return std::move(r).error();
  }
  return out;
}

}  // namespace sluice::protocol::gemini
