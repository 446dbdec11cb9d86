#include "metering/record_bytes.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "store/usage_fields.h"

namespace sluice::metering {

namespace {

template <class T>
void put(std::string& out, T value) {
  static_assert(std::is_trivially_copyable_v<T>);
  char raw[sizeof(T)];
  std::memcpy(raw, &value, sizeof(T));
  out.append(raw, sizeof(T));
}

void put_string(std::string& out, const std::string& s) {
  put(out, static_cast<std::uint32_t>(s.size()));
  out.append(s);
}

template <class T>
bool get(std::string_view& in, T& value) {
  if (in.size() < sizeof(T)) {
    return false;
  }
  std::memcpy(&value, in.data(), sizeof(T));
  in.remove_prefix(sizeof(T));
  return true;
}

bool get_string(std::string_view& in, std::string& s) {
  std::uint32_t n = 0;
  if (!get(in, n) || in.size() < n) {
    return false;
  }
  s.assign(in.data(), n);
  in.remove_prefix(n);
  return true;
}

void put_attempt(std::string& out, const store::AttemptRecord& a) {
  put_string(out, a.provider);
  put_string(out, a.model);
  put_string(out, a.path);
  put(out, a.status);
  put_string(out, a.error_class);
  put(out, a.acquire_us);
  put(out, a.first_byte_us);
  put(out, a.duration_us);
  put(out, a.backoff_ms);
  put(out, a.reused_connection);
}

bool get_attempt(std::string_view& in, store::AttemptRecord& a) {
  return get_string(in, a.provider) && get_string(in, a.model) && get_string(in, a.path) &&
         get(in, a.status) && get_string(in, a.error_class) && get(in, a.acquire_us) &&
         get(in, a.first_byte_us) && get(in, a.duration_us) && get(in, a.backoff_ms) &&
         get(in, a.reused_connection);
}

struct Writer {
  std::string& out;
  void operator()(std::string_view, const std::string& v) { put_string(out, v); }
  void operator()(std::string_view, const std::vector<store::AttemptRecord>& v) {
    put(out, static_cast<std::uint32_t>(v.size()));
    for (const auto& a : v) {
      put_attempt(out, a);
    }
  }
  template <class T>
  void operator()(std::string_view, const T& v) {
    put(out, v);
  }
};

struct Reader {
  std::string_view& in;
  bool ok = true;
  void operator()(std::string_view, std::string& v) { ok = ok && get_string(in, v); }
  void operator()(std::string_view, std::vector<store::AttemptRecord>& v) {
    std::uint32_t n = 0;
    // Each attempt takes more than one byte: a count beyond what is left is a torn buffer.
    ok = ok && get(in, n) && n <= in.size();
    v.clear();
    for (std::uint32_t i = 0; ok && i < n; ++i) {
      ok = get_attempt(in, v.emplace_back());
    }
  }
  template <class T>
  void operator()(std::string_view, T& v) {
    ok = ok && get(in, v);
  }
};

}  // namespace

void append_record_bytes(std::string& out, const store::UsageRecord& record) {
  store::visit_usage_fields(record, Writer{out});
}

bool read_record_bytes(std::string_view& in, store::UsageRecord& record) {
  Reader reader{in};
  store::visit_usage_fields(record, reader);
  return reader.ok;
}

}  // namespace sluice::metering
