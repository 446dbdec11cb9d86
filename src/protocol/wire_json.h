#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "codec/json_compact.h"
#include "codec/json_read.h"
#include "core/result.h"
#include "ir/usage.h"
#include "protocol/drift.h"

// Readers for upstream answer JSON that the folders' own wire_json.h share (anthropic/,
// bedrock_converse/). Every failure is ErrorKind::kUpstreamProtocol: these bytes come from an
// upstream. Header-only: sluice_protocol_api does not link Boost.JSON, the codec libraries
// that include this do.
namespace sluice::protocol::wire {

// ErrorKind::kUpstreamProtocol with `message`.
inline Error upstream_error(std::string message) {
  return Error(ErrorKind::kUpstreamProtocol, std::move(message));
}

// Parses an upstream's complete answer `body`, allocating from `arena` (nesting limit
// codec::kMaxJsonDepth): a document that holds an object, or "upstream <what> is not valid JSON:
// <reason>" / "upstream <what> is not a JSON object". The document must not outlive `arena`.
inline Result<boost::json::value> parse_answer(std::string_view body, std::string_view what,
                                               codec::SmallDocumentArena& arena) {
  boost::system::error_code ec;
  boost::json::value doc = codec::parse_json(body, ec, &arena.resource);
  if (ec) {
    return upstream_error("upstream " + std::string(what) + " is not valid JSON: " + ec.message());
  }
  if (!doc.is_object()) {
    return upstream_error("upstream " + std::string(what) + " is not a JSON object");
  }
  return doc;
}

// The string at `key`, or nullopt when absent, null or not a string. The view points into `o`.
inline std::optional<std::string_view> string_at(const boost::json::object& o,
                                                 std::string_view key) {
  const boost::json::value* v = o.if_contains(key);
  if (v == nullptr || !v->is_string()) {
    return std::nullopt;
  }
  return std::string_view(v->get_string().data(), v->get_string().size());
}

// A tool call's input (`input`: null when absent) as arguments JSON text: an object -> its
// compact JSON text, absent or null -> "{}". Anything else fails with "upstream <block> input is
// not an object".
inline Result<void> tool_input(const boost::json::value* input, std::string_view block,
                               std::string& arguments) {
  if (input == nullptr || input->is_null()) {
    arguments = "{}";
  } else if (input->is_object()) {
    codec::append_compact_json(arguments, *input);
  } else {
    return upstream_error("upstream " + std::string(block) + " input is not an object");
  }
  return {};
}

// One token count of a usage object: its key and where it goes.
struct CountField {
  std::string_view key;
  std::uint64_t* target;
};

// Merges the counts of a usage object into their targets: fields present overwrite, absent or
// null ones stay; then counts the object's members not in `known` in `drift`. Fails when
// `value` is not an object ("upstream usage is not an object") or a count is not a
// non-negative integer ("upstream usage.<key> is not a non-negative integer").
inline Result<void> read_usage_counts(const boost::json::value& value,
                                      std::span<const CountField> fields, FieldNames known,
                                      Drift& drift) {
  if (!value.is_object()) {
    return upstream_error("upstream usage is not an object");
  }
  const boost::json::object& o = value.get_object();
  for (const CountField& f : fields) {
    const boost::json::value* v = o.if_contains(f.key);
    if (v == nullptr || v->is_null()) {
      continue;
    }
    auto n = codec::as_count(*v);
    if (!n) {
      return upstream_error("upstream usage." + std::string(f.key) +
                            " is not a non-negative integer");
    }
    *f.target = *n;
  }
  drift.fields(o, known);
  return {};
}

// IR usage from counts whose input EXCLUDES the cache reads and writes (Anthropic's usage,
// Converse's TokenUsage): input = input + cache_read + cache_write (the IR's input counts every
// prompt token). reasoning_tokens stays 0. "usage cannot be converted: token counts overflow"
// when the sum does not fit.
inline Result<ir::Usage> usage_from_uncached(std::uint64_t input, std::uint64_t cache_read,
                                             std::uint64_t cache_write, std::uint64_t output) {
  ir::Usage u;
  const std::uint64_t partial = input + cache_read;
  u.input_tokens = partial + cache_write;
  if (partial < input || u.input_tokens < partial) {
    return upstream_error("usage cannot be converted: token counts overflow");
  }
  u.output_tokens = output;
  u.cache_read_tokens = cache_read;
  u.cache_write_tokens = cache_write;
  return u;
}

}  // namespace sluice::protocol::wire
