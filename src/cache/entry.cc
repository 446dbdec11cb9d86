#include "cache/entry.h"

namespace sluice::cache {
namespace {

// The entry struct, its shared_ptr control block, the key and the store's node and index slot.
constexpr std::size_t kOverhead = sizeof(Entry) + 192;

std::size_t part_bytes(const ir::ContentPart& part) {
  std::size_t n = sizeof(ir::ContentPart) + part.text.size() + part.id.size() + part.name.size() +
                  part.arguments.size() + part.source.size() + part.media_type.size() +
                  part.detail.size() + part.signature.size() + part.cache_ttl.size();
  for (const ir::ContentPart& inner : part.parts) {
    n += part_bytes(inner);
  }
  return n;
}

}  // namespace

std::size_t entry_bytes(const Entry& entry) {
  const ir::Response& a = entry.answer;
  std::size_t n = kOverhead + a.id.size() + a.model.size() + a.stop_sequence.size() +
                  entry.alias.size() + entry.route.size() + entry.tenant.size() +
                  entry.provider.size() + entry.model.size();
  for (const ir::ContentPart& part : a.content) {
    n += part_bytes(part);
  }
  return n;
}

}  // namespace sluice::cache
