#pragma once

#include <chrono>
#include <memory>
#include <optional>

#include "aws/credentials.h"
#include "core/refreshed.h"
#include "core/result.h"
#include "providers/bedrock/temporary_keys.h"

namespace sluice::providers {

// An EC2 instance role's temporary keys from the instance metadata service, IMDSv2 only (a
// session token PUT first, then the role's name and keys: aws/instance_metadata.h), fetched by
// a thread of their own and again 5 minutes before they expire, off the request path. Shared
// by every Bedrock provider of every snapshot naming the same service. Thread-safe.
class InstanceCredentials final : public TemporaryKeys {
 public:
  static Result<std::shared_ptr<InstanceCredentials>> shared(aws::InstanceMetadata service);

  explicit InstanceCredentials(aws::InstanceMetadata service);

  const aws::Credentials* current() const override { return refreshed_.current(); }
  std::optional<Error> wait_first(std::chrono::milliseconds timeout) const override {
    return refreshed_.wait_first(timeout);
  }

 private:
  Result<Expiring<aws::Credentials>> fetch() const;

  const aws::InstanceMetadata service_;
  Refreshed<aws::Credentials> refreshed_;  // last: its thread starts at once
};

}  // namespace sluice::providers
