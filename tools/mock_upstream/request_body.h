#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "core/result.h"

namespace sluice::mock {

// A 400 in OpenAI's vocabulary, with `param` naming the offending field when given.
Error bad_request(std::string message, std::string param = {});

// Parses a request body that must be a JSON object. The document allocates from `mr`, which
// must outlive it.
Result<boost::json::value> parse_request_object(std::string_view body,
                                                boost::json::monotonic_resource& mr,
                                                std::size_t max_depth);

// Parses `body` as a JSON object into a stack arena (small requests never touch the heap;
// large ones spill over transparently) and returns read(object), which must not keep
// references into it. A body that does not parse, or is not an object, is a kBadRequest;
// with a non-empty `parse_failure` its message is that text followed by the parser's.
template <class Read>
auto read_request_object(std::string_view body, Read&& read, std::string_view parse_failure = {})
    -> decltype(read(std::declval<const boost::json::object&>())) {
  unsigned char scratch[4096];
  boost::json::monotonic_resource mr(scratch, sizeof scratch);
  auto root = parse_request_object(body, mr, 128);
  if (!root) {
    if (parse_failure.empty()) {
      return root.error();
    }
    return bad_request(std::string(parse_failure) + " (mock: " + root.error().message() + ")");
  }
  return read(root->get_object());
}

// The required string field `model`, with OpenAI's messages when it is missing or not a string.
Result<std::string> read_model(const boost::json::object& obj);

}  // namespace sluice::mock
