#include "protocol/openai_chat/envelope.h"

#include <cmath>

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>

#include "codec/json_read.h"

namespace sluice::protocol::openai_chat {
namespace json = boost::json;
using boost::system::error_code;

namespace {

enum class Kind { kChat, kEmbeddings };

// SAX handler: validates syntax (the parser does) and the fields the gateway needs, and
// records where the top-level "model" value sits. Depth 1 = inside the top-level object.
class RequestScanner {
 public:
  static constexpr std::size_t max_array_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_object_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_string_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_key_size = static_cast<std::size_t>(-1);

  RequestScanner(Kind kind, std::string_view body) : kind_(kind), body_(body) {}

  bool on_document_begin(error_code&) { return true; }
  bool on_document_end(error_code&) { return true; }

  bool on_object_begin(error_code& ec) {
    if (depth_ == 0) {
      root_is_object_ = true;
    } else {
      value_at_depth(Value::kObject);
    }
    return push(ec);
  }
  bool on_object_end(std::size_t, error_code&) {
    if (depth_ == 3 && in_messages_) {
      if (!message_has_role_) {
        message_problem(MessageProblem::kNoRole);
      }
      ++message_index_;
    }
    if (depth_ == 2 && in_stream_options_) {
      in_stream_options_ = false;
    }
    --depth_;
    return true;
  }
  bool on_array_begin(error_code& ec) {
    value_at_depth(Value::kArray);
    return push(ec);
  }
  bool on_array_end(std::size_t n, error_code&) {
    if (depth_ == 4 && in_content_) {
      in_content_ = false;
    }
    if (depth_ == 2 && in_messages_) {
      in_messages_ = false;
      messages_empty_ = n == 0;
    }
    if (depth_ == 2 && in_input_) {
      in_input_ = false;
      input_ok_ = input_ok_ && n > 0;
    }
    --depth_;
    return true;
  }
  bool on_key_part(json::string_view s, std::size_t, error_code&) {
    if (depth_ <= 3) {
      key_.append(s.data(), s.size());
    }
    return true;
  }
  bool on_key(json::string_view s, std::size_t, error_code&) {
    if (depth_ <= 3) {
      key_.append(s.data(), s.size());
      if (depth_ == 1) {
        top_key_.swap(key_);
        forget_earlier_value();
      } else if (depth_ == 2) {
        inner_key_.swap(key_);
      } else if (depth_ == 3 && in_messages_) {
        message_key_ = key_ == "role"      ? MessageKey::kRole
                       : key_ == "content" ? MessageKey::kContent
                                           : MessageKey::kOther;
        if (message_key_ == MessageKey::kRole) {
          message_has_role_ = true;
        }
      }
      key_.clear();
    }
    return true;
  }
  bool on_string_part(json::string_view s, std::size_t, error_code&) {
    if (depth_ == 1 && top_key_ == "model") {
      model_parts_ = true;
      model_.append(s.data(), s.size());
    }
    return true;
  }
  bool on_string(json::string_view s, std::size_t, error_code&) {
    if (depth_ == 1 && top_key_ == "model") {
      ++model_count_;
      model_type_ = Value::kString;
      model_.append(s.data(), s.size());
      const char* begin = body_.data();
      if (!model_parts_ && s.data() > begin && s.data() + s.size() < begin + body_.size()) {
        model_begin_ = static_cast<std::size_t>(s.data() - begin) - 1;
        model_end_ = model_begin_ + s.size() + 2;
        model_in_place_ = body_[model_begin_] == '"' && body_[model_end_ - 1] == '"';
      }
      return true;
    }
    value_at_depth(Value::kString);
    return true;
  }
  bool on_number_part(json::string_view, error_code&) { return true; }
  bool on_int64(std::int64_t, json::string_view, error_code&) {
    value_at_depth(Value::kInteger);
    return true;
  }
  bool on_uint64(std::uint64_t, json::string_view, error_code&) {
    value_at_depth(Value::kInteger);
    return true;
  }
  bool on_double(double d, json::string_view, error_code& ec) {
    if (!std::isfinite(d)) {  // as codec::parse_json, which document() reads it with
      ec = json::error::exponent_overflow;
      return false;
    }
    value_at_depth(Value::kOther);
    return true;
  }
  bool on_bool(bool b, error_code&) {
    if (depth_ == 1 && top_key_ == "stream") {
      stream_ = b;
      stream_type_ = Value::kBool;
      return true;
    }
    if (depth_ == 2 && in_stream_options_ && inner_key_ == "include_usage") {
      include_usage_ = b;
      include_usage_type_ = Value::kBool;
      return true;
    }
    value_at_depth(Value::kOther);
    return true;
  }
  bool on_null(error_code&) {
    if (depth_ == 1 && (top_key_ == "stream" || top_key_ == "stream_options")) {
      return true;  // explicit null = absent
    }
    if (depth_ == 3 && in_messages_ && message_key_ == MessageKey::kContent) {
      return true;  // assistant messages with tool_calls carry "content": null
    }
    value_at_depth(Value::kOther);
    return true;
  }
  bool on_comment_part(json::string_view, error_code&) { return true; }
  bool on_comment(json::string_view, error_code&) { return true; }

