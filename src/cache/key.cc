#include "cache/key.h"

#include <cstring>

#include <openssl/evp.h>

namespace sluice::cache {
namespace {

// Tagged, length-prefixed fields: a field's bytes can never be read as the start of the next.
// Hashed as they are written: small fields gather in a buffer, a long value (a 100k-token
// prompt) goes to the digest where it lies, never copied.
class Canonical {
 public:
  Canonical() : md_(EVP_MD_CTX_new()) { EVP_DigestInit_ex(md_, EVP_sha256(), nullptr); }
  ~Canonical() { EVP_MD_CTX_free(md_); }
  Canonical(const Canonical&) = delete;
  Canonical& operator=(const Canonical&) = delete;

  void text(char tag, std::string_view value) {
    out_.push_back(tag);
    number(value.size());
    if (value.size() > kDirectBytes) {
      flush();
      EVP_DigestUpdate(md_, value.data(), value.size());
      return;
    }
    out_.append(value);
    if (out_.size() > kBufferBytes) {
      flush();
    }
  }
  void flag(char tag, bool value) {
    out_.push_back(tag);
    out_.push_back(value ? '1' : '0');
  }
  void unsigned_value(char tag, std::uint64_t value) {
    out_.push_back(tag);
    number(value);
  }
  void real(char tag, double value) {
    out_.push_back(tag);
    std::uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    number(bits);
  }
  // Opens and closes a list of `count` items, so that moving an item between neighbouring
  // lists changes the form.
  void list(char tag, std::size_t count) { unsigned_value(tag, count); }
  Key digest() {
    flush();
    Key key{};
    unsigned int length = 0;
    EVP_DigestFinal_ex(md_, key.data(), &length);
    return key;
  }

