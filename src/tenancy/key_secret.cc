#include "tenancy/key_secret.h"

#include <array>
#include <stdexcept>

#include <fmt/format.h>
#include <openssl/rand.h>

namespace sluice::tenancy {

namespace {

constexpr std::size_t kSecretChars = 40;
constexpr std::string_view kSecretScheme = "sk-slc-";
constexpr std::size_t kPrefixChars = 4;  // after the scheme
constexpr std::size_t kIdBytes = 8;

template <std::size_t N>
void random_bytes(std::array<unsigned char, N>& out) {
  if (RAND_bytes(out.data(), static_cast<int>(out.size())) != 1) {
    throw std::runtime_error("RAND_bytes failed");
  }
}

}  // namespace

std::string generate_key_secret() {
  static constexpr std::string_view kAlphabet =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  std::string secret(kSecretScheme);
  std::array<unsigned char, 64> raw{};
  while (secret.size() < kSecretScheme.size() + kSecretChars) {
    random_bytes(raw);
    for (unsigned char c : raw) {
      // 248 = 4 * 62: bytes above it are dropped so every character is equally likely.
      if (c < 248 && secret.size() < kSecretScheme.size() + kSecretChars) {
        secret += kAlphabet[c % 62];
      }
    }
  }
  return secret;
}

std::string key_prefix(std::string_view secret) {
  return std::string(secret.substr(0, kSecretScheme.size() + kPrefixChars));
}

std::string generate_key_id() {
  std::array<unsigned char, kIdBytes> raw{};
  random_bytes(raw);
  std::string id = "key_";
  for (unsigned char c : raw) {
    id += fmt::format("{:02x}", c);
  }
  return id;
}

}  // namespace sluice::tenancy