  Result<ChatRequest> finish(std::string_view body) const;

 private:
  Error message_error() const;
  enum class Value { kNone, kString, kInteger, kBool, kObject, kArray, kOther };

  // A repeated top-level key: the last value wins, as in ChatRequest::document() (Boost.JSON)
  // and in the upstream's parser, so the gateway routes, streams and meters on the value the
  // upstream acts on. Without this, {"model":"a","model":"b"} decoded as model "ab", and
  // {"stream_options":{"include_usage":true},"stream_options":{}} as include_usage while the
  // upstream saw none (no usage chunk: unmetered). Found by tests/fuzz/openai_chat_request_fuzz.
  void forget_earlier_value() {
    if (top_key_ == "model") {
      model_.clear();
      model_parts_ = false;
    } else if (top_key_ == "stream") {
      stream_ = false;
      stream_type_ = Value::kNone;
    } else if (top_key_ == "stream_options") {
      stream_options_key_ = true;
      stream_options_type_ = Value::kNone;
      include_usage_ = false;
      include_usage_type_ = Value::kNone;
    }
  }

  bool push(error_code& ec) {
    if (++depth_ > kMaxJsonDepth) {
      ec = json::error::too_deep;
      return false;
    }
    return true;
  }

  // A value (scalar or container start) at the current depth.
  void value_at_depth(Value v) {
    if (depth_ == 1) {
      if (top_key_ == "model") {
        ++model_count_;
        model_type_ = v;
      } else if (top_key_ == "messages") {
        messages_type_ = v;
        if (v == Value::kArray) {
          in_messages_ = true;
        }
      } else if (top_key_ == "stream") {
        stream_type_ = v;
      } else if (top_key_ == "stream_options") {
        stream_options_type_ = v;
        if (v == Value::kObject) {
          in_stream_options_ = true;
        }
      } else if (top_key_ == "provider_options") {
        provider_options_ = true;
      } else if (top_key_ == "input") {
        input_type_ = v;
        if (v == Value::kArray) {
          in_input_ = true;
        }
      }
    } else if (depth_ == 2) {
      if (in_messages_) {
        if (v == Value::kObject) {
          message_has_role_ = false;
          message_key_ = MessageKey::kOther;
        } else {
          message_problem(MessageProblem::kNotObject);
          ++message_index_;
        }
      } else if (in_stream_options_ && inner_key_ == "include_usage") {
        include_usage_type_ = v;
      } else if (in_input_) {
        if (v != Value::kString && v != Value::kInteger && v != Value::kArray) {
          input_ok_ = false;
        }
      }
    } else if (depth_ == 3 && in_messages_) {
      if (message_key_ == MessageKey::kRole && v != Value::kString) {
        message_problem(MessageProblem::kRoleType);
      } else if (message_key_ == MessageKey::kContent) {
        if (v == Value::kArray) {
          in_content_ = true;
        } else if (v != Value::kString) {
          message_problem(MessageProblem::kContentType);
        }
      }
    } else if (depth_ == 4 && in_content_ && v != Value::kObject) {
      message_problem(MessageProblem::kPartType);
    }
  }

