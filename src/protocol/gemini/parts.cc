#include "protocol/gemini/parts.h"

#include <array>

#include "codec/json_compact.h"
#include "codec/json_writer.h"
#include "protocol/gemini/conventions.h"
#include "protocol/gemini/wire_json.h"

namespace sluice::protocol::gemini::parts {
namespace json = boost::json;
using wire::member;
using wire::string_member;

namespace {

using wire::index;
using wire::join;

Error fail(Source source, const std::string& path, std::string_view problem) {
  if (source == Source::kCaller) {
    return wire::request_error(path, problem);
  }
  std::string message = "cannot translate the upstream's ";
  message.append(path).append(": ").append(problem);
  return Error(ErrorKind::kUpstreamProtocol, std::move(message));
}

Error untranslatable(Source source, const std::string& path, std::string_view what) {
  if (source == Source::kCaller) {
    return wire::untranslatable(path, what);
  }
  // Appended rather than "'" + std::string(what): GCC 12 warns falsely (-Wrestrict, its bug
  // 105651) on operator+(const char*, std::string&&).
  std::string problem = "'";
  problem.append(what).append("' cannot be translated");
  return fail(source, path, problem);
}

constexpr std::array<std::string_view, 4> kServerParts = {"executableCode", "codeExecutionResult",
                                                          "toolCall", "toolResponse"};

class Reader {
 public:
  Reader(Source source, CallIds& ids, std::vector<ir::ContentPart>& out)
      : source_(source), ids_(ids), out_(out), first_(out.size()) {}

  Result<void> read(const json::value& parts, const std::string& path) {
    if (!parts.is_array()) {
      return fail(source_, path, "Invalid value, expected a list of Part");
    }
    const json::array& arr = parts.get_array();
    for (std::size_t j = 0; j < arr.size(); ++j) {
      if (auto r = part(arr[j], index(path, j), j); !r) {
        return r;
      }
    }
    return {};
  }

 private:
  // The reasoning part a thought or signature continues: the last part read from this content
  // when it is reasoning that no signature has closed yet.
  ir::ContentPart* open_reasoning() {
    if (out_.size() > first_ && out_.back().kind == ir::PartKind::kReasoning &&
        out_.back().signature.empty()) {
      return &out_.back();
    }
    return nullptr;
  }

  void attach_signature(std::string_view signature) {
    if (ir::ContentPart* r = open_reasoning()) {
      r->signature.assign(signature);
      return;
    }
    ir::ContentPart r;
    r.kind = ir::PartKind::kReasoning;
    r.signature.assign(signature);
    out_.push_back(std::move(r));
  }

  Result<void> part(const json::value& v, const std::string& path, std::size_t j) {
    if (!v.is_object()) {
      return fail(source_, path, "Invalid value, expected a Part object");
    }
    const json::object& p = v.get_object();
    std::string_view signature;
    if (const json::value* s = member(p, "thoughtSignature")) {
      if (!s->is_string()) {
        return fail(source_, join(path, "thoughtSignature"), "Invalid value, expected a string");
      }
      signature = std::string_view(s->get_string().data(), s->get_string().size());
    }
    bool thought = false;
    if (const json::value* t = member(p, "thought")) {
      if (!t->is_bool()) {
        return fail(source_, join(path, "thought"), "Invalid value, expected a boolean");
      }
      thought = t->get_bool();
    }
    if (const json::value* text = member(p, "text")) {
      if (!text->is_string()) {
        return fail(source_, join(path, "text"), "Invalid value, expected a string");
      }
      const std::string_view t(text->get_string().data(), text->get_string().size());
      if (thought) {
        add_thought(t, signature);
        return {};
      }
      if (!signature.empty()) {
        attach_signature(signature);
      }
      if (!t.empty()) {
        out_.push_back(ir::ContentPart::make_text(std::string(t)));
      }
      return {};
    }
    if (!signature.empty()) {
      attach_signature(signature);
    }
    if (const json::value* fc = member(p, "functionCall")) {
      return function_call(*fc, join(path, "functionCall"), j);
    }
    if (source_ == Source::kCaller) {
      if (const json::value* fr = member(p, "functionResponse")) {
        return function_response(*fr, join(path, "functionResponse"));
      }
      if (const json::value* d = member(p, "inlineData")) {
        return inline_data(*d, join(path, "inlineData"), out_);
      }
      if (const json::value* f = member(p, "fileData")) {
        return file_data(*f, join(path, "fileData"));
      }
    }
    for (std::string_view key : kServerParts) {
      if (member(p, key) != nullptr) {
        return untranslatable(source_, join(path, key), key);
      }
    }
    for (std::string_view key : {"functionResponse", "inlineData", "fileData"}) {
      if (member(p, key) != nullptr) {
        return untranslatable(source_, join(path, key), key);
      }
    }
    if (!signature.empty()) {
      return {};  // a signature on its own
    }
    return fail(source_, path, "required oneof field 'data' must have one initialized field");
  }

