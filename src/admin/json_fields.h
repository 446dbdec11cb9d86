#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "core/result.h"

namespace sluice::admin {

// A request body's object, read field by field: each getter checks the field's type and range,
// and finish() refuses the fields nobody asked for (a misspelt field is an error, not silently
// ignored). Errors are 400 invalid_request naming the field ("keys[0].rpm: expected an
// integer"); after the first, every getter answers "absent" and finish() returns that one.
class JsonFields {
 public:
  // `where` prefixes field names in messages ("budget.", "keys[1]."); `object` must outlive
  // this reader.
  JsonFields(const boost::json::object& object, std::string where);

  // Whether the field is present (and marks it read).
  bool has(std::string_view name);
  const boost::json::value* get(std::string_view name);
  // Absent or null: nullopt.
  std::optional<std::string> string(std::string_view name);
  // Absent: nullopt; null: a held nullopt; below `min`: an error.
  std::optional<std::optional<std::int64_t>> integer(std::string_view name, std::int64_t min);
  // As integer(), a null read as 0, and at most `max`.
  std::optional<std::uint64_t> count(std::string_view name, std::uint64_t max = INT64_MAX);
  std::optional<bool> boolean(std::string_view name);
  // Sorted, without duplicates; null: empty.
  std::optional<std::vector<std::string>> string_list(std::string_view name, std::size_t max_items);
  // An RFC 3339 time as unix ms; null: a held nullopt.
  std::optional<std::optional<std::int64_t>> time(std::string_view name);
  // Records an error about field `name` (the first one is kept).
  std::nullopt_t fail(std::string_view name, std::string_view what);

  // The first error, else the first field no getter read.
  Result<void> finish() const;

 private:
  std::nullopt_t type_error(std::string_view name, std::string_view expected);

  const boost::json::object& object_;
  std::string where_;
  std::vector<std::string_view> seen_;
  std::optional<Error> error_;
};

// 400 invalid_request with `message`.
Error invalid_request(std::string message);

}  // namespace sluice::admin
