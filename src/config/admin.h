#pragma once

#include <string>

#include "config/values.h"

namespace sluice::config {

class YamlField;

// The admin listener: /metrics, usage queries, and (admission issue) key management. Its own
// address and its own credential, never a model key.
struct AdminSettings {
  bool enabled = false;  // true when `admin:` is present
  ListenAddress listen{"127.0.0.1", 8081};
  std::string key_sha256;  // SHA-256 hex of the admin credential
  // Also answer GET /metrics on the main listener (no credential there: scrapers usually have
  // none; the admin listener's /metrics asks for the admin credential unless metrics_public).
  bool metrics_on_main = false;
  bool metrics_public = false;  // /metrics on the admin listener without the credential
};

// `admin:` (the admin listener and its credential: `key`, hashed here, or `key_sha256`).
// Throws ConfigError; messages never show either value.
AdminSettings load_admin(const YamlField& field);

}  // namespace sluice::config
