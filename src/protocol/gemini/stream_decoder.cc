#include "protocol/gemini/stream_decoder.h"

#include <array>
#include <utility>

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/monotonic_resource.hpp>

#include "codec/json_compact.h"
#include "codec/json_read.h"
#include "codec/json_sax.h"
#include "protocol/gemini/conventions.h"
#include "protocol/gemini/wire_json.h"

namespace sluice::protocol::gemini {
namespace json = boost::json;
using boost::system::error_code;
using wire::member;
using wire::string_member;

namespace {

// ---- the SAX pass ----

// Where the parser is. Anything not listed is kSkip, and so are all its children: the fields a
// chunk does not need (safetyRatings, promptTokensDetails, citationMetadata) cost a scan only.
enum class Frame : std::uint8_t {
  kRoot,
  kCandidates,
  kCandidate,
  kContent,
  kParts,
  kPart,
  kUsage,
  kSkip,
};

// The fields the decoder reads, per level (below 32: each is a bit of a seen-mask).
enum class Key : std::uint8_t {
  kOther,
  kCandidates,
  kUsageMetadata,
  kModelVersion,
  kResponseId,
  kPromptFeedback,
  kError,
  kContent,
  kFinishReason,
  kParts,
  kText,
  kThought,
  kThoughtSignature,
  kFunctionCall,
  kPromptTokenCount,
  kCachedContentTokenCount,
  kCandidatesTokenCount,
  kThoughtsTokenCount,
  kToolUsePromptTokenCount,
  kTotalTokenCount,
};

Key key_if(std::string_view k, std::string_view name, Key key) {
  return k == name ? key : Key::kOther;
}

// Switching on the length first leaves at most one candidate per key: this runs for every key
// of every chunk.
Key key_of(Frame level, std::string_view k) {
  switch (level) {
    case Frame::kRoot:
      switch (k.size()) {
        case 5:
          return key_if(k, "error", Key::kError);
        case 10:
          return k == "candidates" ? Key::kCandidates : key_if(k, "responseId", Key::kResponseId);
        case 12:
          return key_if(k, "modelVersion", Key::kModelVersion);
        case 13:
          return key_if(k, "usageMetadata", Key::kUsageMetadata);
        case 14:
          return key_if(k, "promptFeedback", Key::kPromptFeedback);
        default:
          return Key::kOther;
      }
    case Frame::kCandidate:
      return k.size() == 7 ? key_if(k, "content", Key::kContent)
                           : key_if(k, "finishReason", Key::kFinishReason);
    case Frame::kContent:
      return key_if(k, "parts", Key::kParts);
    case Frame::kPart:
      switch (k.size()) {
        case 4:
          return key_if(k, "text", Key::kText);
        case 7:
          return key_if(k, "thought", Key::kThought);
        case 12:
          return key_if(k, "functionCall", Key::kFunctionCall);
        case 16:
          return key_if(k, "thoughtSignature", Key::kThoughtSignature);
        default:
          return Key::kOther;
      }
    case Frame::kUsage:
      switch (k.size()) {
        case 15:
          return key_if(k, "totalTokenCount", Key::kTotalTokenCount);
        case 16:
          return key_if(k, "promptTokenCount", Key::kPromptTokenCount);
        case 18:
          return key_if(k, "thoughtsTokenCount", Key::kThoughtsTokenCount);
        case 20:
          return key_if(k, "candidatesTokenCount", Key::kCandidatesTokenCount);
        case 23:
          return k == "cachedContentTokenCount"
                     ? Key::kCachedContentTokenCount
                     : key_if(k, "toolUsePromptTokenCount", Key::kToolUsePromptTokenCount);
        default:
          return Key::kOther;
      }
    default:
      return Key::kOther;
  }
}

FieldNames known_of(Frame level) {
  switch (level) {
    case Frame::kRoot:
      return wire::known::kResponse;
    case Frame::kCandidate:
      return wire::known::kCandidate;
    case Frame::kContent:
      return wire::known::kContent;
    case Frame::kPart:
      return wire::known::kPart;
    case Frame::kUsage:
      return wire::known::kUsage;
    default:
      return {};
  }
}

// The distinct unknown members of one object in order of first appearance (the order of a
// Boost.JSON object, which keeps the first position of a repeated key), in reused strings.
struct Names {
  std::vector<std::string> names;
  std::size_t size = 0;

