#include "redis/answer_tier.h"

#include <array>
#include <charconv>

namespace sluice::redis {
namespace {

using std::chrono::milliseconds;

// The record if there is one (a replay, or a cache answer); else the claim, taken for ARGV[2]
// ms unless another call holds it. One string back: "D" + record, "C" (claimed), "H" + the
// holder's value.
constexpr std::string_view kClaimScript = R"lua(
local done = redis.call('GET', KEYS[1])
if done then return 'D' .. done end
if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return 'C' end
return 'H' .. (redis.call('GET', KEYS[2]) or '')
)lua";

// The claimed call is over: keeps its record (when ARGV[2] is not empty) for ARGV[3] ms, and
// drops the claim if it is still this call's.
constexpr std::string_view kFinishScript = R"lua(
if ARGV[2] ~= '' then redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) end
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
return 1
)lua";

// A cache flight is over: drops its claim if it is still this instance's.
constexpr std::string_view kReleaseScript = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
)lua";

std::string number(long long v) {
  std::array<char, 24> buf;
  auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  return std::string(buf.data(), end);
}

// A name part that cannot reach outside its place: ':' separates parts, and the glob
// characters of MATCH would widen a purge.
void append_escaped(std::string& out, std::string_view part) {
  static constexpr std::string_view kSpecial = "%:*?[]\\";
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (const char c : part) {
    if (kSpecial.find(c) != std::string_view::npos) {
      out += '%';
      out += kHex[static_cast<unsigned char>(c) >> 4];
      out += kHex[static_cast<unsigned char>(c) & 15];
    } else {
      out += c;
    }
  }
}

// An idempotent call's two names: its replay record and its claim, in one hash slot (the
// braces) so one script may touch both on a cluster.
struct ClaimNames {
  std::string record;
  std::string claim;
};

ClaimNames claim_names(std::string_view prefix, const cache::Key& key) {
  ClaimNames names{std::string(prefix), {}};
  names.record += '{';
  names.record += cache::to_hex(key);
  names.record += '}';
  names.claim = names.record + ":claim";
  return names;
}

// What the claim script answered, as a Claim; `instance` tells this instance's holds apart.
cache::SharedStore::Claim read_claim(Reply reply, std::string_view instance) {
  using Claim = cache::SharedStore::Claim;
  Claim out;
  if (reply.kind != Reply::Kind::kString || reply.text.empty()) {
    return out;  // kUnavailable
  }
  const char tag = reply.text.front();
  if (tag == 'C') {
    out.result = Claim::Result::kClaimed;
  } else if (tag == 'D') {
    out.result = Claim::Result::kDone;
    out.record = std::move(reply.text).substr(1);
  } else if (tag == 'H') {
    const std::string_view holder = std::string_view(reply.text).substr(1);
    const std::size_t colon = holder.find(':');
    out.result = Claim::Result::kHeld;
    out.holder_digest = std::string(holder.substr(0, colon == std::string_view::npos ? 0 : colon));
    out.held_here = colon != std::string_view::npos && holder.substr(colon + 1) == instance;
  }
  return out;
}

}  // namespace

AnswerTier::AnswerTier(boost::asio::io_context& ioc, const config::StateSettings& settings,
                       Health& health, std::string instance)
    : settings_(settings), instance_(std::move(instance)), commands_(ioc, settings, health) {}

std::string AnswerTier::answer_name(std::string_view alias, std::string_view tenant,
                                    const cache::Key& key) const {
  std::string name = settings_.key_prefix;
  name += "e:";
  append_escaped(name, alias);
  name += ':';
  append_escaped(name, tenant);
  name += ':';
  name += '{';  // the answer and its flight's claim in one hash slot
  name += cache::to_hex(key);
  name += '}';
  return name;
}

