#include "protocol/openai_chat/stream_decoder.h"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <limits>
#include <utility>

#include <boost/json/basic_parser_impl.hpp>

#include "codec/json_sax.h"
#include "protocol/drift.h"
#include "protocol/openai_chat/conventions.h"
#include "protocol/openai_chat/errors.h"
#include "protocol/openai_chat/known_fields.h"

namespace sluice::protocol::openai_chat {
namespace json = boost::json;
using boost::system::error_code;

namespace {

constexpr std::size_t kMaxDepth = 64;

// Where the parser is. Anything not listed is kSkip, and so are all its children, so the
// fields a chunk does not need (logprobs, obfuscation, annotations) cost a scan only.
enum class Frame : std::uint8_t {
  kRoot,
  kChoices,
  kChoice,
  kDelta,
  kToolCalls,
  kToolCall,
  kFunction,
  kUsage,
  kPromptDetails,
  kCompletionDetails,
  kError,
  kSkip,
};

enum class Key : std::uint8_t {
  kOther,
  kId,
  kModel,
  kObject,
  kChoices,
  kUsage,
  kError,
  kIndex,
  kDelta,
  kFinishReason,
  kContent,
  kReasoning,  // reasoning_content or reasoning
  kRefusal,
  kToolCalls,
  kFunction,
  kName,
  kArguments,
  kPromptTokens,
  kCompletionTokens,
  kPromptTokensDetails,
  kCompletionTokensDetails,
  kCachedTokens,
  kReasoningTokens,
  kMessage,
  kType,
  kCode,
  kParam,
};

using KeyName = std::pair<std::string_view, Key>;

Key match(std::string_view k, std::initializer_list<KeyName> names) {
  for (const KeyName& n : names) {
    if (k == n.first) {
      return n.second;
    }
  }
  return Key::kOther;
}

// Switching on the length first leaves a handful of candidates per key: this runs for every
// key of every chunk.
Key key_of(std::string_view k) {
  switch (k.size()) {
    case 2:
      return match(k, {{"id", Key::kId}});
    case 4:
      return match(k, {{"type", Key::kType}, {"name", Key::kName}, {"code", Key::kCode}});
    case 5:
      return match(k, {{"model", Key::kModel},
                       {"usage", Key::kUsage},
                       {"index", Key::kIndex},
                       {"delta", Key::kDelta},
                       {"error", Key::kError},
                       {"param", Key::kParam}});
    case 6:
      return match(k, {{"object", Key::kObject}});
    case 7:
      return match(k, {{"choices", Key::kChoices},
                       {"content", Key::kContent},
                       {"refusal", Key::kRefusal},
                       {"message", Key::kMessage}});
    case 8:
      return match(k, {{"function", Key::kFunction}});
    case 9:
      return match(k, {{"arguments", Key::kArguments}, {"reasoning", Key::kReasoning}});
    case 10:
      return match(k, {{"tool_calls", Key::kToolCalls}});
    case 13:
      return match(k, {{"finish_reason", Key::kFinishReason},
                       {"prompt_tokens", Key::kPromptTokens},
                       {"cached_tokens", Key::kCachedTokens}});
    case 16:
      return match(k, {{"reasoning_tokens", Key::kReasoningTokens}});
    case 17:
      return match(k, {{"completion_tokens", Key::kCompletionTokens},
                       {"reasoning_content", Key::kReasoning}});
    case 21:
      return match(k, {{"prompt_tokens_details", Key::kPromptTokensDetails}});
    case 25:
      return match(k, {{"completion_tokens_details", Key::kCompletionTokensDetails}});
    default:
      return Key::kOther;
  }
}

struct ToolFragment {
  std::int64_t index = -1;  // -1: absent
  bool has_id = false;
  std::string id;
  std::string name;
  std::string arguments;