  void clear() { size = 0; }
  void add(std::string_view name) {
    for (std::size_t i = 0; i < size; ++i) {
      if (names[i] == name) {
        return;
      }
    }
    if (size == names.size()) {
      names.emplace_back(name);
    } else {
      names[size].assign(name);
    }
    ++size;
  }
  void count(Drift& drift) const {
    for (std::size_t i = 0; i < size; ++i) {
      drift.unknown(names[i]);
    }
  }
};

// A string value: a view of the chunk's own bytes when the parser hands it out whole (no
// escapes, not split), else a copy in a buffer reused from chunk to chunk.
struct Text {
  std::string_view view;
  std::string buf;

  void clear() { view = {}; }
};

// A text (or thought) part: the only kind the SAX pass takes.
struct TextPart {
  bool has_text = false;
  bool thought = false;
  Text text;
  Text signature;
  Names unknown;

  void reset() {
    has_text = false;
    thought = false;
    text.clear();
    signature.clear();
    unknown.clear();
  }
};

// What one chunk says, in buffers reused from chunk to chunk.
struct Chunk {
  bool root_is_object = false;
  bool needs_dom = false;
  Text response_id;
  Text model;
  bool has_usage = false;
  WireUsage usage;
  bool has_candidates = false;
  std::size_t candidate_count = 0;
  bool has_content = false;
  bool has_prompt_feedback = false;
  Text finish_reason;
  std::vector<TextPart> parts;  // [0, part_count) are this chunk's
  std::size_t part_count = 0;
  Names root_unknown;
  Names usage_unknown;
  Names candidate_unknown;
  Names content_unknown;

  void reset() {
    root_is_object = false;
    needs_dom = false;
    response_id.clear();
    model.clear();
    has_usage = false;
    usage = {};
    has_candidates = false;
    candidate_count = 0;
    has_content = false;
    has_prompt_feedback = false;
    finish_reason.clear();
    part_count = 0;
    root_unknown.clear();
    usage_unknown.clear();
    candidate_unknown.clear();
    content_unknown.clear();
  }

  TextPart& add_part() {
    if (part_count == parts.size()) {
      parts.emplace_back();
    }
    TextPart& p = parts[part_count++];
    p.reset();
    return p;
  }
};

// SAX handler for boost::json::basic_parser: fills a Chunk, or sets needs_dom and stops at the
// first thing outside the shape it takes.
class ChunkHandler : public codec::SaxHandlerBase {
 public:
  Chunk chunk;

  // `input`: the text about to be parsed, which string views may point into.
  void reset(std::string_view input) {
    chunk.reset();
    input_ = input;
    depth_ = 0;
    key_ = Key::kOther;
    key_buf_.clear();
    target_ = nullptr;
    in_string_ = false;
    part_ = nullptr;
  }

  bool on_object_begin(error_code& ec) {
    if (depth_ == 0) {
      chunk.root_is_object = true;
      return push(Frame::kRoot, ec);
    }
    switch (top()) {
      case Frame::kRoot:
        if (key_ == Key::kUsageMetadata) {
          chunk.has_usage = true;
          return push(Frame::kUsage, ec);
        }
        if (key_ == Key::kPromptFeedback) {
          return push(Frame::kSkip, ec);  // read only without candidates: by the DOM pass
        }
        break;
      case Frame::kCandidates:
        if (++chunk.candidate_count > 1) {
          return dom(ec);
        }
        return push(Frame::kCandidate, ec);
      case Frame::kCandidate:
        if (key_ == Key::kContent) {
          chunk.has_content = true;
          return push(Frame::kContent, ec);
        }
        break;
      case Frame::kParts:
        part_ = &chunk.add_part();
        return push(Frame::kPart, ec);
      default:
        break;
    }
    return unread(ec);
  }
  bool on_object_end(std::size_t, error_code&) {
    --depth_;
    return true;
  }
  bool on_array_begin(error_code& ec) {
    if (depth_ == 0) {
      return push(Frame::kSkip, ec);  // not an object: the DOM pass words the error
    }
    switch (top()) {
      case Frame::kRoot:
        if (key_ == Key::kCandidates) {
          chunk.has_candidates = true;
          return push(Frame::kCandidates, ec);
        }
        break;
      case Frame::kContent:
        if (key_ == Key::kParts) {
          return push(Frame::kParts, ec);
        }
        break;
      default:
        break;
    }
    return unread(ec);
  }
  bool on_array_end(std::size_t, error_code&) {
    --depth_;
    return true;
  }