  void add_thought(std::string_view text, std::string_view signature) {
    if (ir::ContentPart* r = open_reasoning()) {
      r->text.append(text);
    } else if (!text.empty()) {
      ir::ContentPart r;
      r.kind = ir::PartKind::kReasoning;
      r.text.assign(text);
      out_.push_back(std::move(r));
    }
    if (!signature.empty()) {
      attach_signature(signature);
    }
  }

  Result<void> function_call(const json::value& v, const std::string& path, std::size_t j) {
    if (!v.is_object()) {
      return fail(source_, path, "Invalid value, expected a FunctionCall object");
    }
    const json::object& fc = v.get_object();
    if (member(fc, "partialArgs") != nullptr || member(fc, "willContinue") != nullptr) {
      return untranslatable(source_, join(path, "partialArgs"),
                            "partialArgs (streamed function-call arguments)");
    }
    auto name = string_member(fc, "name");
    if (!name || name->empty()) {
      return fail(source_, join(path, "name"), "a function call needs a name");
    }
    ir::ContentPart call;
    call.kind = ir::PartKind::kToolCall;
    call.name.assign(*name);
    const json::value* args = member(fc, "args");
    if (args == nullptr) {
      call.arguments = "{}";
    } else if (args->is_object()) {
      codec::append_compact_json(call.arguments, *args);
    } else {
      return fail(source_, join(path, "args"), "Invalid value, expected a JSON object");
    }
    call.id = ids_.call_id(string_member(fc, "id").value_or(""), j, call.name);
    out_.push_back(std::move(call));
    return {};
  }

  Result<void> function_response(const json::value& v, const std::string& path) {
    if (!v.is_object()) {
      return fail(source_, path, "Invalid value, expected a FunctionResponse object");
    }
    const json::object& fr = v.get_object();
    auto name = string_member(fr, "name");
    if (!name || name->empty()) {
      return fail(source_, join(path, "name"), "a function response needs a name");
    }
    ir::ContentPart result;
    result.kind = ir::PartKind::kToolResult;
    auto id = ids_.response_id(string_member(fr, "id").value_or(""), *name, path);
    if (!id) {
      return std::move(id).error();
    }
    result.id = std::move(*id);
    const json::value* response = member(fr, "response");
    std::string text;
    if (response == nullptr) {
      text = "{}";
    } else if (!response->is_object()) {
      return fail(source_, join(path, "response"), "Invalid value, expected a JSON object");
    } else {
      const json::object& r = response->get_object();
      const json::value* output = r.if_contains("output");
      const json::value* error = r.if_contains("error");
      result.is_error = error != nullptr && output == nullptr;
      const json::value* only = r.size() == 1 ? (output != nullptr ? output : error) : nullptr;
      if (only != nullptr && only->is_string()) {
        text.assign(only->get_string().data(), only->get_string().size());
      } else {
        codec::append_compact_json(text, *response);
      }
    }
    if (!text.empty()) {
      result.parts.push_back(ir::ContentPart::make_text(std::move(text)));
    }
    if (const json::value* media = member(fr, "parts")) {
      const std::string media_path = join(path, "parts");
      if (!media->is_array()) {
        return fail(source_, media_path, "Invalid value, expected a list of FunctionResponsePart");
      }
      const json::array& arr = media->get_array();
      for (std::size_t k = 0; k < arr.size(); ++k) {
        const std::string item = index(media_path, k);
        const json::value* d =
            arr[k].is_object() ? member(arr[k].get_object(), "inlineData") : nullptr;
        if (d == nullptr) {
          return untranslatable(source_, item, "FunctionResponsePart without inlineData");
        }
        if (auto r = inline_data(*d, join(item, "inlineData"), result.parts); !r) {
          return r;
        }
      }
    }
    out_.push_back(std::move(result));
    return {};
  }

  Result<void> inline_data(const json::value& v, const std::string& path,
                           std::vector<ir::ContentPart>& out) {
    const json::object* d = v.is_object() ? &v.get_object() : nullptr;
    auto mime = d != nullptr ? string_member(*d, "mimeType") : std::nullopt;
    auto data = d != nullptr ? string_member(*d, "data") : std::nullopt;
    if (!mime || !data) {
      return fail(source_, path, "inline data needs a mimeType and data");
    }
    if (!mime->starts_with("image/")) {
      return untranslatable(source_, join(path, "mimeType"), *mime);
    }
    ir::ContentPart image;
    image.kind = ir::PartKind::kImage;
    image.media_type.assign(*mime);
    image.source.assign(*data);
    out.push_back(std::move(image));
    return {};
  }

