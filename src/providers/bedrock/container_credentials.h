#pragma once

#include <chrono>
#include <memory>
#include <optional>

#include "aws/credentials.h"
#include "core/refreshed.h"
#include "core/result.h"
#include "providers/bedrock/temporary_keys.h"

namespace sluice::providers {

// The temporary keys a container credentials endpoint serves (ECS task roles, EKS Pod
// Identity: aws/container_credentials.h), fetched by a thread of their own with a GET carrying
// the authorization token (its file read at every fetch: EKS rotates it) and fetched again 5
// minutes before they expire, off the request path. Shared by every Bedrock provider of every
// snapshot naming the same endpoint and token. Thread-safe.
class ContainerCredentials final : public TemporaryKeys {
 public:
  static Result<std::shared_ptr<ContainerCredentials>> shared(aws::ContainerEndpoint endpoint);

  explicit ContainerCredentials(aws::ContainerEndpoint endpoint);

  const aws::Credentials* current() const override { return refreshed_.current(); }
  std::optional<Error> wait_first(std::chrono::milliseconds timeout) const override {
    return refreshed_.wait_first(timeout);
  }

 private:
  Result<Expiring<aws::Credentials>> fetch() const;

  const aws::ContainerEndpoint endpoint_;
  Refreshed<aws::Credentials> refreshed_;  // last: its thread starts at once
};

}  // namespace sluice::providers
