#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>

#include <boost/asio/awaitable.hpp>

#include "pipeline/request_context.h"
#include "providers/adapter.h"

namespace sluice::pipeline {

template <class T = void>
using Awaitable = boost::asio::awaitable<T>;
using providers::Header;

// Response header fields for one head, with a fixed capacity so building a head never
// allocates. The views must outlive the head's write. Fields beyond the capacity are dropped
// (upstream-controlled lists such as relayed rate-limit headers cannot grow a head without
// bound) and counted in dropped().
class HeaderList {
 public:
  static constexpr std::size_t kCapacity = 48;

  void add(std::string_view name, std::string_view value) {
    if (size_ < kCapacity) {
      items_[size_++] = Header{name, value};
    } else {
      ++dropped_;
    }
  }
  std::span<const Header> view() const { return {items_.data(), size_}; }
  std::size_t dropped() const { return dropped_; }
  void clear() {
    size_ = 0;
    dropped_ = 0;
  }

 private:
  std::array<Header, kCapacity> items_{};
  std::size_t size_ = 0;
  std::size_t dropped_ = 0;
};

// A response head as the pipeline hands it to the transport: status, content type and every
// other field the caller must see. The transport adds only framing (Content-Length or chunked,
// Connection) and never interprets the fields.
struct ResponseHead {
  int status = 200;
  std::string_view content_type = "application/json";
  HeaderList headers;

  // Decimal text for a header value, stored in the head so its view lives as long as the head
  // (a few numbers per head: attempt counts, Retry-After).
  std::string_view number(std::uint64_t value);
  void clear() {
    status = 200;
    content_type = "application/json";
    headers.clear();
    numbers_used_ = 0;
  }

 private:
  std::array<std::array<char, 24>, 4> numbers_{};
  std::size_t numbers_used_ = 0;
};

// The caller's side of the connection, as the pipeline sees it: send one response, or begin a
// stream and write it piece by piece, and learn when the caller goes away. Implemented by the
// HTTP session (server/session.h) and by a recording fake in the pipeline's unit tests.
//
// All methods run on the request's worker; each write completes when its bytes are handed to
// the socket (backpressure). A write that fails marks the client gone and returns false; the
// pipeline then stops producing. The transport records the status and bytes written in `ctx`.
class Downstream {
 public:
  virtual ~Downstream() = default;

  // A cleared head to fill for the next response, owned by the transport and valid until the
  // next call. Heads live here rather than on coroutine frames: a head is about 1.6 KiB, and a
  // frame that large is never recycled by Asio (its frame cache takes at most 1020 bytes), so
  // every request would pay a malloc for each frame holding one.
  virtual ResponseHead& new_head() = 0;

  virtual Awaitable<bool> send(RequestContext& ctx, const ResponseHead& head,
                               std::string_view body) = 0;
  virtual Awaitable<bool> begin_stream(RequestContext& ctx, const ResponseHead& head) = 0;
  // One piece of the stream body, written as it is (never empty: empty writes are skipped).
  virtual Awaitable<bool> write(RequestContext& ctx, std::string_view bytes) = 0;
  virtual Awaitable<bool> end_stream(RequestContext& ctx) = 0;

  // Calls `on_gone` (on this worker, at most once) as soon as the caller closes or resets the
  // connection while the pipeline waits on an upstream; bytes the caller pipelines meanwhile do
  // not count as going away. One watch at a time; unwatch() ends it. Prefer ScopedWatch.
  virtual void watch_disconnect(std::function<void()> on_gone) = 0;
  virtual void unwatch() = 0;
  virtual bool client_gone() const = 0;
};

// Ends a disconnect watch when it goes out of scope.
class ScopedWatch {
 public:
  ScopedWatch(Downstream& downstream, std::function<void()> on_gone) : downstream_(downstream) {
    downstream_.watch_disconnect(std::move(on_gone));
  }
  ~ScopedWatch() { downstream_.unwatch(); }
  ScopedWatch(const ScopedWatch&) = delete;
  ScopedWatch& operator=(const ScopedWatch&) = delete;

 private:
  Downstream& downstream_;
};

}  // namespace sluice::pipeline