  void reset() {
    index = -1;
    has_id = false;
    id.clear();
    name.clear();
    arguments.clear();
  }
};

// What one chunk says, in reused buffers.
struct Chunk {
  bool root_is_object = false;
  std::string id;
  std::string model;
  std::string object;
  std::string content;  // delta.content + delta.refusal of choice 0
  std::string reasoning;
  std::string finish_reason;
  std::vector<ToolFragment> tools;  // [0, tool_count) are this chunk's
  std::size_t tool_count = 0;
  bool has_usage = false;
  ir::Usage usage;
  bool has_error = false;  // "error" object, or a root object that is {"object":"error"}
  std::string error_message;
  std::string error_type;
  std::string error_code;
  std::string error_param;
  std::int64_t error_numeric_code = 0;

  void reset() {
    root_is_object = false;
    id.clear();
    model.clear();
    object.clear();
    content.clear();
    reasoning.clear();
    finish_reason.clear();
    tool_count = 0;
    has_usage = false;
    usage = {};
    has_error = false;
    error_message.clear();
    error_type.clear();
    error_code.clear();
    error_param.clear();
    error_numeric_code = 0;
  }

  ToolFragment& add_tool() {
    if (tool_count == tools.size()) {
      tools.emplace_back();
    }
    ToolFragment& t = tools[tool_count++];
    t.reset();
    return t;
  }
};

// SAX handler for boost::json::basic_parser: fills a Chunk.
class ChunkHandler : public codec::SaxHandlerBase {
 public:
  Chunk chunk;

  void reset() {
    chunk.reset();
    depth_ = 0;
    key_ = Key::kOther;
    key_buf_.clear();
    target_ = nullptr;
    in_string_ = false;
  }

  bool on_object_begin(error_code& ec) {
    Frame f = Frame::kSkip;
    if (depth_ == 0) {
      chunk.root_is_object = true;
      f = Frame::kRoot;
    } else {
      f = child(true);
    }
    return push(f, ec);
  }
  bool on_object_end(std::size_t, error_code&) {
    if (frames_[depth_ - 1] == Frame::kChoice && choice_index_ != 0) {
      // Another candidate (n > 1): undo what it wrote.
      chunk.content.resize(mark_content_);
      chunk.reasoning.resize(mark_reasoning_);
      chunk.tool_count = mark_tools_;
      chunk.finish_reason = saved_finish_;
    }
    --depth_;
    return true;
  }
  bool on_array_begin(error_code& ec) {
    return push(depth_ == 0 ? Frame::kSkip : child(false), ec);
  }
  bool on_array_end(std::size_t, error_code&) {
    --depth_;
    return true;
  }

  bool on_key_part(json::string_view s, std::size_t, error_code&) {
    if (frames_[depth_ - 1] != Frame::kSkip) {
      key_buf_.append(s.data(), s.size());
    }
    return true;
  }
  bool on_key(json::string_view s, std::size_t, error_code&) {
    if (frames_[depth_ - 1] == Frame::kSkip) {
      return true;
    }
    if (key_buf_.empty()) {
      const std::string_view key(s.data(), s.size());
      key_ = key_of(key);
      if (key_ == Key::kOther) {
        other_key(key);
      }
    } else {
      key_buf_.append(s.data(), s.size());
      key_ = key_of(key_buf_);
      if (key_ == Key::kOther) {
        other_key(key_buf_);
      }
      key_buf_.clear();
    }
    return true;
  }

  // Schema drift over the whole stream (not reset per chunk).
  const Drift& drift() const { return drift_; }

  bool on_string_part(json::string_view s, std::size_t, error_code&) {
    if (!in_string_) {
      in_string_ = true;
      target_ = string_target();
    }
    if (target_ != nullptr) {
      target_->append(s.data(), s.size());
    }
    return true;
  }
  bool on_string(json::string_view s, std::size_t, error_code&) {
    if (!in_string_) {
      target_ = string_target();
    }
    if (target_ != nullptr) {
      target_->append(s.data(), s.size());
    }
    in_string_ = false;
    target_ = nullptr;
    return true;
  }

  bool on_int64(std::int64_t v, json::string_view, error_code&) {
    integer(v < 0 ? 0 : static_cast<std::uint64_t>(v), v);
    return true;
  }
  bool on_uint64(std::uint64_t v, json::string_view, error_code&) {
    integer(v, v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
                   ? std::numeric_limits<std::int64_t>::max()
                   : static_cast<std::int64_t>(v));
    return true;
  }
  bool on_double(double, json::string_view, error_code&) { return true; }
  bool on_bool(bool, error_code&) { return true; }
  bool on_null(error_code&) { return true; }