  Result<void> file_data(const json::value& v, const std::string& path) {
    const json::object* f = v.is_object() ? &v.get_object() : nullptr;
    auto uri = f != nullptr ? string_member(*f, "fileUri") : std::nullopt;
    if (!uri || uri->empty()) {
      return fail(source_, join(path, "fileUri"), "file data needs a fileUri");
    }
    const std::string_view mime = string_member(*f, "mimeType").value_or("");
    if (!mime.empty() && !mime.starts_with("image/")) {
      return untranslatable(source_, join(path, "mimeType"), mime);
    }
    ir::ContentPart image;
    image.kind = ir::PartKind::kImage;
    image.image_is_url = true;
    image.source.assign(*uri);
    image.media_type.assign(mime);
    out_.push_back(std::move(image));
    return {};
  }

  Source source_;
  CallIds& ids_;
  std::vector<ir::ContentPart>& out_;
  std::size_t first_;
};

// ---- writing ----

Error write_error(const WriteOptions& o, std::string message) {
  Error e(o.error_kind, std::move(message));
  if (o.error_kind == ErrorKind::kBadRequest) {
    return std::move(e).with_param("messages");
  }
  return e;
}

std::string_view guess_image_type(std::string_view url) {
  url = url.substr(0, url.find_first_of("?#"));
  const std::size_t dot = url.rfind('.');
  const std::string_view ext = dot == std::string_view::npos ? "" : url.substr(dot + 1);
  struct Ext {
    std::string_view ext;
    std::string_view type;
  };
  static constexpr Ext kTypes[] = {{"png", "image/png"},   {"gif", "image/gif"},
                                   {"webp", "image/webp"}, {"jpg", "image/jpeg"},
                                   {"jpeg", "image/jpeg"}, {"heic", "image/heic"}};
  for (const Ext& e : kTypes) {
    if (e.ext.size() == ext.size()) {
      bool same = true;
      for (std::size_t i = 0; i < ext.size(); ++i) {
        char c = ext[i];
        c = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
        same = same && c == e.ext[i];
      }
      if (same) {
        return e.type;
      }
    }
  }
  return "image/jpeg";
}

void write_inline(codec::JsonWriter& w, const ir::ContentPart& image) {
  w.raw(R"({"inlineData":{"mimeType":)")
      .string(image.media_type)
      .raw(R"(,"data":)")
      .string(image.source)
      .raw("}");
}

class Writer {
 public:
  Writer(std::string& out, const WriteOptions& options, WriteStats& stats)
      : w_(out), options_(options), stats_(stats) {}

  Result<void> write(std::span<const ir::ContentPart> content, std::size_t& written) {
    w_.ch('[');
    for (std::size_t i = 0; i < content.size(); ++i) {
      const ir::ContentPart& p = content[i];
      const ir::ContentPart* next = i + 1 < content.size() ? &content[i + 1] : nullptr;
      if (auto r = part(p, next); !r) {
        return r;
      }
    }
    w_.ch(']');
    written = count_;
    return {};
  }

 private:
  static bool carries_signature(const ir::ContentPart* p) {
    return p != nullptr && ((p->kind == ir::PartKind::kText && !p->text.empty()) ||
                            p->kind == ir::PartKind::kToolCall);
  }

  void begin() {
    if (count_++ > 0) {
      w_.ch(',');
    }
  }
  // Closes a part object, with the signature it carries.
  void end(std::string_view signature) {
    if (!signature.empty()) {
      w_.raw(R"(,"thoughtSignature":)").string(signature);
    }
    w_.ch('}');
  }
  std::string_view take_signature() {
    const std::string_view s = pending_signature_;
    pending_signature_ = {};
    return s;
  }

  Result<void> part(const ir::ContentPart& p, const ir::ContentPart* next) {
    switch (p.kind) {
      case ir::PartKind::kText:
        if (p.text.empty()) {
          ++stats_.dropped_empty;
          return {};
        }
        begin();
        w_.raw(R"({"text":)").string(p.text);
        end(take_signature());
        return {};
      case ir::PartKind::kReasoning: {
        const bool carried = !p.signature.empty() && carries_signature(next);
        if (!p.text.empty() || (!p.signature.empty() && !carried)) {
          begin();
          w_.raw(R"({"text":)").string(p.text).raw(R"(,"thought":true)");
          end(carried ? std::string_view() : std::string_view(p.signature));
        }
        if (carried) {
          pending_signature_ = p.signature;
        }
        return {};
      }
      case ir::PartKind::kRedactedReasoning:
        ++stats_.dropped_redacted;
        return {};
      case ir::PartKind::kToolCall:
        return tool_call(p);
      case ir::PartKind::kToolResult:
        return tool_result(p);
      case ir::PartKind::kImage:
        return image(p);
    }
    return {};
  }