 private:
  static constexpr std::size_t kDirectBytes = 1024;
  static constexpr std::size_t kBufferBytes = 4096;
  void number(std::uint64_t value) {
    char digits[8];
    std::memcpy(digits, &value, sizeof digits);  // fixed width: no separator needed
    out_.append(digits, sizeof digits);
  }
  void flush() {
    EVP_DigestUpdate(md_, out_.data(), out_.size());
    out_.clear();
  }
  EVP_MD_CTX* md_;
  std::string out_;
};

void write_part(Canonical& c, const ir::ContentPart& part) {
  c.unsigned_value('p', static_cast<std::uint64_t>(part.kind));
  c.text('t', part.text);
  c.text('i', part.id);
  c.text('n', part.name);
  c.text('a', part.arguments);
  c.text('s', part.source);
  c.text('m', part.media_type);
  c.flag('u', part.image_is_url);
  c.text('d', part.detail);
  c.text('g', part.signature);
  c.flag('e', part.is_error);
  c.list('P', part.parts.size());
  for (const ir::ContentPart& inner : part.parts) {
    write_part(c, inner);
  }
}

void write_parts(Canonical& c, char tag, const std::vector<ir::ContentPart>& parts) {
  c.list(tag, parts.size());
  for (const ir::ContentPart& part : parts) {
    write_part(c, part);
  }
}

// The request; of its messages only the first `messages` (a semantic bucket leaves out the
// question it compares by meaning).
void write_request(Canonical& c, const ir::Request& r, std::size_t messages) {
  write_parts(c, 'S', r.system);
  c.list('M', messages);
  for (std::size_t i = 0; i < messages; ++i) {
    const ir::Message& m = r.messages[i];
    c.unsigned_value('r', static_cast<std::uint64_t>(m.role));
    c.text('n', m.name);
    write_parts(c, 'C', m.content);
  }
  c.list('T', r.tools.size());
  for (const ir::Tool& t : r.tools) {
    c.text('n', t.name);
    c.text('d', t.description);
    c.text('j', t.parameters);
  }
  c.unsigned_value('c', static_cast<std::uint64_t>(r.tool_choice.mode));
  c.text('c', r.tool_choice.name);
  c.flag('c', r.tool_choice.disable_parallel_tool_use);
  c.flag('x', r.max_tokens.has_value());
  c.unsigned_value('x', r.max_tokens.value_or(0));
  c.flag('t', r.temperature.has_value());
  c.real('t', r.temperature.value_or(0));
  c.flag('p', r.top_p.has_value());
  c.real('p', r.top_p.value_or(0));
  c.flag('k', r.top_k.has_value());
  c.unsigned_value('k', r.top_k.value_or(0));
  c.list('s', r.stop.size());
  for (const std::string& s : r.stop) {
    c.text('s', s);
  }
  c.flag('R', r.reasoning.enabled);
  c.flag('b', r.reasoning.budget_tokens.has_value());
  c.unsigned_value('b', r.reasoning.budget_tokens.value_or(0));
  c.text('e', r.reasoning.effort);
  c.text('y', r.reasoning.summary);
  c.unsigned_value('F', static_cast<std::uint64_t>(r.response_format.kind));
  c.text('F', r.response_format.name);
  c.text('F', r.response_format.schema);
  c.text('F', r.response_format.description);
  c.flag('F', r.response_format.strict.has_value());
  c.flag('F', r.response_format.strict.value_or(false));
  if (!r.provider_options.empty()) {  // last and only when set: keys without one stay as they were
    c.text('P', r.provider_options);
  }
}

void write_scope(Canonical& c, const KeyScope& scope) {
  c.text('R', scope.route);
  c.text('O', scope.tenant);
  c.list('H', scope.vary.size());
  for (const auto& [name, value] : scope.vary) {
    c.text('h', name);
    c.text('v', value);
  }
}

}  // namespace

Key answer_key(const ir::Request& request, const KeyScope& scope) {
  Canonical c;
  c.text('V', "sluice-answer-cache-1");
  write_scope(c, scope);
  write_request(c, request, request.messages.size());
  return c.digest();
}

Key body_alias(const KeyScope& scope, std::string_view api, std::string_view path,
               std::string_view body) {
  Canonical c;
  c.text('V', "sluice-body-alias-1");
  write_scope(c, scope);
  c.text('A', api);
  c.text('U', path);
  c.text('B', body);
  return c.digest();
}

std::optional<SemanticQuestion> semantic_question(const ir::Request& request, const KeyScope& scope,
                                                  std::string_view embedder,
                                                  std::uint32_t max_turns) {
  if (request.messages.empty()) {
    return std::nullopt;
  }
  const ir::Message& last = request.messages.back();
  if (last.role != ir::Role::kUser || last.content.empty()) {
    return std::nullopt;
  }
  std::uint32_t turns = 0;
  for (const ir::Message& m : request.messages) {
    turns += m.role == ir::Role::kUser ? 1 : 0;
  }
  if (turns > max_turns) {
    return std::nullopt;
  }
  SemanticQuestion question;
  for (const ir::ContentPart& part : last.content) {
    if (part.kind != ir::PartKind::kText) {
      return std::nullopt;  // an image, a tool result: not a question text can stand for
    }
    if (!question.text.empty()) {
      question.text += '\n';
    }
    question.text += part.text;
  }
  if (question.text.find_first_not_of(" \t\r\n") == std::string::npos) {
    return std::nullopt;
  }
  Canonical c;
  c.text('V', "sluice-semantic-bucket-1");
  write_scope(c, scope);
  c.text('E', embedder);
  c.text('n', last.name);
  write_request(c, request, request.messages.size() - 1);
  question.bucket = c.digest();
  return question;
}

Key idempotency_key(std::string_view tenant, std::string_view alias, std::string_view key) {
  Canonical c;
  c.text('V', "sluice-idempotency-1");
  c.text('O', tenant);
  c.text('R', alias);
  c.text('K', key);
  return c.digest();
}

Key request_digest(std::string_view protocol, std::string_view path, std::string_view body) {
  Canonical c;
  c.text('V', "sluice-request-1");
  c.text('P', protocol);
  c.text('U', path);
  c.text('B', body);
  return c.digest();
}

std::string to_hex(const Key& key) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(key.size() * 2);
  for (std::uint8_t byte : key) {
    out.push_back(kDigits[byte >> 4]);
    out.push_back(kDigits[byte & 0x0f]);
  }
  return out;
}

}  // namespace sluice::cache