std::string AnswerTier::purge_pattern(std::string_view prefix, std::string_view alias,
                                      std::string_view tenant, std::string_view key_prefix) {
  std::string pattern;
  for (const char c : prefix) {  // the operator's, written as it is: matched literally
    if (std::string_view("*?[]\\").find(c) != std::string_view::npos) {
      pattern += '\\';
    }
    pattern += c;
  }
  pattern += "e:";
  if (alias.empty()) {
    pattern += '*';
  } else {
    append_escaped(pattern, alias);
  }
  pattern += ':';
  if (tenant.empty()) {
    pattern += '*';
  } else {
    append_escaped(pattern, tenant);
  }
  pattern += ":{";
  pattern += key_prefix;
  pattern += "*}";  // the answers, not their flights' claims
  return pattern;
}

std::string AnswerTier::claim_value(const cache::Key& digest) const {
  return cache::to_hex(digest) + ":" + instance_;
}

boost::asio::awaitable<std::optional<std::string>> AnswerTier::find_answer(std::string_view alias,
                                                                           std::string_view tenant,
                                                                           const cache::Key& key) {
  const std::string name = answer_name(alias, tenant, key);
  const std::array<std::string_view, 2> args{"GET", name};
  Reply reply = co_await commands_.call(args, std::chrono::steady_clock::now() + settings_.timeout);
  if (reply.kind != Reply::Kind::kString) {
    co_return std::nullopt;
  }
  co_return std::move(reply.text);
}

void AnswerTier::put_answer(std::string_view alias, std::string_view tenant, const cache::Key& key,
                            std::string record, milliseconds ttl) {
  const std::string name = answer_name(alias, tenant, key);
  const std::string px = number(std::max<long long>(1, ttl.count()));
  const std::array<std::string_view, 5> args{"SET", name, record, "PX", px};
  commands_.send(args);
}

boost::asio::awaitable<cache::SharedStore::Claim> AnswerTier::claim_answer(std::string_view alias,
                                                                           std::string_view tenant,
                                                                           const cache::Key& key,
                                                                           milliseconds hold) {
  const std::string name = answer_name(alias, tenant, key);
  const std::string claim = name + ":claim";
  const std::string value = ":" + instance_;
  const std::string px = number(std::max<long long>(1, hold.count()));
  const std::array<std::string_view, 7> args{"EVAL", kClaimScript, "2", name, claim, value, px};
  co_return read_claim(
      co_await commands_.call(args, std::chrono::steady_clock::now() + settings_.timeout),
      instance_);
}

void AnswerTier::release_answer(std::string_view alias, std::string_view tenant,
                                const cache::Key& key) {
  const std::string claim = answer_name(alias, tenant, key) + ":claim";
  const std::string value = ":" + instance_;
  const std::array<std::string_view, 5> args{"EVAL", kReleaseScript, "1", claim, value};
  commands_.send(args);
}

boost::asio::awaitable<cache::SharedStore::Claim> AnswerTier::claim(const cache::Key& key,
                                                                    const cache::Key& digest,
                                                                    milliseconds hold) {
  const ClaimNames names = claim_names(settings_.key_prefix, key);
  const std::string value = claim_value(digest);
  const std::string px = number(std::max<long long>(1, hold.count()));
  const std::array<std::string_view, 7> args{"EVAL",      kClaimScript, "2", names.record,
                                             names.claim, value,        px};
  co_return read_claim(
      co_await commands_.call(args, std::chrono::steady_clock::now() + settings_.timeout),
      instance_);
}

void AnswerTier::finish_claim(const cache::Key& key, const cache::Key& digest,
                              std::optional<std::string> record, milliseconds ttl) {
  const ClaimNames names = claim_names(settings_.key_prefix, key);
  const std::string value = claim_value(digest);
  const std::string px = number(std::max<long long>(1, ttl.count()));
  const std::string empty;
  const std::array<std::string_view, 8> args{
      "EVAL", kFinishScript, "2", names.record, names.claim, value, record ? *record : empty, px};
  commands_.send(args);
}

}  // namespace sluice::redis
