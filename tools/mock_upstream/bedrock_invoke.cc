#include "bedrock_invoke.h"

#include <memory>
#include <string>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "anthropic_responder.h"
#include "bedrock_responder.h"
#include "codec/base64.h"
#include "codec/eventstream_writer.h"

namespace sluice::mock {
namespace {

// The Anthropic responder's SSE events, each re-framed as Bedrock sends them.
class InvokeStream final : public EventSource {
 public:
  explicit InvokeStream(std::unique_ptr<EventSource> sse) : sse_(std::move(sse)) {}

  bool next(std::string& out, EventKind& kind) override {
    block_.clear();
    if (!sse_->next(block_, kind)) {
      return false;
    }
    const std::size_t data = block_.find("data: ");
    const std::size_t end = data == std::string::npos ? data : block_.find('\n', data);
    const std::string json =
        data == std::string::npos ? std::string("{}") : block_.substr(data + 6, end - data - 6);
    if (block_.starts_with("event: error")) {
      codec::append_event_stream_exception("modelStreamErrorException", json, out);
      return true;
    }
    std::string payload = R"({"bytes":")";
    codec::append_base64(payload, json);
    payload.append("\"}");
    codec::append_event_stream_event("chunk", payload, out);
    return true;
  }

 private:
  std::unique_ptr<EventSource> sse_;
  std::string block_;
};

Error validation(std::string message) {
  return Error(ErrorKind::kBadRequest, std::move(message));  // a ValidationException by its status
}

}  // namespace

Result<Reply> respond_bedrock_invoke(std::string_view body, std::string_view model_id,
                                     const ReplySpec& spec, bool stream) {
  if (auto ok = check_bedrock_model_id(model_id); !ok) {
    return ok.error();
  }
  boost::system::error_code ec;
  boost::json::value doc = boost::json::parse(body, ec);
  if (ec || !doc.is_object()) {
    return validation("Malformed input request, please reformat your input and try again.");
  }
  boost::json::object& o = doc.get_object();
  const boost::json::value* version = o.if_contains("anthropic_version");
  if (version == nullptr || !version->is_string() ||
      version->get_string() != "bedrock-2023-05-31") {
    return validation("Malformed input request: anthropic_version: must be bedrock-2023-05-31");
  }
  for (const char* extraneous : {"model", "stream"}) {
    if (o.contains(extraneous)) {
      return validation(std::string("Malformed input request: #: extraneous key [") + extraneous +
                        "] is not permitted, please reformat your input and try again.");
    }
  }
  o.erase("anthropic_version");
  o["model"] = model_id;
  o["stream"] = stream;
  auto reply = respond_anthropic_messages(boost::json::serialize(doc), spec);
  if (!reply || !stream) {
    return reply;
  }
  return stream_reply(std::make_unique<InvokeStream>(std::move(reply->stream)),
                      "application/vnd.amazon.eventstream");
}

}  // namespace sluice::mock
