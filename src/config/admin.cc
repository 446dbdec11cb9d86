#include "config/admin.h"

#include "config/loader.h"
#include "config/scalars.h"

namespace sluice::config {

AdminSettings load_admin(const YamlField& field) {
  const YamlMap m = field.map({"listen", "key", "key_sha256", "metrics_on_main", "metrics_public"});
  AdminSettings a;
  a.enabled = true;
  if (auto f = m.get("listen")) {
    a.listen = listen_address(*f);
  }
  const std::optional<YamlField> secret = m.get("key");
  const std::optional<YamlField> digest = m.get("key_sha256");
  if (secret && digest) {
    digest->fail("set either key or key_sha256, not both");
  }
  if (!secret && !digest) {
    field.fail("missing key: the admin listener needs its own credential (key or key_sha256)");
  }
  if (secret) {
    const Wiped plaintext(secret->text());
    if (plaintext.get().size() < kMinKeyLength || !is_visible_ascii(plaintext.get())) {
      secret->fail("the admin key needs at least " + std::to_string(kMinKeyLength) +
                   " visible ASCII characters without spaces (value not shown)");
    }
    a.key_sha256 = sha256_hex(plaintext.get());
  } else {
    const std::string hex = digest->text();
    if (!is_sha256_hex(hex)) {
      digest->fail("expected 64 hexadecimal digits (a SHA-256 digest; value not shown)");
    }
    a.key_sha256 = to_lower(hex);
  }
  if (auto f = m.get("metrics_on_main")) {
    a.metrics_on_main = f->boolean();
  }
  if (auto f = m.get("metrics_public")) {
    a.metrics_public = f->boolean();
  }
  return a;
}

}  // namespace sluice::config
