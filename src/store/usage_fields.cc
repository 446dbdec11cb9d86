#include "store/usage_fields.h"

#include <boost/json.hpp>

namespace sluice::store {

const std::vector<std::string_view>& usage_columns() {
  static const std::vector<std::string_view> columns = [] {
    std::vector<std::string_view> names;
    const UsageRecord record;
    visit_usage_fields(record, [&](std::string_view name, const auto&) { names.push_back(name); });
    return names;
  }();
  return columns;
}

std::string encode_attempts(const std::vector<AttemptRecord>& attempts) {
  boost::json::array out;
  out.reserve(attempts.size());
  for (const AttemptRecord& a : attempts) {
    out.push_back(boost::json::object{
        {"provider", a.provider},
        {"model", a.model},
        {"path", a.path},
        {"status", a.status},
        {"error_class", a.error_class},
        {"acquire_us", a.acquire_us},
        {"first_byte_us", a.first_byte_us},
        {"duration_us", a.duration_us},
        {"backoff_ms", a.backoff_ms},
        {"reused_connection", a.reused_connection},
    });
  }
  return boost::json::serialize(out);
}

namespace {

Error bad_attempts(std::string_view why) {
  return Error(ErrorKind::kInternal, "stored attempts are not valid: " + std::string(why));
}

}  // namespace

Result<std::vector<AttemptRecord>> decode_attempts(std::string_view json) {
  boost::system::error_code ec;
  const boost::json::value parsed = boost::json::parse(json, ec);
  if (ec) {
    return bad_attempts(ec.message());
  }
  const boost::json::array* array = parsed.if_array();
  if (array == nullptr) {
    return bad_attempts("not a JSON array");
  }
  std::vector<AttemptRecord> attempts;
  attempts.reserve(array->size());
  for (const boost::json::value& item : *array) {
    const boost::json::object* o = item.if_object();
    if (o == nullptr) {
      return bad_attempts("an attempt is not an object");
    }
    AttemptRecord a;
    bool ok = true;
    auto text = [&](std::string_view name, std::string& out) {
      if (const boost::json::value* v = o->if_contains(name)) {
        if (const boost::json::string* s = v->if_string()) {
          out.assign(s->data(), s->size());
        } else {
          ok = false;
        }
      }
    };
    auto integer = [&](std::string_view name, auto& out) {
      if (const boost::json::value* v = o->if_contains(name)) {
        if (const std::int64_t* i = v->if_int64()) {
          out = static_cast<std::remove_reference_t<decltype(out)>>(*i);
        } else {
          ok = false;
        }
      }
    };
    text("provider", a.provider);
    text("model", a.model);
    text("path", a.path);
    integer("status", a.status);
    text("error_class", a.error_class);
    integer("acquire_us", a.acquire_us);
    integer("first_byte_us", a.first_byte_us);
    integer("duration_us", a.duration_us);
    integer("backoff_ms", a.backoff_ms);
    if (const boost::json::value* v = o->if_contains("reused_connection")) {
      if (const bool* b = v->if_bool()) {
        a.reused_connection = *b;
      } else {
        ok = false;
      }
    }
    if (!ok) {
      return bad_attempts("a field has the wrong type");
    }
    attempts.push_back(std::move(a));
  }
  return attempts;
}

}  // namespace sluice::store
