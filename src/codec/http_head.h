#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::codec {

// Writes HTTP/1.1 message heads into a caller-owned string (RFC 9112 sections 3, 4 and 5).
// The gateway writes every head this way instead of through Beast's serializer: a head is a
// handful of short fields, and the serializer's buffer-sequence machinery plus one heap element
// per field cost more than the rest of a small proxied request. Reusing the string keeps
// steady-state writes allocation-free. Sans-I/O: provider adapters write upstream request heads
// with it and the server writes response heads.
//
// Field names and values come from config, validated caller headers, upstream headers or the
// gateway itself; a name or value containing CR, LF or NUL is dropped rather than written (no
// header injection, whatever a future caller passes).
class HeadWriter {
 public:
  explicit HeadWriter(std::string& out) : out_(out) { out_.clear(); }

  // "HTTP/1.1 200 OK\r\n" (version 10 or 11).
  HeadWriter& status_line(unsigned version, unsigned status);
  // "POST /v1/chat/completions HTTP/1.1\r\n"; the target is `target` + `target_suffix`.
  HeadWriter& request_line(std::string_view method, std::string_view target,
                           std::string_view target_suffix = {});
  HeadWriter& field(std::string_view name, std::string_view value);
  HeadWriter& field(std::string_view name, std::uint64_t value);
  // The blank line that ends the head.
  void end() { out_.append("\r\n"); }

  std::string& out() { return out_; }

 private:
  std::string& out_;
};

// The reason phrase for a status code ("OK", "Not Found"); "" for codes without one.
std::string_view reason_phrase(unsigned status);

// The chunk-size line for a chunk of `size` bytes ("1a2b\r\n"), written into `buf`; returns
// its length. `buf` must hold at least 18 bytes.
std::size_t format_chunk_size(char* buf, std::size_t size);

}  // namespace sluice::codec
