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

struct Writer {
  std::string& out;
  void operator()(std::string_view, const std::string& v) { put_string(out, v); }
  void operator()(std::string_view, const std::vector<store::AttemptRecord>& v) {
    put(out, static_cast<std::uint32_t>(v.size()));
    for (const auto& a : v) {
      store::visit_attempt_fields(a, *this);
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
      store::visit_attempt_fields(v.emplace_back(), *this);
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
