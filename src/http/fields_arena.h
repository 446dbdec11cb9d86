#pragma once

#include <cstddef>
#include <memory_resource>

#include <boost/beast/http/fields.hpp>

namespace sluice::http {

// Header fields whose elements come from a per-message arena. Beast allocates one heap
// element per header field (DHAT: 8 of a proxied request's allocations, 4 for the caller's
// head and 4 for the upstream's); a FieldsArena placed next to the parser turns those into
// pointer bumps in a buffer the owner already holds, spilling to the heap only for heads
// larger than the buffer. The arena must outlive every message whose fields use it.
using FieldsAllocator = std::pmr::polymorphic_allocator<char>;
using Fields = boost::beast::http::basic_fields<FieldsAllocator>;

class FieldsArena {
 public:
  FieldsArena() = default;
  FieldsArena(const FieldsArena&) = delete;
  FieldsArena& operator=(const FieldsArena&) = delete;

  FieldsAllocator allocator() { return FieldsAllocator(&resource_); }

 private:
  static constexpr std::size_t kInlineBytes = 1536;
  alignas(std::max_align_t) std::byte buffer_[kInlineBytes];
  std::pmr::monotonic_buffer_resource resource_{buffer_, kInlineBytes,
                                                std::pmr::new_delete_resource()};
};

}  // namespace sluice::http
