#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// Reads and rewrites one member of a JSON request body in place: the bytes of every other member
// stay as the caller wrote them (no DOM round trip, which would re-write numbers and reorder
// nothing but cost a parse of a large prompt). For bodies a decoder has already validated.
namespace sluice::codec {

// A member at the top level (`inner` empty) or one level below it: `inner` of the object that
// is the value of `key` (Gemini's generationConfig.maxOutputTokens).
struct MemberPath {
  std::string_view key;
  std::string_view inner;
};

// A value's bytes in the body.
struct ValueRange {
  std::size_t begin = 0;
  std::size_t end = 0;
};

// Where the values of `path` sit in the object `body`, every occurrence (a repeated key's last
// value is the one JSON readers keep, but each must be rewritten). Empty when the path is absent
// or `body` is not an object.
std::vector<ValueRange> find_member(std::string_view body, MemberPath path);

// The value of `path` as an unsigned integer: nullopt when absent or null; `valid` false when it
// is present and not a non-negative integer that fits 64 bits (a string, a fraction, a negative
// number). The last occurrence counts.
struct UnsignedMember {
  std::optional<std::uint64_t> value;
  bool present = false;  // present and not null
  bool valid = true;
};
UnsignedMember read_unsigned_member(std::string_view body, MemberPath path);

// `body` with every value of `path` replaced by `json` (JSON text, written as it is), or with
// the member added as the first member of its object when absent (the outer object created as
// well when `key` is absent too). nullopt when `body` is not an object, or when the value of
// `path.key` is not an object for an inner path.
std::optional<std::string> set_member(std::string_view body, MemberPath path,
                                      std::string_view json);

// `body` with the key of every member at `path` renamed to `new_name` (a plain ASCII name,
// written as it is); unchanged when absent.
std::string rename_member(std::string_view body, MemberPath path, std::string_view new_name);

// `body` without the top-level member `key` (every occurrence, each with one comma next to
// it); unchanged when absent or when `body` is not an object.
std::string remove_member(std::string_view body, std::string_view key);

}  // namespace sluice::codec