  bool on_key_part(json::string_view s, std::size_t, error_code&) {
    if (top() != Frame::kSkip) {
      key_buf_.append(s.data(), s.size());
    }
    return true;
  }
  bool on_key(json::string_view s, std::size_t, error_code& ec) {
    if (top() == Frame::kSkip) {
      return true;
    }
    if (key_buf_.empty()) {
      return key(std::string_view(s.data(), s.size()), ec);
    }
    key_buf_.append(s.data(), s.size());
    const bool ok = key(key_buf_, ec);
    key_buf_.clear();
    return ok;
  }

  bool on_string_part(json::string_view s, std::size_t, error_code& ec) {
    if (!in_string_) {
      in_string_ = true;
      if (!string_target(ec)) {
        return false;
      }
      if (target_ != nullptr) {
        target_->buf.clear();
      }
    }
    if (target_ != nullptr) {
      target_->buf.append(s.data(), s.size());
    }
    return true;
  }
  bool on_string(json::string_view s, std::size_t, error_code& ec) {
    if (in_string_) {
      if (target_ != nullptr) {
        target_->buf.append(s.data(), s.size());
        target_->view = target_->buf;
      }
    } else {
      if (!string_target(ec)) {
        return false;
      }
      if (target_ != nullptr) {
        if (s.data() >= input_.data() && s.data() + s.size() <= input_.data() + input_.size()) {
          target_->view = std::string_view(s.data(), s.size());
        } else {
          target_->buf.assign(s.data(), s.size());  // unescaped into the parser's own buffer
          target_->view = target_->buf;
        }
      }
    }
    in_string_ = false;
    target_ = nullptr;
    return true;
  }

  bool on_int64(std::int64_t v, json::string_view, error_code& ec) {
    if (v < 0) {
      return scalar(ec);
    }
    return count(static_cast<std::uint64_t>(v), ec);
  }
  bool on_uint64(std::uint64_t v, json::string_view, error_code& ec) { return count(v, ec); }
  bool on_double(double, json::string_view, error_code& ec) { return scalar(ec); }
  bool on_bool(bool v, error_code& ec) {
    if (depth_ > 0 && top() == Frame::kPart && key_ == Key::kThought) {
      part_->thought = v;
      return true;
    }
    return scalar(ec);
  }
  // null is an absent member (wire::member), except as a candidate or a part.
  bool on_null(error_code& ec) {
    if (depth_ > 0 && (top() == Frame::kCandidates || top() == Frame::kParts)) {
      return dom(ec);
    }
    return true;
  }

 private:
  Frame top() const { return frames_[depth_ - 1]; }

  bool push(Frame f, error_code& ec) {
    if (depth_ >= frames_.size()) {
      ec = json::error::too_deep;
      return false;
    }
    frames_[depth_] = f;
    seen_[depth_] = 0;
    ++depth_;
    return true;
  }

  // A container the pass does not read: skipped when it is the value of a field not read here,
  // the DOM pass's otherwise (a mistyped field, a candidate or part that is not an object).
  bool unread(error_code& ec) {
    const Frame level = top();
    if (level == Frame::kSkip ||
        (level != Frame::kCandidates && level != Frame::kParts && key_ == Key::kOther)) {
      return push(Frame::kSkip, ec);
    }
    return dom(ec);
  }

  // Stops the pass: the DOM reads this chunk.
  bool dom(error_code& ec) {
    chunk.needs_dom = true;
    ec = json::error::exception;
    return false;
  }

