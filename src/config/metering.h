#pragma once

#include <cstdint>
#include <string>

#include "config/values.h"

namespace sluice::config {

class YamlField;

// The usage sink and the price catalogue.
struct MeteringSettings {
  // Price catalogue YAML; empty = the catalogue built into the binary (prices/default.yaml).
  std::string prices;
  // Append-only spool used while the store is down or slow; empty = "<sqlite path>.spool", or
  // "sluice-usage.spool" in the working directory for PostgreSQL.
  std::string spool;
  std::uint32_t queue_capacity = 65536;   // records waiting for the writer, all workers
  std::uint32_t batch_size = 512;         // records per store transaction
  Millis flush_interval{200};             // longest a record waits before its batch is written
  std::uint32_t max_feature_length = 64;  // x-sluice-feature values longer than this are cut
};

// `metering:` (the usage sink and the price catalogue). Throws ConfigError.
MeteringSettings load_metering(const YamlField& field);

}  // namespace sluice::config
