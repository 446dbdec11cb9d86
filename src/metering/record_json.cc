#include "metering/record_json.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "store/usage_fields.h"

namespace sluice::metering {

namespace json = boost::json;

namespace {

// The spool uses the store's own field list (store/usage_fields.h), so a field added to the
// record and its table is spooled too, under the column's name.
struct Writer {
  json::object& out;
  void operator()(std::string_view name, const std::vector<store::AttemptRecord>& attempts) const {
    out[name] = json::parse(store::encode_attempts(attempts));
  }
  template <class T>
  void operator()(std::string_view name, const T& value) const {
    out[name] = value;
  }
};

struct Reader {
  const json::object& in;
  bool ok = true;
  void operator()(std::string_view name, std::vector<store::AttemptRecord>& attempts) {
    if (const json::value* v = in.if_contains(name)) {
      auto decoded = store::decode_attempts(json::serialize(*v));
      if (decoded) {
        attempts = std::move(*decoded);
      } else {
        ok = false;
      }
    }
  }
  void operator()(std::string_view name, std::string& value) {
    if (const json::value* v = in.if_contains(name)) {
      if (const json::string* s = v->if_string()) {
        value.assign(s->data(), s->size());
      } else {
        ok = false;
      }
    }
  }
  void operator()(std::string_view name, bool& value) {
    if (const json::value* v = in.if_contains(name)) {
      if (const bool* b = v->if_bool()) {
        value = *b;
      } else {
        ok = false;
      }
    }
  }
  template <class T>
  void operator()(std::string_view name, T& value) {
    if (const json::value* v = in.if_contains(name)) {
      boost::system::error_code ec;
      const T n = v->to_number<T>(ec);
      if (ec) {
        ok = false;
      } else {
        value = n;
      }
    }
  }
};

}  // namespace

std::string record_to_json(const store::UsageRecord& record) {
  json::object out;
  store::visit_usage_fields(record, Writer{out});
  return json::serialize(out);
}

Result<store::UsageRecord> record_from_json(std::string_view text) {
  boost::system::error_code ec;
  json::value parsed = json::parse(text, ec);
  const json::object* obj = ec ? nullptr : parsed.if_object();
  if (obj == nullptr) {
    return Error(ErrorKind::kInternal, "usage record is not a JSON object");
  }
  store::UsageRecord record;
  Reader reader{*obj};
  store::visit_usage_fields(record, reader);
  if (!reader.ok || record.record_id.empty()) {
    return Error(ErrorKind::kInternal, "usage record has a field of the wrong type or no id");
  }
  return record;
}

}  // namespace sluice::metering
