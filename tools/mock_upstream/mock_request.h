#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::mock {

// Request headers as (name, value) views in wire order. Names keep their wire case; use
// find_header for lookups.
using HeaderList = std::vector<std::pair<std::string_view, std::string_view>>;

// A received request, as views into storage owned by the connection (the parsed message).
// Valid only while the connection is handling this request.
struct MockRequest {
  std::string_view method;
  std::string_view target;
  HeaderList headers;
  std::string_view body;
};

// ASCII case-insensitive equality (header names).
bool iequals(std::string_view a, std::string_view b);

// `out` = `in` with ASCII letters lower-cased (reuses `out`'s capacity).
void assign_lower(std::string& out, std::string_view in);

// The value of the first header named `name` (ASCII case-insensitive), or nullopt.
std::optional<std::string_view> find_header(const HeaderList& headers, std::string_view name);

// `target` without its query string or fragment.
std::string_view path_of(std::string_view target);

// The query parameters of `target` in order, names and values percent-decoded ('+' is a
// space). A parameter without '=' has an empty value.
std::vector<std::pair<std::string, std::string>> query_params(std::string_view target);

// The value of the first query parameter named `name` (exact, after decoding), or nullopt.
std::optional<std::string> query_param(std::string_view target, std::string_view name);

}  // namespace sluice::mock
