#pragma once

#include <string_view>

#include "core/function_ref.h"

namespace sluice::codec {

// A caller's HTTP request head as the protocol and pipeline layers see it: read-only, without
// the transport's types. The server implements it over its parser's head; tests implement it
// over a map. Views returned are valid as long as the head is (the whole request).
class RequestHead {
 public:
  virtual ~RequestHead() = default;

  virtual std::string_view method() const = 0;
  // The request target as sent: path, then '?' and the query when there is one.
  virtual std::string_view target() const = 0;
  // The value of the first field named `name` (case-insensitive), or "" when there is none.
  virtual std::string_view header(std::string_view name) const = 0;
  virtual bool has_header(std::string_view name) const = 0;
  // Every field in order, repeated names included.
  virtual void for_each_header(
      FunctionRef<void(std::string_view name, std::string_view value)> visit) const = 0;

  std::string_view path() const {
    const std::string_view t = target();
    return t.substr(0, t.find('?'));
  }
  std::string_view query() const {
    const std::string_view t = target();
    const std::size_t q = t.find('?');
    return q == std::string_view::npos ? std::string_view() : t.substr(q + 1);
  }
};

}  // namespace sluice::codec