  Result<void> tool_call(const ir::ContentPart& p) {
    if (p.name.empty()) {
      return write_error(options_, "a tool call needs a name; Gemini pairs results by it");
    }
    if (!p.arguments.empty() && !wire::is_json_object(p.arguments)) {
      return write_error(options_, "tool call '" + p.name +
                                       "' has arguments that are not a JSON object; Gemini "
                                       "function calls take an object");
    }
    begin();
    w_.raw(R"({"functionCall":{"name":)")
        .string(p.name)
        .raw(R"(,"args":)")
        .raw(p.arguments.empty() ? std::string_view("{}") : std::string_view(p.arguments));
    if (options_.call_ids && !p.id.empty()) {
      w_.raw(R"(,"id":)").string(p.id);
    }
    w_.ch('}');
    end(take_signature());
    return {};
  }

  // Gemini needs the MIME type of inline data; a URL's type may be guessed.
  Result<void> check_image(const ir::ContentPart& p) const {
    const bool typed = p.media_type.starts_with("image/");
    if (p.image_is_url ? !(typed || p.media_type.empty()) : !typed) {
      return write_error(options_, "image of type '" + p.media_type +
                                       "' cannot be sent to Gemini; an image/* type is needed");
    }
    return {};
  }

  Result<void> tool_result(const ir::ContentPart& p) {
    if (options_.result_name == nullptr) {
      return write_error(options_, "a response cannot contain tool results");
    }
    const std::string_view name = (*options_.result_name)(p.id);
    if (name.empty()) {
      return write_error(options_, "tool result '" + p.id +
                                       "' answers no tool call of this conversation; Gemini "
                                       "needs the name of the function it answers");
    }
    std::string text;
    for (const ir::ContentPart& c : p.parts) {
      if (c.kind == ir::PartKind::kText) {
        text.append(c.text);
      } else if (c.kind != ir::PartKind::kImage || c.image_is_url) {
        return write_error(options_, "tool result '" + p.id +
                                         "' holds content Gemini cannot take (only text and "
                                         "base64 images)");
      } else if (auto r = check_image(c); !r) {
        return r;
      }
    }
    begin();
    w_.raw(R"({"functionResponse":{"name":)").string(name).raw(R"(,"response":)");
    if (wire::is_json_object(text)) {
      w_.raw(text);
    } else {
      w_.raw(p.is_error ? R"({"error":)" : R"({"output":)").string(text).ch('}');
    }
    bool first_media = true;
    for (const ir::ContentPart& c : p.parts) {
      if (c.kind == ir::PartKind::kImage) {
        w_.raw(first_media ? R"(,"parts":[)" : ",");
        first_media = false;
        write_inline(w_, c);
        w_.ch('}');
      }
    }
    if (!first_media) {
      w_.ch(']');
    }
    w_.ch('}');
    end(take_signature());
    return {};
  }

  Result<void> image(const ir::ContentPart& p) {
    if (options_.result_name == nullptr) {
      return write_error(options_, "a response cannot contain images");
    }
    if (auto r = check_image(p); !r) {
      return r;
    }
    begin();
    if (p.image_is_url) {
      w_.raw(R"({"fileData":{"mimeType":)")
          .string(p.media_type.empty() ? guess_image_type(p.source)
                                       : std::string_view(p.media_type))
          .raw(R"(,"fileUri":)")
          .string(p.source)
          .ch('}');
    } else {
      write_inline(w_, p);
    }
    end(take_signature());
    return {};
  }

  codec::JsonWriter w_;
  const WriteOptions& options_;
  WriteStats& stats_;
  std::string_view pending_signature_;
  std::size_t count_ = 0;
};

}  // namespace

Result<void> read_parts(const json::value& parts, Source source, const std::string& path,
                        CallIds& ids, std::vector<ir::ContentPart>& out) {
  return Reader(source, ids, out).read(parts, path);
}

Result<void> write_parts(std::string& out, std::span<const ir::ContentPart> content,
                         const WriteOptions& options, WriteStats& stats, std::size_t& written) {
  return Writer(out, options, stats).write(content, written);
}

}  // namespace sluice::protocol::gemini::parts