  bool key(std::string_view k, error_code& ec) {
    const Frame level = top();
    // A snake_case spelling of a field read here (proto3 JSON accepts both) or an error object:
    // the DOM pass knows the precedence rules.
    if (k.find('_') != std::string_view::npos) {
      return dom(ec);
    }
    key_ = key_of(level, k);
    if (key_ == Key::kOther) {
      if (!Drift::is_known(k, known_of(level))) {
        unknown_of(level).add(k);
      }
      return true;
    }
    if (key_ == Key::kError) {
      return dom(ec);
    }
    const std::uint32_t bit = 1U << static_cast<unsigned>(key_);
    if ((seen_[depth_ - 1] & bit) != 0) {
      return dom(ec);  // a repeated field: the last one wins, which the DOM knows
    }
    seen_[depth_ - 1] |= bit;
    if (key_ == Key::kPromptFeedback) {
      chunk.has_prompt_feedback = true;
    }
    return true;
  }

  Names& unknown_of(Frame level) {
    switch (level) {
      case Frame::kRoot:
        return chunk.root_unknown;
      case Frame::kCandidate:
        return chunk.candidate_unknown;
      case Frame::kContent:
        return chunk.content_unknown;
      case Frame::kUsage:
        return chunk.usage_unknown;
      default:
        return part_->unknown;
    }
  }

  // Where a string value goes; false (the DOM pass) when the field is not a string field.
  bool string_target(error_code& ec) {
    target_ = nullptr;
    if (depth_ == 0) {
      return true;  // a scalar document: not an object
    }
    switch (top()) {
      case Frame::kRoot:
        if (key_ == Key::kResponseId) {
          target_ = &chunk.response_id;
        } else if (key_ == Key::kModelVersion) {
          target_ = &chunk.model;
        }
        break;
      case Frame::kCandidate:
        if (key_ == Key::kFinishReason) {
          target_ = &chunk.finish_reason;
        }
        break;
      case Frame::kPart:
        if (key_ == Key::kText) {
          part_->has_text = true;
          target_ = &part_->text;
        } else if (key_ == Key::kThoughtSignature) {
          target_ = &part_->signature;
        }
        break;
      case Frame::kSkip:
        return true;
      default:
        break;
    }
    return target_ != nullptr || scalar(ec);
  }

  bool count(std::uint64_t n, error_code& ec) {
    if (depth_ == 0 || top() != Frame::kUsage) {
      return scalar(ec);
    }
    WireUsage& u = chunk.usage;
    switch (key_) {
      case Key::kPromptTokenCount:
        u.prompt = n;
        return true;
      case Key::kCachedContentTokenCount:
        u.cached_content = n;
        return true;
      case Key::kCandidatesTokenCount:
        u.candidates = n;
        return true;
      case Key::kThoughtsTokenCount:
        u.thoughts = n;
        return true;
      case Key::kToolUsePromptTokenCount:
        u.tool_use_prompt = n;
        return true;
      case Key::kTotalTokenCount:
        u.total = n;
        return true;
      default:
        return true;
    }
  }

  // A value (other than null) of no use here: fine in an unread field, anything else (a
  // mistyped field, a candidate or part that is not an object) is the DOM pass's to word.
  bool scalar(error_code& ec) {
    if (depth_ == 0) {
      return true;
    }
    const Frame level = top();
    if (level == Frame::kSkip ||
        (level != Frame::kCandidates && level != Frame::kParts && key_ == Key::kOther)) {
      return true;
    }
    return dom(ec);
  }