 private:
  bool push(Frame f, error_code& ec) {
    if (depth_ >= frames_.size()) {
      ec = json::error::too_deep;
      return false;
    }
    frames_[depth_++] = f;
    return true;
  }

  // The frame of a container opened at the current position.
  Frame child(bool is_object) {
    switch (frames_[depth_ - 1]) {
      case Frame::kRoot:
        if (!is_object && key_ == Key::kChoices) {
          return Frame::kChoices;
        }
        if (is_object && key_ == Key::kUsage) {
          chunk.has_usage = true;
          chunk.usage = {};
          return Frame::kUsage;
        }
        if (is_object && key_ == Key::kError) {
          chunk.has_error = true;
          return Frame::kError;
        }
        return Frame::kSkip;
      case Frame::kChoices:
        if (is_object) {
          choice_index_ = 0;
          mark_content_ = chunk.content.size();
          mark_reasoning_ = chunk.reasoning.size();
          mark_tools_ = chunk.tool_count;
          saved_finish_ = chunk.finish_reason;
          return Frame::kChoice;
        }
        return Frame::kSkip;
      case Frame::kChoice:
        return is_object && key_ == Key::kDelta ? Frame::kDelta : Frame::kSkip;
      case Frame::kDelta:
        return !is_object && key_ == Key::kToolCalls ? Frame::kToolCalls : Frame::kSkip;
      case Frame::kToolCalls:
        if (is_object) {
          tool_ = &chunk.add_tool();
          return Frame::kToolCall;
        }
        return Frame::kSkip;
      case Frame::kToolCall:
        return is_object && key_ == Key::kFunction ? Frame::kFunction : Frame::kSkip;
      case Frame::kUsage:
        if (is_object && key_ == Key::kPromptTokensDetails) {
          return Frame::kPromptDetails;
        }
        if (is_object && key_ == Key::kCompletionTokensDetails) {
          return Frame::kCompletionDetails;
        }
        return Frame::kSkip;
      default:
        return Frame::kSkip;
    }
  }

  std::string* string_target() {
    if (depth_ == 0) {
      return nullptr;  // a scalar document; rejected after the parse
    }
    switch (frames_[depth_ - 1]) {
      case Frame::kRoot:
        switch (key_) {
          case Key::kId:
            return &chunk.id;
          case Key::kModel:
            return &chunk.model;
          case Key::kObject:
            return &chunk.object;
          default:
            // vLLM's flat {"object":"error","message",...}; ignored unless object == "error".
            return error_target();
        }
      case Frame::kChoice:
        return key_ == Key::kFinishReason ? &chunk.finish_reason : nullptr;
      case Frame::kDelta:
        if (key_ == Key::kContent || key_ == Key::kRefusal) {
          return &chunk.content;
        }
        return key_ == Key::kReasoning ? &chunk.reasoning : nullptr;
      case Frame::kToolCall:
        if (key_ == Key::kId) {
          tool_->has_id = true;
          return &tool_->id;
        }
        return nullptr;
      case Frame::kFunction:
        if (key_ == Key::kName) {
          return &tool_->name;
        }
        return key_ == Key::kArguments ? &tool_->arguments : nullptr;
      case Frame::kError:
        return error_target();
      default:
        return nullptr;
    }
  }

  // The fields of an error object, nested ({"error":{...}}) or flat at the root (vLLM).
  std::string* error_target() {
    switch (key_) {
      case Key::kMessage:
        return &chunk.error_message;
      case Key::kType:
        return &chunk.error_type;
      case Key::kCode:
        return &chunk.error_code;
      case Key::kParam:
        return &chunk.error_param;
      default:
        return nullptr;
    }
  }

