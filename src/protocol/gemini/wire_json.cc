#include "protocol/gemini/wire_json.h"

#include <string>

#include <boost/json/monotonic_resource.hpp>

#include "codec/json_read.h"
#include "protocol/gemini/errors.h"

namespace sluice::protocol::gemini::wire {
namespace json = boost::json;

namespace {

Error protocol_error(std::string message) {
  return Error(ErrorKind::kUpstreamProtocol, std::move(message));
}

}  // namespace

const json::value* member(const json::object& o, std::string_view camel) {
  const json::value* v = o.if_contains(camel);
  if (v == nullptr) {
    bool has_upper = false;
    for (char c : camel) {
      has_upper = has_upper || (c >= 'A' && c <= 'Z');
    }
    if (has_upper) {
      // The names looked up are short literals: spelt on the stack, not the heap (this runs
      // for every absent field of every chunk).
      char stack[64];
      std::string heap;
      char* snake = stack;
      if (camel.size() * 2 > sizeof stack) {
        heap.resize(camel.size() * 2);
        snake = heap.data();
      }
      std::size_t n = 0;
      for (char c : camel) {
        if (c >= 'A' && c <= 'Z') {
          snake[n++] = '_';
          snake[n++] = static_cast<char>(c - 'A' + 'a');
        } else {
          snake[n++] = c;
        }
      }
      v = o.if_contains(std::string_view(snake, n));
    }
  }
  return v == nullptr || v->is_null() ? nullptr : v;
}

std::optional<std::string_view> string_member(const json::object& o, std::string_view camel) {
  const json::value* v = member(o, camel);
  if (v == nullptr || !v->is_string()) {
    return std::nullopt;
  }
  return std::string_view(v->get_string().data(), v->get_string().size());
}

const json::object* object_member(const json::object& o, std::string_view camel, bool& bad) {
  const json::value* v = member(o, camel);
  if (v == nullptr) {
    return nullptr;
  }
  if (!v->is_object()) {
    bad = true;
    return nullptr;
  }
  return &v->get_object();
}

Result<void> read_usage(const json::value& value, WireUsage& usage) {
  if (!value.is_object()) {
    return protocol_error("upstream usageMetadata is not an object");
  }
  const json::object& o = value.get_object();
  struct Field {
    std::string_view key;
    std::uint64_t* target;
  };
  const Field fields[] = {
      {"promptTokenCount", &usage.prompt},
      {"cachedContentTokenCount", &usage.cached_content},
      {"candidatesTokenCount", &usage.candidates},
      {"thoughtsTokenCount", &usage.thoughts},
      {"toolUsePromptTokenCount", &usage.tool_use_prompt},
      {"totalTokenCount", &usage.total},
  };
  for (const Field& f : fields) {
    const json::value* v = member(o, f.key);
    if (v == nullptr) {
      continue;
    }
    auto n = codec::as_count(*v);
    if (!n) {
      return protocol_error("upstream usageMetadata." + std::string(f.key) +
                            " is not a non-negative integer");
    }
    *f.target = *n;
  }
  return {};
}

Result<ir::Usage> ir_usage(const json::value& value) {
  WireUsage usage;
  if (auto r = read_usage(value, usage); !r) {
    return std::move(r).error();
  }
  return from_wire_usage(usage);
}

std::string join(std::string_view base, std::string_view field) {
  std::string out(base);
  out.push_back('.');
  out.append(field);
  return out;
}

std::string index(std::string_view base, std::size_t i) {
  std::string out(base);
  out.push_back('[');
  out.append(std::to_string(i));
  out.push_back(']');
  return out;
}

Error request_error(std::string path, std::string_view problem) {
  std::string message = "* GenerateContentRequest.";
  message.append(path).append(": ").append(problem);
  return Error(ErrorKind::kBadRequest, std::move(message)).with_param(std::move(path));
}

Error untranslatable(std::string path, std::string_view what) {
  std::string problem = "'";
  problem.append(what).append("' cannot be translated for this model's provider");
  return request_error(std::move(path), problem);
}

bool is_json_object(std::string_view text) {
  unsigned char arena[2048];
  json::monotonic_resource mr(arena, sizeof arena);
  boost::system::error_code ec;
  const json::value v = codec::parse_json(text, ec, &mr, kMaxJsonDepth);
  return !ec && v.is_object();
}

std::optional<Error> upstream_error(const json::object& root) {
  const json::value* e = root.if_contains("error");
  if (e == nullptr || !e->is_object()) {
    return std::nullopt;
  }
  const json::object& err = e->get_object();
  int code = 500;
  if (const json::value* c = err.if_contains("code")) {
    if (auto n = codec::as_count(*c); n && *n <= 999) {
      code = static_cast<int>(*n);
    }
  }
  std::string message(string_member(err, "message").value_or("upstream reported an error"));
  return error_from_wire(code, std::move(message), string_member(err, "status").value_or(""));
}

}  // namespace sluice::protocol::gemini::wire