  // Keeps the first problem found: its message index names the field in the error.
  enum class MessageProblem : std::uint8_t {
    kNone,
    kNotObject,
    kNoRole,
    kRoleType,
    kContentType,
    kPartType
  };
  void message_problem(MessageProblem problem) {
    if (problem_ == MessageProblem::kNone) {
      problem_ = problem;
      problem_index_ = message_index_;
    }
  }

  Kind kind_;
  std::string_view body_;
  std::size_t depth_ = 0;
  bool root_is_object_ = false;
  std::string key_;
  std::string top_key_;
  std::string inner_key_;

  std::string model_;
  Value model_type_ = Value::kNone;
  int model_count_ = 0;
  bool model_parts_ = false;
  bool model_in_place_ = false;
  std::size_t model_begin_ = 0;
  std::size_t model_end_ = 0;

  enum class MessageKey : std::uint8_t { kOther, kRole, kContent };
  Value messages_type_ = Value::kNone;
  bool in_messages_ = false;
  bool in_content_ = false;
  bool messages_empty_ = false;
  bool message_has_role_ = false;
  MessageKey message_key_ = MessageKey::kOther;
  std::size_t message_index_ = 0;
  MessageProblem problem_ = MessageProblem::kNone;
  std::size_t problem_index_ = 0;

  Value stream_type_ = Value::kNone;
  bool stream_ = false;
  bool provider_options_ = false;
  Value stream_options_type_ = Value::kNone;
  bool stream_options_key_ = false;  // a top-level "stream_options" member, null included
  bool in_stream_options_ = false;
  Value include_usage_type_ = Value::kNone;
  bool include_usage_ = false;