  void integer(std::uint64_t count, std::int64_t value) {
    if (depth_ == 0) {
      return;
    }
    switch (frames_[depth_ - 1]) {
      case Frame::kChoice:
        if (key_ == Key::kIndex) {
          choice_index_ = value;
        }
        break;
      case Frame::kToolCall:
        if (key_ == Key::kIndex) {
          tool_->index = value;
        }
        break;
      case Frame::kUsage:
        if (key_ == Key::kPromptTokens) {
          chunk.usage.input_tokens = count;
        } else if (key_ == Key::kCompletionTokens) {
          chunk.usage.output_tokens = count;
        }
        break;
      case Frame::kPromptDetails:
        if (key_ == Key::kCachedTokens) {
          chunk.usage.cache_read_tokens = count;
        }
        break;
      case Frame::kCompletionDetails:
        if (key_ == Key::kReasoningTokens) {
          chunk.usage.reasoning_tokens = count;
        }
        break;
      case Frame::kError:
      case Frame::kRoot:
        if (key_ == Key::kCode) {
          chunk.error_numeric_code = value;
        }
        break;
      default:
        break;
    }
  }

  // A key key_of() does not read, at a level the decoder reads: drift unless skipped on purpose.
  void other_key(std::string_view key) {
    FieldNames known;
    switch (frames_[depth_ - 1]) {
      case Frame::kRoot:
        known = known::kRoot;
        break;
      case Frame::kChoice:
        known = known::kChoice;
        break;
      case Frame::kDelta:
        known = known::kMessage;
        break;
      case Frame::kToolCall:
        known = known::kToolCall;
        break;
      case Frame::kFunction:
        known = known::kFunction;
        break;
      case Frame::kUsage:
        known = known::kUsage;
        break;
      default:
        return;  // details objects, errors: not counted
    }
    if (!Drift::is_known(key, known)) {
      drift_.unknown(key);
    }
  }

  Drift drift_;
  std::array<Frame, kMaxDepth + 1> frames_{};
  std::size_t depth_ = 0;
  Key key_ = Key::kOther;
  std::string key_buf_;
  std::string* target_ = nullptr;
  bool in_string_ = false;
  ToolFragment* tool_ = nullptr;
  std::int64_t choice_index_ = 0;
  std::size_t mark_content_ = 0;
  std::size_t mark_reasoning_ = 0;
  std::size_t mark_tools_ = 0;
  std::string saved_finish_;
};

json::parse_options chunk_parse_options() {
  json::parse_options opts;
  opts.max_depth = kMaxDepth;
  return opts;
}

ir::StreamEvent& add(std::vector<ir::StreamEvent>& out, ir::StreamEventKind kind) {
  ir::StreamEvent& e = out.emplace_back();
  e.kind = kind;
  return e;
}

}  // namespace

class StreamDecoder::ChunkParser {
 public:
  ChunkParser() : parser_(chunk_parse_options()) {}

  // Parses one data payload; false with `ec` set when it is not valid JSON.
  bool parse(std::string_view data, error_code& ec) {
    parser_.reset();
    parser_.handler().reset();
    const std::size_t used = parser_.write_some(false, data.data(), data.size(), ec);
    if (!ec && used != data.size()) {
      ec = json::error::extra_data;
    }
    return !ec;
  }

  Chunk& chunk() { return parser_.handler().chunk; }
  std::uint32_t unknown_fields() const { return parser_.handler().drift().count(); }