  std::array<Frame, kMaxJsonDepth + 1> frames_{};
  std::array<std::uint32_t, kMaxJsonDepth + 1> seen_{};
  std::size_t depth_ = 0;
  Key key_ = Key::kOther;
  std::string key_buf_;
  Text* target_ = nullptr;
  bool in_string_ = false;
  TextPart* part_ = nullptr;
  std::string_view input_;
};

json::parse_options chunk_parse_options() {
  json::parse_options opts;
  opts.max_depth = kMaxJsonDepth;
  return opts;
}

// ---- both passes ----

ir::StreamEvent& add(std::vector<ir::StreamEvent>& out, ir::StreamEventKind kind) {
  ir::StreamEvent& e = out.emplace_back();
  e.kind = kind;
  return e;
}

void add_text(std::vector<ir::StreamEvent>& out, ir::StreamEventKind kind, std::string_view text) {
  add(out, kind).text.assign(text);
}

// A text or thought part: a signature signs the thinking before it, so it goes after a thought
// part's own text and before any other part's content.
void text_part(std::string_view text, bool thought, std::string_view signature,
               std::vector<ir::StreamEvent>& out) {
  if (!signature.empty() && !thought) {
    add_text(out, ir::StreamEventKind::kReasoningSignature, signature);
  }
  if (!text.empty()) {
    add_text(out, thought ? ir::StreamEventKind::kReasoningDelta : ir::StreamEventKind::kTextDelta,
             text);
  }
  if (!signature.empty() && thought) {
    add_text(out, ir::StreamEventKind::kReasoningSignature, signature);
  }
}

bool space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

}  // namespace

class StreamDecoder::FastParser {
 public:
  FastParser() : parser_(chunk_parse_options()) {}

  // Reads one chunk; false when it needs the DOM pass (or is not JSON at all).
  bool parse(std::string_view text) {
    parser_.reset();
    parser_.handler().reset(text);
    error_code ec;
    const std::size_t used = parser_.write_some(false, text.data(), text.size(), ec);
    const Chunk& c = parser_.handler().chunk;
    return !ec && used == text.size() && c.root_is_object && !c.needs_dom;
  }

  const Chunk& chunk() const { return parser_.handler().chunk; }

 private:
  json::basic_parser<ChunkHandler> parser_;
};

struct StreamDecoder::Dom {
  unsigned char arena[8192];
  json::monotonic_resource mr{arena, sizeof arena};
};

StreamDecoder::StreamDecoder() : fast_(std::make_unique<FastParser>()) {}
StreamDecoder::~StreamDecoder() = default;

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
  if (!fast_chunk(text, out)) {
    dom_chunk(text, out);
  }
}

void StreamDecoder::on_end(std::vector<ir::StreamEvent>& out) {
  if (finished_) {
    return;
  }
  if (answered_) {
    add(out, ir::StreamEventKind::kDone);
    finished_ = true;
    return;
  }
  fail("upstream stream ended before a finishReason", out);
}

void StreamDecoder::start(std::string_view id, std::string_view model,
                          std::vector<ir::StreamEvent>& out) {
  started_ = true;
  response_id_.assign(id);
  ir::StreamEvent& e = add(out, ir::StreamEventKind::kStart);
  e.id.assign(id);
  e.model.assign(model);
}

void StreamDecoder::usage(const ir::Usage& usage, std::vector<ir::StreamEvent>& out) {
  if (!usage_ || *usage_ != usage) {
    usage_ = usage;
    add(out, ir::StreamEventKind::kUsage).usage = usage;
  }
}

void StreamDecoder::finish(ir::FinishReason finish, std::vector<ir::StreamEvent>& out) {
  if (finish != ir::FinishReason::kUnset && !answered_) {
    answered_ = true;
    add(out, ir::StreamEventKind::kFinish).finish = finish;
  }
}

bool StreamDecoder::fast_chunk(std::string_view text, std::vector<ir::StreamEvent>& out) {
  if (!fast_->parse(text)) {
    return false;
  }
  const Chunk& c = fast_->chunk();
  // What only the DOM pass decides: promptFeedback without a candidate, a part other than text,
  // content after the finishReason, usage the IR cannot hold.
  if (c.has_prompt_feedback && !c.has_candidates) {
    return false;
  }
  for (std::size_t i = 0; i < c.part_count; ++i) {
    const TextPart& p = c.parts[i];
    if (!p.has_text || (answered_ && (!p.text.view.empty() || !p.signature.view.empty()))) {
      return false;
    }
  }
  std::optional<ir::Usage> chunk_usage;
  if (c.has_usage) {
    auto u = from_wire_usage(c.usage);
    if (!u) {
      return false;
    }
    chunk_usage = *u;
  }
  // From here on as chunk() does it, in the same order (drift included).
  c.root_unknown.count(drift_);
  if (!started_) {
    start(c.response_id.view, c.model.view, out);
  }
  if (chunk_usage) {
    c.usage_unknown.count(drift_);
    usage(*chunk_usage, out);
  }
  ir::FinishReason reason = ir::FinishReason::kUnset;
  if (c.candidate_count == 1) {
    c.candidate_unknown.count(drift_);
    if (c.has_content) {
      c.content_unknown.count(drift_);
    }
    for (std::size_t i = 0; i < c.part_count; ++i) {
      const TextPart& p = c.parts[i];
      text_part(p.text.view, p.thought, p.signature.view, out);
      p.unknown.count(drift_);
    }
    reason = finish_reason(c.finish_reason.view, calls_ > 0);
  }
  finish(reason, out);
  return true;
}

