#include "config/keys.h"

#include <algorithm>

#include "config/loader.h"
#include "config/scalars.h"

namespace sluice::config {

Key load_key(const YamlField& field, std::span<const Key> earlier, const LoadState& declared) {
  const YamlMap m = field.map({"name", "group", "key", "key_sha256", "models"});
  Key key;
  key.source = field.where();
  if (auto f = m.get("group")) {
    key.group = f->text();
    if (key.group.empty() || key.group.size() > kMaxNameLength || !is_visible_ascii(key.group)) {
      f->fail("group must be 1.." + std::to_string(kMaxNameLength) +
              " visible characters without spaces");
    }
  }

  const YamlField name_field = m.required("name");
  key.name = name_field.text();
  key.id = "config:" + key.name;
  if (key.name.empty() || key.name.size() > kMaxNameLength || !is_visible_ascii(key.name)) {
    name_field.fail("name must be 1.." + std::to_string(kMaxNameLength) +
                    " visible characters without spaces");
  }
  for (std::size_t i = 0; i < earlier.size(); ++i) {
    if (earlier[i].name == key.name) {
      name_field.fail("duplicate key name " + in_quotes(key.name) + " (first used by keys[" +
                      std::to_string(i) + "])");
    }
  }

  const std::optional<YamlField> secret = m.get("key");
  const std::optional<YamlField> digest = m.get("key_sha256");
  if (secret && digest) {
    digest->fail("set either key or key_sha256, not both");
  }
  if (!secret && !digest) {
    field.fail("missing key: set key (plaintext, hashed at load) or key_sha256");
  }
  // Never echo either value below: one is the secret, the other identifies it.
  const YamlField& secret_field = secret ? *secret : *digest;
  if (secret) {
    const Wiped plaintext(secret->text());
    if (plaintext.get().size() < kMinKeyLength) {
      secret->fail("too short: keys need at least " + std::to_string(kMinKeyLength) +
                   " characters (value not shown)");
    }
    if (!is_visible_ascii(plaintext.get())) {
      secret->fail("must contain only visible ASCII characters, no spaces (value not shown)");
    }
    key.sha256_hex = sha256_hex(plaintext.get());
    if (key.sha256_hex.empty()) {
      secret->fail("internal error: SHA-256 is unavailable");
    }
  } else {
    const std::string hex = digest->text();
    if (!is_sha256_hex(hex)) {
      digest->fail("expected 64 hexadecimal digits (a SHA-256 digest; value not shown)");
    }
    key.sha256_hex = to_lower(hex);
  }
  for (const Key& other : earlier) {
    if (other.sha256_hex == key.sha256_hex) {
      secret_field.fail("same secret as key " + in_quotes(other.name) + " (" + other.source +
                        "); every key needs its own secret");
    }
  }

  if (auto models = m.get("models")) {
    const std::vector<YamlField> items = models->items();
    if (items.empty()) {
      models->fail("empty list; omit models to allow every alias");
    }
    for (const YamlField& item : items) {
      std::string alias = item.text();
      // A skipped alias stays in the list: dropping it could leave the list empty, which
      // would mean "every alias".
      declared.require_alias(item, alias);
      if (std::find(key.allowed_aliases.begin(), key.allowed_aliases.end(), alias) !=
          key.allowed_aliases.end()) {
        item.fail("duplicate alias " + in_quotes(alias));
      }
      key.allowed_aliases.push_back(std::move(alias));
    }
  }
  return key;
}

}  // namespace sluice::config
