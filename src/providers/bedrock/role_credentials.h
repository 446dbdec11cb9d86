#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "aws/credentials.h"
#include "aws/sigv4.h"
#include "core/refreshed.h"
#include "core/result.h"
#include "providers/bedrock/temporary_keys.h"

namespace sluice::providers {

// A role's temporary AWS keys, assumed with a web identity token (aws/web_identity.h) by a
// thread of its own and assumed again 5 minutes before they expire, off the request path; the
// token file is read at every exchange (EKS rotates it hourly). Shared by every Bedrock provider
// of every snapshot naming the same role, token file, session name and STS endpoint.
// Thread-safe.
class RoleCredentials final : public TemporaryKeys {
 public:
  static Result<std::shared_ptr<RoleCredentials>> shared(aws::WebIdentity identity,
                                                         std::string sts_url);

  RoleCredentials(aws::WebIdentity identity, std::string sts_url);

  // The current keys, null until STS first answered. Valid while this object lives
  // (core/refreshed.h).
  const aws::Credentials* current() const override { return refreshed_.current(); }
  std::optional<Error> wait_first(std::chrono::milliseconds timeout) const override {
    return refreshed_.wait_first(timeout);
  }

 private:
  Result<Expiring<aws::Credentials>> fetch() const;

  const aws::WebIdentity identity_;
  const std::string sts_url_;
  Refreshed<aws::Credentials> refreshed_;  // last: its thread starts at once
};

}  // namespace sluice::providers
