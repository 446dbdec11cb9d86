#include "admin/json_fields.h"

#include <algorithm>
#include <limits>

#include <boost/json/value.hpp>
#include <fmt/format.h>

#include "core/time_zone.h"

namespace sluice::admin {

namespace json = boost::json;

Error invalid_request(std::string message) {
  return Error(ErrorKind::kBadRequest, 400, std::move(message)).with_code("invalid_request");
}

JsonFields::JsonFields(const json::object& object, std::string where)
    : object_(object), where_(std::move(where)) {}

bool JsonFields::has(std::string_view name) {
  seen_.emplace_back(name);
  return object_.contains(name);
}

const json::value* JsonFields::get(std::string_view name) {
  return has(name) && !error_ ? &object_.at(name) : nullptr;
}

std::optional<std::string> JsonFields::string(std::string_view name) {
  const json::value* v = get(name);
  if (v == nullptr || v->is_null()) {
    return std::nullopt;
  }
  if (!v->is_string()) {
    return type_error(name, "a string");
  }
  return std::string(v->as_string());
}

std::optional<std::optional<std::int64_t>> JsonFields::integer(std::string_view name,
                                                               std::int64_t min) {
  const json::value* v = get(name);
  if (v == nullptr) {
    return std::nullopt;
  }
  if (v->is_null()) {
    return std::optional<std::int64_t>();
  }
  std::int64_t out = 0;
  if (v->is_int64()) {
    out = v->as_int64();
  } else if (v->is_uint64() && v->as_uint64() <= static_cast<std::uint64_t>(
                                                     std::numeric_limits<std::int64_t>::max())) {
    out = static_cast<std::int64_t>(v->as_uint64());
  } else {
    return type_error(name, "an integer");
  }
  if (out < min) {
    return fail(name, fmt::format("must be at least {}", min));
  }
  return std::optional<std::int64_t>(out);
}

std::optional<std::uint64_t> JsonFields::count(std::string_view name, std::uint64_t max) {
  auto v = integer(name, 0);
  if (!v) {
    return std::nullopt;
  }
  return std::min(static_cast<std::uint64_t>(v->value_or(0)), max);
}

std::optional<bool> JsonFields::boolean(std::string_view name) {
  const json::value* v = get(name);
  if (v == nullptr) {
    return std::nullopt;
  }
  if (!v->is_bool()) {
    return type_error(name, "true or false");
  }
  return v->as_bool();
}

std::optional<std::vector<std::string>> JsonFields::string_list(std::string_view name,
                                                                std::size_t max_items) {
  const json::value* v = get(name);
  if (v == nullptr) {
    return std::nullopt;
  }
  if (v->is_null()) {
    return std::vector<std::string>{};
  }
  if (!v->is_array() || v->as_array().size() > max_items) {
    return type_error(name, fmt::format("an array of at most {} strings", max_items));
  }
  std::vector<std::string> out;
  for (const json::value& item : v->as_array()) {
    if (!item.is_string() || item.as_string().empty()) {
      return type_error(name, "an array of non-empty strings");
    }
    out.emplace_back(item.as_string());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::optional<std::optional<std::int64_t>> JsonFields::time(std::string_view name) {
  const json::value* v = get(name);
  if (v == nullptr) {
    return std::nullopt;
  }
  if (v->is_null()) {
    return std::optional<std::int64_t>();
  }
  if (!v->is_string()) {
    return type_error(name, "an RFC 3339 time (\"2027-01-31T00:00:00Z\")");
  }
  auto ms = parse_rfc3339_ms(v->as_string());
  if (!ms) {
    return fail(name, ms.error().message());
  }
  return std::optional<std::int64_t>(*ms);
}

std::nullopt_t JsonFields::fail(std::string_view name, std::string_view what) {
  if (!error_) {
    error_ = invalid_request(fmt::format("{}{}: {}", where_, name, what));
  }
  return std::nullopt;
}

std::nullopt_t JsonFields::type_error(std::string_view name, std::string_view expected) {
  return fail(name, fmt::format("expected {}", expected));
}

Result<void> JsonFields::finish() const {
  if (error_) {
    return *error_;
  }
  for (const auto& [name, value] : object_) {
    if (std::find(seen_.begin(), seen_.end(), std::string_view(name)) == seen_.end()) {
      return invalid_request(fmt::format("{}{}: unknown field", where_, std::string_view(name)));
    }
  }
  return {};
}

}  // namespace sluice::admin
