// protocol/openai_chat/envelope.h: decode_chat_request and decode_embeddings_request on
// arbitrary bytes. What they accept must be a JSON object whose decoded fields agree with the
// document the gateway itself would build from it (ChatRequest::document()), and
// encode_upstream_body must turn it into valid JSON that is the same document with "model"
// replaced (and, when forced, stream_options.include_usage set), both with and without
// force_include_usage.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <boost/json/value.hpp>

#include "fuzz_support.h"
#include "protocol/openai_chat/envelope.h"

namespace {

namespace json = boost::json;
namespace oc = sluice::protocol::openai_chat;
using sluice::fuzz::check;

// Quote, backslash and a non-ASCII character: the spliced value must be escaped.
constexpr std::string_view kUpstreamModel = "up\"stream\\model-\xC3\xA9";

void check_request(const oc::ChatRequest& req, std::string_view body) {
  const json::value doc = sluice::fuzz::expect_json(body, "accepted body is not valid JSON");
  check(doc.is_object(), "accepted body is not an object");
  const json::object& obj = doc.get_object();
  const json::value* model = obj.if_contains("model");
  check(model != nullptr && model->is_string() && model->get_string() == req.model,
        "decoded model differs from the document's", req.model);
  const json::value* stream = obj.if_contains("stream");
  check(req.stream == (stream != nullptr && stream->is_bool() && stream->get_bool()),
        "decoded stream differs from the document's");

  for (const bool force : {false, true}) {
    const std::string up = oc::encode_upstream_body(req, kUpstreamModel, force);
    const json::value out = sluice::fuzz::expect_json(up, "upstream body is not valid JSON");
    json::value expected = doc;
    expected.get_object()["model"] = kUpstreamModel;
    if (force && req.stream && !req.include_usage) {
      json::value& so = expected.get_object()["stream_options"];
      if (!so.is_object()) {
        so = json::object();
      }
      so.get_object()["include_usage"] = true;
    }
    // Not out == expected: Boost.JSON reads a number such as 0e774466 as NaN, which is never
    // equal to itself, though the bytes went through untouched.
    check(sluice::fuzz::same_but_float_rounding(out, expected),
          "upstream body is not the request with model (and usage) set", up);
    if (force && req.stream) {
      // Usage must be metered whatever stream_options the caller sent.
      const json::value* so = out.get_object().if_contains("stream_options");
      const json::value* iu = so != nullptr && so->is_object()
                                  ? so->get_object().if_contains("include_usage")
                                  : nullptr;
      check(iu != nullptr && iu->is_bool() && iu->get_bool(),
            "forced include_usage missing from a streaming upstream body", up);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  if (auto req = oc::decode_chat_request(body)) {
    check_request(*req, body);
  }
  if (auto req = oc::decode_embeddings_request(body)) {
    check_request(*req, body);
  }
  return 0;
}
