#include "config/metering.h"

#include "config/loader.h"

namespace sluice::config {

MeteringSettings load_metering(const YamlField& field) {
  const YamlMap m = field.map({"prices", "spool", "queue_capacity", "batch_size",
                               "flush_interval_ms", "max_feature_length"});
  MeteringSettings s;
  if (auto f = m.get("prices")) {
    s.prices = f->text();
  }
  if (auto f = m.get("spool")) {
    s.spool = f->text();
  }
  if (auto f = m.get("queue_capacity")) {
    s.queue_capacity = static_cast<std::uint32_t>(f->unsigned_in(64, 1u << 24));
  }
  if (auto f = m.get("batch_size")) {
    s.batch_size = static_cast<std::uint32_t>(f->unsigned_in(1, 10000));
  }
  if (auto f = m.get("flush_interval_ms")) {
    s.flush_interval = f->millis_in(1, 60000);
  }
  if (auto f = m.get("max_feature_length")) {
    s.max_feature_length = static_cast<std::uint32_t>(f->unsigned_in(1, 256));
  }
  return s;
}

}  // namespace sluice::config
