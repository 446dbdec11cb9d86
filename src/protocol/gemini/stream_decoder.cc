#include "protocol/gemini/stream_decoder.h"

#include "codec/json_compact.h"
#include "codec/json_read.h"
#include "protocol/gemini/conventions.h"
#include "protocol/gemini/wire_json.h"

namespace sluice::protocol::gemini {
namespace json = boost::json;
using wire::member;
using wire::string_member;

namespace {

ir::StreamEvent make(ir::StreamEventKind kind) {
  ir::StreamEvent e;
  e.kind = kind;
  return e;
}

ir::StreamEvent make_text(ir::StreamEventKind kind, std::string_view text) {
  ir::StreamEvent e = make(kind);
  e.text.assign(text);
  return e;
}

bool space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

}  // namespace

std::string_view chunk_text(const codec::SseEvent& event) {
  if (event.has_data) {
    return event.data;
  }
  std::string_view raw = event.raw;
  while (!raw.empty() && space(raw.front())) {
    raw.remove_prefix(1);
  }
  while (!raw.empty() && space(raw.back())) {
    raw.remove_suffix(1);
  }
  return raw.starts_with('{') ? raw : std::string_view();
}

void StreamDecoder::on_event(const codec::SseEvent& event, std::vector<ir::StreamEvent>& out) {
  if (finished_) {
    return;
  }
  const std::string_view text = chunk_text(event);
  if (text.empty()) {
    return;
  }
  {
    boost::system::error_code ec;
    json::value doc = codec::parse_json(text, ec, json::storage_ptr(&mr_), kMaxJsonDepth);
    if (ec || !doc.is_object()) {
      fail("cannot translate a stream chunk that is not a JSON object", out);
    } else {
      chunk(doc.get_object(), out);
    }
  }
  mr_.release();
}

void StreamDecoder::on_end(std::vector<ir::StreamEvent>& out) {
  if (finished_) {
    return;
  }
  if (answered_) {
    out.push_back(make(ir::StreamEventKind::kDone));
    finished_ = true;
    return;
  }
  fail("upstream stream ended before a finishReason", out);
}

void StreamDecoder::chunk(const json::object& o, std::vector<ir::StreamEvent>& out) {
  if (auto error = wire::upstream_error(o)) {
    fail(std::move(*error), out);
    return;
  }
  drift_.fields(o, wire::known::kResponse, /*snake_case=*/true);
  if (!started_) {
    started_ = true;
    response_id_.assign(string_member(o, "responseId").value_or(""));
    ir::StreamEvent start = make(ir::StreamEventKind::kStart);
    start.id = response_id_;
    start.model.assign(string_member(o, "modelVersion").value_or(""));
    out.push_back(std::move(start));
  }
  // Usage before the chunk's content: Gemini states promptTokenCount from the first chunk on,
  // so a caller whose protocol reports input usage up front (Anthropic's message_start) gets
  // the upstream's figure rather than the gateway's estimate.
  if (const json::value* u = member(o, "usageMetadata")) {
    auto usage = wire::ir_usage(*u);
    if (!usage) {
      fail(std::move(usage).error(), out);
      return;
    }
    drift_.fields(u->get_object(), wire::known::kUsage, true);
    if (!usage_ || *usage_ != *usage) {
      usage_ = *usage;
      ir::StreamEvent e = make(ir::StreamEventKind::kUsage);
      e.usage = *usage;
      out.push_back(std::move(e));
    }
  }
  ir::FinishReason finish = ir::FinishReason::kUnset;
  const json::value* candidates = member(o, "candidates");
  if (candidates != nullptr) {
    if (!candidates->is_array() || candidates->get_array().size() > 1) {
      fail("cannot translate a chunk with other than one candidate", out);
      return;
    }
    if (!candidates->get_array().empty()) {
      const json::value& c = candidates->get_array().front();
      if (!c.is_object()) {
        fail("cannot translate a candidate that is not an object", out);
        return;
      }
      if (!candidate(c.get_object(), out)) {
        return;
      }
      finish = finish_reason(string_member(c.get_object(), "finishReason").value_or(""),
                             calls_ > 0);
    }
  } else {
    bool bad = false;
    const json::object* feedback = wire::object_member(o, "promptFeedback", bad);
    if (auto reason = feedback != nullptr ? string_member(*feedback, "blockReason")
                                          : std::nullopt) {
      finish = block_reason(*reason);
    }
  }
  if (finish != ir::FinishReason::kUnset && !answered_) {
    answered_ = true;
    ir::StreamEvent e = make(ir::StreamEventKind::kFinish);
    e.finish = finish;
    out.push_back(std::move(e));
  }
}

bool StreamDecoder::candidate(const json::object& c, std::vector<ir::StreamEvent>& out) {
  drift_.fields(c, wire::known::kCandidate, true);
  bool bad = false;
  const json::object* content = wire::object_member(c, "content", bad);
  if (bad) {
    fail("cannot translate a candidate whose content is not an object", out);
    return false;
  }
  if (content != nullptr) {
    drift_.fields(*content, wire::known::kContent, true);
  }
  const json::value* parts = content != nullptr ? member(*content, "parts") : nullptr;
  if (parts == nullptr) {
    return true;
  }
  if (!parts->is_array()) {
    fail("cannot translate a candidate whose parts are not a list", out);
    return false;
  }
  for (const json::value& p : parts->get_array()) {
    if (!part(p, out)) {
      return false;
    }
  }
  return true;
}

bool StreamDecoder::part(const json::value& v, std::vector<ir::StreamEvent>& out) {
  if (!v.is_object()) {
    fail("cannot translate a part that is not an object", out);
    return false;
  }
  const json::object& p = v.get_object();
  const json::value* sig = member(p, "thoughtSignature");
  const json::value* thought = member(p, "thought");
  const json::value* text = member(p, "text");
  const json::value* call = member(p, "functionCall");
  if ((sig != nullptr && !sig->is_string()) || (thought != nullptr && !thought->is_bool()) ||
      (text != nullptr && !text->is_string())) {
    fail("cannot translate a part with mistyped text, thought or thoughtSignature", out);
    return false;
  }
  const std::string_view signature =
      sig != nullptr ? std::string_view(sig->get_string().data(), sig->get_string().size())
                     : std::string_view();
  const bool is_thought = thought != nullptr && thought->get_bool();
  const bool has_content = (text != nullptr && !text->get_string().empty()) || call != nullptr;
  if (answered_ && (has_content || !signature.empty())) {
    fail("cannot translate content after the finishReason", out);
    return false;
  }
  // A signature signs the thinking before it: after a thought part's own text, before any
  // other part's content.
  if (!signature.empty() && !is_thought) {
    out.push_back(make_text(ir::StreamEventKind::kReasoningSignature, signature));
  }
  if (text != nullptr) {
    const std::string_view t(text->get_string().data(), text->get_string().size());
    if (!t.empty()) {
      out.push_back(make_text(
          is_thought ? ir::StreamEventKind::kReasoningDelta : ir::StreamEventKind::kTextDelta, t));
    }
  } else if (call != nullptr) {
    const json::object* fc = call->is_object() ? &call->get_object() : nullptr;
    if (fc == nullptr || member(*fc, "partialArgs") != nullptr ||
        member(*fc, "willContinue") != nullptr) {
      fail("cannot translate a streamed functionCall (partialArgs / willContinue)", out);
      return false;
    }
    auto name = string_member(*fc, "name");
    const json::value* args = member(*fc, "args");
    if (!name || name->empty() || (args != nullptr && !args->is_object())) {
      fail("cannot translate a functionCall without a name or with args that are not an object",
           out);
      return false;
    }
    ir::StreamEvent start = make(ir::StreamEventKind::kToolCallStart);
    start.index = calls_;
    start.name.assign(*name);
    const auto given = string_member(*fc, "id");
    start.id = given && !given->empty() ? std::string(*given) : answer_call_id(response_id_, calls_);
    out.push_back(std::move(start));
    ir::StreamEvent delta = make(ir::StreamEventKind::kToolCallDelta);
    delta.index = calls_;
    if (args == nullptr) {
      delta.text = "{}";
    } else {
      codec::append_compact_json(delta.text, *args);
    }
    out.push_back(std::move(delta));
    ++calls_;
  } else {
    for (const json::key_value_pair& kv : p) {
      const std::string_view key(kv.key().data(), kv.key().size());
      if (key != "thoughtSignature" && key != "thought_signature" && key != "thought" &&
          !kv.value().is_null()) {
        fail("cannot translate a part of type '" + std::string(key) + "'", out);
        return false;
      }
    }
  }
  if (!signature.empty() && is_thought) {
    out.push_back(make_text(ir::StreamEventKind::kReasoningSignature, signature));
  }
  drift_.fields(p, wire::known::kPart, true);
  return true;
}

void StreamDecoder::fail(Error error, std::vector<ir::StreamEvent>& out) {
  ir::StreamEvent e = make(ir::StreamEventKind::kError);
  e.error = std::move(error);
  out.push_back(std::move(e));
  finished_ = true;
}

void StreamDecoder::fail(std::string message, std::vector<ir::StreamEvent>& out) {
  fail(Error(ErrorKind::kUpstreamProtocol, std::move(message)), out);
}

}  // namespace sluice::protocol::gemini