 private:
  json::basic_parser<ChunkHandler> parser_;
};

StreamDecoder::StreamDecoder() : parser_(std::make_unique<ChunkParser>()) {}
StreamDecoder::~StreamDecoder() = default;

std::uint32_t StreamDecoder::unknown_fields() const { return parser_->unknown_fields(); }

void StreamDecoder::fail(Error error, std::vector<ir::StreamEvent>& out) {
  add(out, ir::StreamEventKind::kError).error = std::move(error);
  failed_ = true;
}

void StreamDecoder::on_event(const codec::SseEvent& event, std::vector<ir::StreamEvent>& out) {
  if (done_ || failed_ || !event.has_data || event.data.empty()) {
    return;
  }
  if (event.data == "[DONE]") {
    emit_done(out);
    return;
  }
  error_code ec;
  const bool parsed = parser_->parse(event.data, ec);
  Chunk& chunk = parser_->chunk();
  if (!parsed || !chunk.root_is_object) {
    if (event.event == "error") {
      fail(error_from_openai(event.data.substr(0, 512), "", "", 0, ""), out);
      return;
    }
    fail(Error(ErrorKind::kUpstreamProtocol,
               "upstream sent a chat.completion.chunk that is not a JSON object" +
                   (parsed ? std::string() : ": " + ec.message())),
         out);
    return;
  }
  if (chunk.has_error || chunk.object == "error" || event.event == "error") {
    fail(error_from_openai(chunk.error_message, chunk.error_type, chunk.error_code,
                           static_cast<int>(std::min<std::int64_t>(chunk.error_numeric_code, 999)),
                           chunk.error_param),
         out);
    return;
  }
  emit_chunk(out);
}

std::uint32_t StreamDecoder::tool_index(std::int64_t openai_index, bool has_id, std::string_view id,
                                        bool& is_new) {
  is_new = false;
  if (openai_index < 0) {
    // No `index` (some compatible servers): a new id starts a call, else the last continues.
    if (tool_indexes_.empty() || (has_id && !id.empty() && id != last_tool_id_)) {
      is_new = true;
      tool_indexes_.push_back(-1 - static_cast<std::int64_t>(tool_indexes_.size()));
      return static_cast<std::uint32_t>(tool_indexes_.size() - 1);
    }
    return static_cast<std::uint32_t>(tool_indexes_.size() - 1);
  }
  for (std::size_t i = 0; i < tool_indexes_.size(); ++i) {
    if (tool_indexes_[i] == openai_index) {
      return static_cast<std::uint32_t>(i);
    }
  }
  is_new = true;
  tool_indexes_.push_back(openai_index);
  return static_cast<std::uint32_t>(tool_indexes_.size() - 1);
}

void StreamDecoder::emit_chunk(std::vector<ir::StreamEvent>& out) {
  Chunk& chunk = parser_->chunk();
  if (!started_) {
    started_ = true;
    response_id_ = chunk.id;
    ir::StreamEvent& e = add(out, ir::StreamEventKind::kStart);
    e.id = chunk.id;
    e.model = chunk.model;
  }
  if (!chunk.reasoning.empty()) {
    add(out, ir::StreamEventKind::kReasoningDelta).text = chunk.reasoning;
  }
  if (!chunk.content.empty()) {
    add(out, ir::StreamEventKind::kTextDelta).text = chunk.content;
  }
  for (std::size_t i = 0; i < chunk.tool_count; ++i) {
    ToolFragment& t = chunk.tools[i];
    bool is_new = false;
    const std::uint32_t index = tool_index(t.index, t.has_id, t.id, is_new);
    if (is_new) {
      ir::StreamEvent& e = add(out, ir::StreamEventKind::kToolCallStart);
      e.index = index;
      if (t.id.empty()) {
        e.id = response_id_ + "_call_" + std::to_string(index);
      } else {
        e.id = t.id;
      }
      e.name = t.name;
      last_tool_id_ = e.id;
    }
    if (!t.arguments.empty()) {
      ir::StreamEvent& e = add(out, ir::StreamEventKind::kToolCallDelta);
      e.index = index;
      e.text = t.arguments;
    }
  }
  if (!chunk.finish_reason.empty() && !finish_seen_) {
    finish_seen_ = true;
    finish_ = finish_reason_from_openai(chunk.finish_reason);
  }
  if (chunk.has_usage) {
    add(out, ir::StreamEventKind::kUsage).usage = chunk.usage;
  }
}

void StreamDecoder::emit_done(std::vector<ir::StreamEvent>& out) {
  if (!started_) {
    started_ = true;
    add(out, ir::StreamEventKind::kStart);
  }
  add(out, ir::StreamEventKind::kFinish).finish = finish_;
  add(out, ir::StreamEventKind::kDone);
  done_ = true;
}

void StreamDecoder::on_end(std::vector<ir::StreamEvent>& out) {
  if (done_ || failed_) {
    return;
  }
  if (finish_seen_) {
    emit_done(out);
    return;
  }
  fail(Error(ErrorKind::kUpstreamProtocol,
             "upstream chat.completion stream ended before a finish_reason"),
       out);
}

}  // namespace sluice::protocol::openai_chat
