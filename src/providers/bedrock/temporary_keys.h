#pragma once

#include <chrono>
#include <optional>

#include "aws/sigv4.h"
#include "core/error.h"

namespace sluice::providers {

// Temporary AWS keys a thread of their own keeps fresh (a web identity role, a container
// credentials endpoint): what a Bedrock adapter signs with. Thread-safe.
class TemporaryKeys {
 public:
  virtual ~TemporaryKeys() = default;
  // The current keys, null until the first fetch succeeded. Valid while this object lives.
  virtual const aws::Credentials* current() const = 0;
  // Waits at most `timeout` for the first keys: the fetch's error, or nullopt once there.
  virtual std::optional<Error> wait_first(std::chrono::milliseconds timeout) const = 0;
};

}  // namespace sluice::providers
