#pragma once

#include <cstddef>
#include <string>
#include <string_view>

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

// The required string field `model`, with OpenAI's messages when it is missing or not a string.
Result<std::string> read_model(const boost::json::object& obj);

}  // namespace sluice::mock
