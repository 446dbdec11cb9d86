#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "ir/usage.h"

// The binary layout of the records the cache shares across instances (entry_codec.h,
// live_record.h): bytes, LEB128 varints (zig-zag for signed ones), length-prefixed text. The
// reader never trusts a length: a read past the end fails it and every read after.
namespace sluice::cache::record_bytes {

class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}

  void byte(std::uint8_t b) { out_.push_back(static_cast<char>(b)); }
  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      byte(static_cast<std::uint8_t>(v | 0x80));
      v >>= 7;
    }
    byte(static_cast<std::uint8_t>(v));
  }
  void signed_varint(std::int64_t v) {
    varint((static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63));
  }
  void text(std::string_view s) {
    varint(s.size());
    out_.append(s);
  }
  void raw(const void* data, std::size_t n) { out_.append(static_cast<const char*>(data), n); }
  // A flag byte, then the five counts when there is a usage.
  void usage(const std::optional<ir::Usage>& u) {
    byte(u ? 1 : 0);
    if (u) {
      varint(u->input_tokens);
      varint(u->output_tokens);
      varint(u->cache_read_tokens);
      varint(u->cache_write_tokens);
      varint(u->reasoning_tokens);
    }
  }

 private:
  std::string& out_;
};

// Every read checks what is left; the first that fails fails the rest.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}

  bool ok() const { return ok_; }
  bool at_end() const { return ok_ && in_.empty(); }
  std::string_view rest() const { return in_; }

  std::uint8_t byte() {
    if (!ok_ || in_.empty()) {
      ok_ = false;
      return 0;
    }
    const auto b = static_cast<std::uint8_t>(in_.front());
    in_.remove_prefix(1);
    return b;
  }
  std::uint64_t varint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      const std::uint8_t b = byte();
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        return v;
      }
    }
    ok_ = false;
    return 0;
  }
  std::int64_t signed_varint() {
    const std::uint64_t v = varint();
    return static_cast<std::int64_t>((v >> 1) ^ (~(v & 1) + 1));
  }
  std::string text() {
    const std::uint64_t n = varint();
    if (!ok_ || n > in_.size()) {
      ok_ = false;
      return {};
    }
    std::string s(in_.substr(0, n));
    in_.remove_prefix(n);
    return s;
  }
  void raw(void* data, std::size_t n) {
    if (!ok_ || n > in_.size()) {
      ok_ = false;
      return;
    }
    std::memcpy(data, in_.data(), n);
    in_.remove_prefix(n);
  }
  std::optional<ir::Usage> usage() {
    if (byte() != 1) {
      return std::nullopt;
    }
    ir::Usage u;
    u.input_tokens = varint();
    u.output_tokens = varint();
    u.cache_read_tokens = varint();
    u.cache_write_tokens = varint();
    u.reasoning_tokens = varint();
    return u;
  }

 private:
  std::string_view in_;
  bool ok_ = true;
};

}  // namespace sluice::cache::record_bytes
