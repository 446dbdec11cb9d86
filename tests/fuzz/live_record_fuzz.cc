// cache/live_record.h: decode_live on arbitrary bytes (what another instance left in Redis, or
// anything else there). Never crashes or reads past its input; an accepted record encodes back
// to bytes that decode again, and encoding is a fixed point after one decode.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "cache/live_record.h"
#include "fuzz_support.h"

namespace {

std::string encode(const sluice::cache::LiveRecord& r) {
  using Kind = sluice::cache::LiveRecord::Kind;
  return r.kind == Kind::kEnd
             ? sluice::cache::encode_live_end(r.whole, r.provider, r.model, r.usage)
             : sluice::cache::encode_live_events(r.events, r.provider, r.model, r.usage);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using sluice::fuzz::check;
  constexpr std::size_t kMax = 1 << 16;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::optional<sluice::cache::LiveRecord> record = sluice::cache::decode_live(bytes, kMax);
  if (!record) {
    return 0;
  }
  const std::string once = encode(*record);
  std::optional<sluice::cache::LiveRecord> again = sluice::cache::decode_live(once, kMax * 2);
  check(again.has_value(), "an accepted record encodes to bytes decode_live refuses", once);
  check(encode(*again) == once, "encoding is not a fixed point after one decode", once);
  return 0;
}
