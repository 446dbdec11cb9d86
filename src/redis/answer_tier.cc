#include "redis/answer_tier.h"

#include <array>
#include <charconv>

#include "cache/semantic_index.h"

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

// A question answered: its vector record appended to its bucket's log (ARGV[1]), which keeps
// its newest ARGV[3] and lives ARGV[2] ms from this one.
constexpr std::string_view kAppendVectorScript = R"lua(
redis.call('XADD', KEYS[1], 'MAXLEN', ARGV[3], '*', 'v', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
)lua";

// The log's records from ARGV[1] (an XRANGE start), at most ARGV[2], as one string (this
// client reads no arrays): "<id> <length>\n<record>" each.
constexpr std::string_view kVectorsAfterScript = R"lua(
local out = {}
for _, e in ipairs(redis.call('XRANGE', KEYS[1], ARGV[1], '+', 'COUNT', ARGV[2])) do
  local v = e[2][2]
  out[#out + 1] = e[1] .. ' ' .. #v .. '\n' .. v
end
return table.concat(out)
)lua";

// A shared call's live record appended to its log (ARGV[1]), which lives ARGV[2] ms from it;
// answers how many ms the call's watch (KEYS[2]) has left (negative: none).
constexpr std::string_view kAppendLiveScript = R"lua(
redis.call('XADD', KEYS[1], '*', 'r', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return redis.call('PTTL', KEYS[2])
)lua";