void StreamDecoder::dom_chunk(std::string_view text, std::vector<ir::StreamEvent>& out) {
  if (!dom_) {
    dom_ = std::make_unique<Dom>();
  }
  {
    error_code ec;
    json::value doc = codec::parse_json(text, ec, json::storage_ptr(&dom_->mr), kMaxJsonDepth);
    if (ec || !doc.is_object()) {
      fail("cannot translate a stream chunk that is not a JSON object", out);
    } else {
      chunk(doc.get_object(), out);
    }
  }
  dom_->mr.release();
}

void StreamDecoder::chunk(const json::object& o, std::vector<ir::StreamEvent>& out) {
  if (auto error = wire::upstream_error(o)) {
    fail(std::move(*error), out);
    return;
  }
  drift_.fields(o, wire::known::kResponse, /*snake_case=*/true);
  if (!started_) {
    start(string_member(o, "responseId").value_or(""),
          string_member(o, "modelVersion").value_or(""), out);
  }
  // Usage before the chunk's content: Gemini states promptTokenCount from the first chunk on,
  // so a caller whose protocol reports input usage up front (Anthropic's message_start) gets
  // the upstream's figure rather than the gateway's estimate.
  if (const json::value* u = member(o, "usageMetadata")) {
    auto chunk_usage = wire::ir_usage(*u);
    if (!chunk_usage) {
      fail(std::move(chunk_usage).error(), out);
      return;
    }
    drift_.fields(u->get_object(), wire::known::kUsage, true);
    usage(*chunk_usage, out);
  }
  ir::FinishReason reason = ir::FinishReason::kUnset;
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
      reason =
          finish_reason(string_member(c.get_object(), "finishReason").value_or(""), calls_ > 0);
    }
  } else {
    bool bad = false;
    const json::object* feedback = wire::object_member(o, "promptFeedback", bad);
    if (auto block = feedback != nullptr ? string_member(*feedback, "blockReason") : std::nullopt) {
      reason = block_reason(*block);
    }
  }
  finish(reason, out);
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
  if (text != nullptr) {
    text_part(std::string_view(text->get_string().data(), text->get_string().size()), is_thought,
              signature, out);
    drift_.fields(p, wire::known::kPart, true);
    return true;
  }
  if (!signature.empty() && !is_thought) {
    add_text(out, ir::StreamEventKind::kReasoningSignature, signature);
  }
  if (call != nullptr) {
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
    ir::StreamEvent& call_start = add(out, ir::StreamEventKind::kToolCallStart);
    call_start.index = calls_;
    call_start.name.assign(*name);
    const auto given = string_member(*fc, "id");
    call_start.id =
        given && !given->empty() ? std::string(*given) : answer_call_id(response_id_, calls_);
    ir::StreamEvent& delta = add(out, ir::StreamEventKind::kToolCallDelta);
    delta.index = calls_;
    if (args == nullptr) {
      delta.text = "{}";
    } else {
      codec::append_compact_json(delta.text, *args);
    }
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
    add_text(out, ir::StreamEventKind::kReasoningSignature, signature);
  }
  drift_.fields(p, wire::known::kPart, true);
  return true;
}

void StreamDecoder::fail(Error error, std::vector<ir::StreamEvent>& out) {
  add(out, ir::StreamEventKind::kError).error = std::move(error);
  finished_ = true;
}

void StreamDecoder::fail(std::string message, std::vector<ir::StreamEvent>& out) {
  fail(Error(ErrorKind::kUpstreamProtocol, std::move(message)), out);
}

}  // namespace sluice::protocol::gemini
