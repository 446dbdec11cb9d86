#include "pipeline/reasoning_seal.h"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include "codec/base64.h"

namespace sluice::pipeline {

namespace {

constexpr std::size_t kNonceBytes = 12;
constexpr std::size_t kTagBytes = 16;
// An origin is a protocol id ("anthropic_messages"): its length fits in the one byte that
// leads the plaintext.
constexpr std::size_t kMaxOrigin = 255;

// Made once per process: seals that outlive a config reload, not a restart. nullopt when the
// system has no randomness to give (then nothing is sealed or opened: fail closed).
const std::optional<std::array<std::uint8_t, 32>>& process_key() {
  static const std::optional<std::array<std::uint8_t, 32>> key =
      []() -> std::optional<std::array<std::uint8_t, 32>> {
    std::array<std::uint8_t, 32> k{};
    if (RAND_bytes(k.data(), static_cast<int>(k.size())) != 1) {
      return std::nullopt;
    }
    return k;
  }();
  return key;
}

struct CipherCtx {
  CipherCtx() : ctx(EVP_CIPHER_CTX_new()) {}
  ~CipherCtx() { EVP_CIPHER_CTX_free(ctx); }
  CipherCtx(const CipherCtx&) = delete;
  CipherCtx& operator=(const CipherCtx&) = delete;
  EVP_CIPHER_CTX* ctx;
};

const unsigned char* bytes(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

bool is_reasoning(const ir::ContentPart& p) {
  return p.kind == ir::PartKind::kReasoning || p.kind == ir::PartKind::kRedactedReasoning;
}

bool foreign(const ir::ContentPart& p, protocol::ProtocolId upstream) {
  return is_reasoning(p) && !p.name.empty() && p.name != upstream;
}

// Clears a dropped signature; whether the part itself goes (nothing left to send).
bool drop_signature(ir::ContentPart& p) {
  p.signature.clear();
  p.name.clear();
  return p.kind == ir::PartKind::kRedactedReasoning || p.text.empty();
}

}  // namespace

ReasoningSeal::ReasoningSeal(std::string_view secret) {
  if (secret.empty()) {
    usable_ = process_key().has_value();
    key_ = process_key().value_or(std::array<std::uint8_t, 32>{});
    return;
  }
  usable_ = SHA256(bytes(secret), secret.size(), key_.data()) != nullptr;
}

std::string ReasoningSeal::seal(std::string_view origin, std::string_view signature) const {
  if (!usable_) {
    return {};
  }
  origin = origin.substr(0, kMaxOrigin);
  std::string plain;
  plain.reserve(1 + origin.size() + signature.size());
  plain.push_back(static_cast<char>(origin.size()));
  plain.append(origin);
  plain.append(signature);

  std::string sealed(kNonceBytes + plain.size() + kTagBytes, '\0');
  auto* out = reinterpret_cast<unsigned char*>(sealed.data());
  CipherCtx c;
  int n = 0;
  int tail = 0;
  const bool ok = c.ctx != nullptr && RAND_bytes(out, static_cast<int>(kNonceBytes)) == 1 &&
                  EVP_EncryptInit_ex(c.ctx, EVP_aes_256_gcm(), nullptr, key_.data(), out) == 1 &&
                  EVP_EncryptUpdate(c.ctx, nullptr, &n, bytes(kPrefix),
                                    static_cast<int>(kPrefix.size())) == 1 &&
                  EVP_EncryptUpdate(c.ctx, out + kNonceBytes, &n, bytes(plain),
                                    static_cast<int>(plain.size())) == 1 &&
                  EVP_EncryptFinal_ex(c.ctx, out + kNonceBytes + n, &tail) == 1 &&
                  EVP_CIPHER_CTX_ctrl(c.ctx, EVP_CTRL_GCM_GET_TAG, static_cast<int>(kTagBytes),
                                      out + kNonceBytes + plain.size()) == 1;
  if (!ok) {
    return {};  // the caller gets no reasoning state rather than an unsealed one
  }
  std::string value(kPrefix);
  codec::append_base64(value, sealed, codec::Base64Alphabet::kUrlUnpadded);
  return value;
}

std::optional<ReasoningSeal::Opened> ReasoningSeal::open(std::string_view value) const {
  if (!usable_ || !is_sealed(value)) {
    return std::nullopt;
  }
  const std::optional<std::string> sealed = codec::decode_base64(value.substr(kPrefix.size()));
  if (!sealed || sealed->size() < kNonceBytes + 1 + kTagBytes) {
    return std::nullopt;
  }
  const auto* in = bytes(*sealed);
  const std::size_t cipher_size = sealed->size() - kNonceBytes - kTagBytes;
  std::string plain(cipher_size, '\0');
  auto* out = reinterpret_cast<unsigned char*>(plain.data());
  // OpenSSL takes the expected tag through a non-const pointer.
  std::array<unsigned char, kTagBytes> tag{};
  std::memcpy(tag.data(), in + kNonceBytes + cipher_size, kTagBytes);
  CipherCtx c;
  int n = 0;
  int tail = 0;
  const bool ok =
      c.ctx != nullptr &&
      EVP_DecryptInit_ex(c.ctx, EVP_aes_256_gcm(), nullptr, key_.data(), in) == 1 &&
      EVP_DecryptUpdate(c.ctx, nullptr, &n, bytes(kPrefix), static_cast<int>(kPrefix.size())) ==
          1 &&
      EVP_DecryptUpdate(c.ctx, out, &n, in + kNonceBytes, static_cast<int>(cipher_size)) == 1 &&
      EVP_CIPHER_CTX_ctrl(c.ctx, EVP_CTRL_GCM_SET_TAG, static_cast<int>(kTagBytes), tag.data()) ==
          1 &&
      EVP_DecryptFinal_ex(c.ctx, out + n, &tail) == 1;
  if (!ok) {
    return std::nullopt;
  }
  const std::size_t origin_size = static_cast<unsigned char>(plain[0]);
  if (1 + origin_size > plain.size()) {
    return std::nullopt;
  }
  Opened opened;
  opened.origin = plain.substr(1, origin_size);
  opened.signature = plain.substr(1 + origin_size);
  return opened;
}

std::size_t open_reasoning(ir::Request& request, const ReasoningSeal& seal, bool only_sealed) {
  std::size_t dropped = 0;
  for (ir::Message& m : request.messages) {
    std::erase_if(m.content, [&](ir::ContentPart& p) {
      if (!is_reasoning(p) || p.signature.empty()) {
        return false;
      }
      if (!ReasoningSeal::is_sealed(p.signature)) {
        if (!only_sealed) {
          return false;
        }
        ++dropped;
        return drop_signature(p);
      }
      std::optional<ReasoningSeal::Opened> opened = seal.open(p.signature);
      if (!opened) {
        ++dropped;
        return drop_signature(p);
      }
      p.signature = std::move(opened->signature);
      p.name = std::move(opened->origin);
      return false;
    });
  }
  return dropped;
}

bool has_foreign_reasoning(const ir::Request& request, protocol::ProtocolId upstream) {
  return std::any_of(request.messages.begin(), request.messages.end(), [&](const ir::Message& m) {
    return std::any_of(m.content.begin(), m.content.end(),
                       [&](const ir::ContentPart& p) { return foreign(p, upstream); });
  });
}

ir::Request without_foreign_reasoning(const ir::Request& request, protocol::ProtocolId upstream) {
  ir::Request out = request;
  for (ir::Message& m : out.messages) {
    std::erase_if(m.content,
                  [&](ir::ContentPart& p) { return foreign(p, upstream) && drop_signature(p); });
  }
  return out;
}

void seal_reasoning(ir::Response& response, const ReasoningSeal& seal,
                    protocol::ProtocolId origin) {
  for (ir::ContentPart& p : response.content) {
    if (is_reasoning(p) && !p.signature.empty() && !ReasoningSeal::is_sealed(p.signature)) {
      p.signature = seal.seal(origin, p.signature);
    }
  }
}

void seal_reasoning(ir::StreamEvent& event, const ReasoningSeal& seal,
                    protocol::ProtocolId origin) {
  const bool signed_state = event.kind == ir::StreamEventKind::kReasoningSignature ||
                            event.kind == ir::StreamEventKind::kRedactedReasoning;
  if (signed_state && !event.text.empty() && !ReasoningSeal::is_sealed(event.text)) {
    event.text = seal.seal(origin, event.text);
  }
}

}  // namespace sluice::pipeline