// The live log's records from ARGV[1], at most ARGV[2], after one character that says whether
// the call's claim (KEYS[2]) is still held: "H" or "-", then kVectorsAfterScript's format. One
// script, so the two are read at one instant: a log without its end and no claim means the
// holder is gone. The waiter's watch (KEYS[3]) is set for ARGV[3] ms.
constexpr std::string_view kLiveAfterScript = R"lua(
redis.call('SET', KEYS[3], '1', 'PX', ARGV[3])
local out = {}
for _, e in ipairs(redis.call('XRANGE', KEYS[1], ARGV[1], '+', 'COUNT', ARGV[2])) do
  local v = e[2][2]
  out[#out + 1] = e[1] .. ' ' .. #v .. '\n' .. v
end
local held = redis.call('EXISTS', KEYS[2]) == 1 and 'H' or '-'
return held .. table.concat(out)
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

bool read_number(std::string_view text, std::uint64_t& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

// A stream id, "<ms>-<seq>".
std::optional<cache::LogPosition> read_position(std::string_view id) {
  const std::size_t dash = id.find('-');
  cache::LogPosition at;
  if (dash == std::string_view::npos || !read_number(id.substr(0, dash), at.major) ||
      !read_number(id.substr(dash + 1), at.minor)) {
    return std::nullopt;
  }
  return at;
}

// kVectorsAfterScript's answer; nullopt when it is not one.
// An XRANGE start just after `after` ("-": from the first).
std::string range_after(cache::LogPosition after) {
  return after == cache::LogPosition{} ? "-"
                                       : "(" + number(static_cast<long long>(after.major)) + "-" +
                                             number(static_cast<long long>(after.minor));
}

std::optional<cache::SharedStore::VectorLog> read_vector_log(std::string_view text,
                                                             cache::LogPosition after) {
  cache::SharedStore::VectorLog log;
  log.last = after;
  while (!text.empty()) {
    const std::size_t space = text.find(' ');
    const std::size_t newline = text.find('\n');
    std::uint64_t length = 0;
    if (space == std::string_view::npos || newline == std::string_view::npos || newline < space ||
        !read_number(text.substr(space + 1, newline - space - 1), length) ||
        length > text.size() - newline - 1) {
      return std::nullopt;
    }
    std::optional<cache::LogPosition> at = read_position(text.substr(0, space));
    if (!at) {
      return std::nullopt;
    }
    log.last = *at;
    log.records.emplace_back(text.substr(newline + 1, length));
    text.remove_prefix(newline + 1 + length);
  }
  return log;
}

}  // namespace

AnswerTier::AnswerTier(boost::asio::io_context& ioc, const config::StateSettings& settings,
                       Health& health, std::string instance)
    : settings_(settings), instance_(std::move(instance)), commands_(ioc, settings, health) {}

// "<prefix><kind>:<alias>:<tenant>:{<key hex>}": the braces make the key the hash tag, so an
// answer and its flight's claim share a slot.
std::string AnswerTier::scoped_name(std::string_view kind, std::string_view alias,
                                    std::string_view tenant, const cache::Key& key) const {
  std::string name = settings_.key_prefix;
  name += kind;
  name += ':';
  append_escaped(name, alias);
  name += ':';
  append_escaped(name, tenant);
  name += ":{";
  name += cache::to_hex(key);
  name += '}';
  return name;
}

std::string AnswerTier::answer_name(std::string_view alias, std::string_view tenant,
                                    const cache::Key& key) const {
  return scoped_name("e", alias, tenant, key);
}

std::string AnswerTier::vector_log_name(std::string_view alias, std::string_view tenant,
                                        const cache::Key& bucket) const {
  return scoped_name("v", alias, tenant, bucket);
}

std::string AnswerTier::purge_pattern(std::string_view prefix, std::string_view alias,
                                      std::string_view tenant, std::string_view key_prefix,
                                      Records kind) {
  std::string pattern;
  for (const char c : prefix) {  // the operator's, written as it is: matched literally
    if (std::string_view("*?[]\\").find(c) != std::string_view::npos) {
      pattern += '\\';
    }
    pattern += c;
  }
  pattern += kind == Records::kVectorLogs ? "v:" : "e:";
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

void AnswerTier::append_live(std::string_view alias, std::string_view tenant, const cache::Key& key,
                             std::string record, milliseconds ttl,
                             std::function<void(milliseconds)> watched) {
  const std::string name = answer_name(alias, tenant, key);
  const std::string log = name + ":live";
  const std::string watch = name + ":watch";
  const std::string px = number(std::max<long long>(1, ttl.count()));
  const std::array<std::string_view, 7> args{"EVAL", kAppendLiveScript, "2", log, watch, record,
                                             px};
  if (!watched) {
    commands_.send(args);
    return;
  }
  commands_.send(args, [watched = std::move(watched)](const Reply& reply) {
    if (reply.kind == Reply::Kind::kInteger) {
      watched(milliseconds(std::max<long long>(0, reply.integer)));
    }
  });
}

boost::asio::awaitable<std::optional<cache::SharedStore::LiveLog>> AnswerTier::live_after(
    std::string_view alias, std::string_view tenant, const cache::Key& key,
    cache::LogPosition after, std::size_t max) {
  const std::string name = answer_name(alias, tenant, key);
  const std::string log = name + ":live";
  const std::string claim = name + ":claim";
  const std::string watch = name + ":watch";
  const std::string start = range_after(after);
  const std::string count = number(static_cast<long long>(max));
  const std::string watch_px = number(kLiveWatch.count());
  const std::array<std::string_view, 9> args{
      "EVAL", kLiveAfterScript, "3", log, claim, watch, start, count, watch_px};
  Reply reply = co_await commands_.call(args, std::chrono::steady_clock::now() + settings_.timeout);
  if (reply.kind != Reply::Kind::kString || reply.text.empty()) {
    co_return std::nullopt;
  }
  std::optional<VectorLog> read = read_vector_log(std::string_view(reply.text).substr(1), after);
  if (!read) {
    co_return std::nullopt;
  }
  co_return LiveLog{std::move(read->records), read->last, reply.text.front() == 'H'};
}

void AnswerTier::append_vector(std::string_view alias, std::string_view tenant,
                               const cache::Key& bucket, std::string record, milliseconds ttl) {
  const std::string name = vector_log_name(alias, tenant, bucket);
  const std::string px = number(std::max<long long>(1, ttl.count()));
  const std::string keep = number(static_cast<long long>(cache::SemanticIndex::kMaxBucketVectors));
  const std::array<std::string_view, 7> args{"EVAL", kAppendVectorScript, "1", name, record, px,
                                             keep};
  commands_.send(args);
}

boost::asio::awaitable<std::optional<cache::SharedStore::VectorLog>> AnswerTier::vectors_after(
    std::string_view alias, std::string_view tenant, const cache::Key& bucket,
    cache::LogPosition after, std::size_t max) {
  const std::string name = vector_log_name(alias, tenant, bucket);
  const std::string start = range_after(after);
  const std::string count = number(static_cast<long long>(max));
  const std::array<std::string_view, 6> args{"EVAL", kVectorsAfterScript, "1", name, start, count};
  Reply reply = co_await commands_.call(args, std::chrono::steady_clock::now() + settings_.timeout);
  if (reply.kind != Reply::Kind::kString) {
    co_return std::nullopt;
  }
  co_return read_vector_log(reply.text, after);
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