  Value input_type_ = Value::kNone;
  bool in_input_ = false;
  bool input_ok_ = true;
};

Error bad_request(std::string message, std::string param = {}) {
  Error e(ErrorKind::kBadRequest, std::move(message));
  if (!param.empty()) {
    return std::move(e).with_param(std::move(param));
  }
  return e;
}

// Worded like OpenAI's own validation errors, with the same param paths.
Error RequestScanner::message_error() const {
  const std::string at = "messages[" + std::to_string(problem_index_) + "]";
  switch (problem_) {
    case MessageProblem::kNotObject:
      return bad_request("Invalid type for '" + at + "': expected an object.", at);
    case MessageProblem::kNoRole:
      return bad_request("Missing required parameter: '" + at + ".role'.", at + ".role");
    case MessageProblem::kRoleType:
      return bad_request("Invalid type for '" + at + ".role': expected a string.", at + ".role");
    case MessageProblem::kContentType:
      return bad_request("Invalid type for '" + at +
                             ".content': expected one of a string or an array of content parts.",
                         at + ".content");
    case MessageProblem::kPartType:
      return bad_request(
          "Invalid type for '" + at + ".content': each content part must be an object.",
          at + ".content");
    case MessageProblem::kNone:
      break;
  }
  return bad_request("invalid message", "messages");
}

Result<ChatRequest> RequestScanner::finish(std::string_view body) const {
  if (!root_is_object_) {
    return bad_request("request body must be a JSON object");
  }
  if (model_type_ == Value::kNone) {
    return bad_request("you must provide a model parameter", "model");
  }
  if (model_type_ != Value::kString || model_.empty()) {
    return bad_request("'model' must be a non-empty string", "model");
  }
  ChatRequest req;
  if (kind_ == Kind::kChat) {
    if (messages_type_ == Value::kNone) {
      return bad_request("missing required parameter: 'messages'", "messages");
    }
    if (messages_type_ != Value::kArray || messages_empty_) {
      return bad_request("'messages' must be a non-empty array", "messages");
    }
    if (problem_ != MessageProblem::kNone) {
      return message_error();
    }
    if (stream_type_ != Value::kNone && stream_type_ != Value::kBool) {
      return bad_request("'stream' must be a boolean", "stream");
    }
    if (stream_options_type_ != Value::kNone && stream_options_type_ != Value::kObject) {
      return bad_request("'stream_options' must be an object", "stream_options");
    }
    if (include_usage_type_ != Value::kNone && include_usage_type_ != Value::kBool) {
      return bad_request("'stream_options.include_usage' must be a boolean",
                         "stream_options.include_usage");
    }
  } else {
    const bool ok = input_type_ == Value::kString || (input_type_ == Value::kArray && input_ok_);
    if (input_type_ == Value::kNone) {
      return bad_request("missing required parameter: 'input'", "input");
    }
    if (!ok) {
      return bad_request(
          "'input' must be a string, an array of strings, or an array of token arrays", "input");
    }
  }
  req.model = model_;
  req.stream = stream_;
  req.provider_options = provider_options_;
  req.include_usage = include_usage_;
  // "stream_options":null counts: encode_upstream_body must replace it rather than splice a
  // second member in front of it, which the upstream would override with the null.
  req.set_has_stream_options(stream_options_key_);
  req.body = body;
  req.spliceable = model_in_place_ && model_count_ == 1;
  req.model_begin = model_begin_;
  req.model_end = model_end_;
  req.object_open = body.find('{');
  return req;
}

Result<ChatRequest> decode(Kind kind, std::string_view body) {
  if (body.empty()) {
    return bad_request("request body is empty; expected a JSON object");
  }
  // The parser enforces its own max_depth (32 by default) before the handler sees a level;
  // raise it to the gateway's limit so the handler's bound is the one that applies.
  json::parse_options options;
  options.max_depth = kMaxJsonDepth;
  json::basic_parser<RequestScanner> parser(options, kind, body);
  error_code ec;
  std::size_t used = parser.write_some(false, body.data(), body.size(), ec);
  if (!ec && used != body.size()) {
    ec = json::error::extra_data;
  }
  if (ec) {
    return bad_request("request body is not valid JSON: " + ec.message());
  }
  return parser.handler().finish(body);
}

}  // namespace

const boost::json::value& ChatRequest::document() const {
  if (!document_) {
    error_code ec;
    document_ = codec::parse_json(body, ec, {}, kMaxJsonDepth);  // validated already
  }
  return *document_;
}

Result<ChatRequest> decode_chat_request(std::string_view body) { return decode(Kind::kChat, body); }

Result<ChatRequest> decode_embeddings_request(std::string_view body) {
  return decode(Kind::kEmbeddings, body);
}

std::string encode_upstream_body(const ChatRequest& request, std::string_view upstream_model,
                                 bool force_include_usage) {
  const bool add_usage = force_include_usage && request.stream && !request.include_usage;
  if (request.spliceable && !(add_usage && request.has_stream_options())) {
    const std::string quoted = json::serialize(json::string(upstream_model));
    static constexpr std::string_view kUsage = R"("stream_options":{"include_usage":true},)";
    std::string out;
    out.reserve(request.body.size() + quoted.size() + (add_usage ? kUsage.size() : 0));
    std::string_view body = request.body;
    if (add_usage) {
      out.append(body.substr(0, request.object_open + 1));
      out.append(kUsage);
      out.append(
          body.substr(request.object_open + 1, request.model_begin - request.object_open - 1));
    } else {
      out.append(body.substr(0, request.model_begin));
    }
    out.append(quoted);
    out.append(body.substr(request.model_end));
    return out;
  }
  // Rare shapes (escaped or repeated "model", stream_options without include_usage): DOM.
  json::value doc = request.document();
  json::object& obj = doc.as_object();
  obj["model"] = upstream_model;
  if (add_usage) {
    json::value& so = obj["stream_options"];
    if (!so.is_object()) {
      so = json::object();
    }
    so.as_object()["include_usage"] = true;
  }
  return json::serialize(doc);
}

}  // namespace sluice::protocol::openai_chat
