#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <boost/json/monotonic_resource.hpp>

#include "codec/json_read.h"
#include "core/result.h"
#include "ir/request.h"

namespace sluice::protocol {

// Checks and errors the request encoders of anthropic/ and bedrock_converse/ share: both take
// a tool call's arguments and a tool's schema as JSON objects, want ids on tool calls and
// results, and accept temperature and top_p in [0, 1]. Every error is ErrorKind::kBadRequest,
// worded for the caller, with param() naming the field. Pure functions.

// A JSON Schema for "any object": what a tool without parameters is sent with.
inline constexpr std::string_view kEmptySchema = R"({"type":"object"})";

// ErrorKind::kBadRequest with `message` and param() = `param`.
Error bad_request(std::string message, std::string param);

// "<field> <value> is out of range for this model: its provider (<provider>) accepts 0 to 1",
// the value in its shortest form (param `field`).
Error out_of_unit_range(std::string_view field, double value, std::string_view provider);

enum class JsonCheck { kObject, kNotObject, kInvalid, kTooDeep };

// Whether `text` is a JSON object no deeper than `max_depth` (codec::parse_json). Inline:
// sluice_protocol_api does not link Boost.JSON, the codec libraries that call it do.
inline JsonCheck check_object(std::string_view text, std::size_t max_depth) {
  unsigned char arena[2048];
  boost::json::monotonic_resource mr(arena, sizeof arena);
  boost::system::error_code ec;
  const boost::json::value v = codec::parse_json(text, ec, &mr, max_depth);
  if (ec == boost::json::error::too_deep) {
    return JsonCheck::kTooDeep;
  }
  if (ec) {
    return JsonCheck::kInvalid;
  }
  return v.is_object() ? JsonCheck::kObject : JsonCheck::kNotObject;
}

// "tool call '<id>' (<name>)", for error messages.
std::string describe_call(const ir::ContentPart& call);

// An error ("messages") for a tool call without an id, or for a tool result without one; {}
// otherwise. The id pairs a result with its call on both upstreams.
Result<void> require_call_id(const ir::ContentPart& call);
Result<void> require_result_id(const ir::ContentPart& result);

// The error ("messages") for a tool call whose arguments checked as `check` (nesting limit
// `max_depth`); {} for JsonCheck::kObject.
Result<void> check_arguments(const ir::ContentPart& call, JsonCheck check, std::size_t max_depth);

// The error (param "tools[<i>]" = `param`) for tool `tool` whose schema checked as `check`
// (nesting limit `max_depth`); {} for JsonCheck::kObject.
Result<void> check_schema(const ir::Tool& tool, JsonCheck check, std::size_t max_depth,
                          const std::string& param);

// The error ("messages") for image data of a media type other than image/jpeg, image/png,
// image/gif and image/webp, the four both upstreams take.
Error unsupported_image_type(const std::string& media_type);

// A guess at the size of an encoded body for `request` (escaping included), to reserve once.
std::size_t estimate_request_size(const ir::Request& request);

}  // namespace sluice::protocol
