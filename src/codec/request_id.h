#pragma once

#include <string_view>

namespace sluice::codec {

// Whether a caller's X-Request-Id may be kept as the request's id: 1 to 128 visible ASCII
// characters, without '"' or '\' (ids are echoed in headers and written into JSON logs and the
// audit log). Anything else is replaced by an id of the gateway's own, so a caller's id can be
// correlated across systems but never bloats or breaks a log line. Used by the data plane's
// session and the admin listener.
bool acceptable_request_id(std::string_view id);

}  // namespace sluice::codec
