#include "config/state.h"

#include <string>
#include <string_view>

#include "config/loader.h"
#include "config/scalars.h"

namespace sluice::config {
namespace {

// redis://[:password@]host[:port][/db] into host, port, password and db; false when malformed.
bool parse_redis_url(StateSettings& s) {
  constexpr std::string_view kScheme = "redis://";
  std::string_view rest = s.redis_url;
  if (!rest.starts_with(kScheme)) {
    return false;
  }
  rest.remove_prefix(kScheme.size());
  if (const std::size_t at = rest.rfind('@'); at != std::string_view::npos) {
    std::string_view user_info = rest.substr(0, at);
    rest.remove_prefix(at + 1);
    const std::size_t colon = user_info.find(':');
    s.redis_password =
        std::string(colon == std::string_view::npos ? user_info : user_info.substr(colon + 1));
  }
  std::string_view authority = rest.substr(0, rest.find('/'));
  if (authority.size() < rest.size()) {
    const std::string_view db = rest.substr(authority.size() + 1);
    if (!db.empty()) {
      if (db.size() > 2 || db.find_first_not_of("0123456789") != std::string_view::npos) {
        return false;
      }
      s.redis_db = static_cast<std::uint32_t>(std::stoul(std::string(db)));
    }
  }
  if (const std::size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    const std::string_view port = authority.substr(colon + 1);
    if (port.empty() || port.size() > 5 ||
        port.find_first_not_of("0123456789") != std::string_view::npos) {
      return false;
    }
    const unsigned long value = std::stoul(std::string(port));
    if (value == 0 || value > 65535) {
      return false;
    }
    s.redis_port = static_cast<std::uint16_t>(value);
    authority = authority.substr(0, colon);
  }
  if (authority.empty() || !is_visible_ascii(authority)) {
    return false;
  }
  s.redis_host = std::string(authority);
  return true;
}

}  // namespace

StateSettings load_state(const YamlField& field) {
  const YamlMap m = field.map({"backend", "redis"});
  StateSettings s;
  const std::optional<YamlField> backend = m.get("backend");
  const std::optional<YamlField> redis = m.get("redis");
  if (backend) {
    const std::string name = backend->text();
    if (name == "redis") {
      if (!redis) {
        backend->fail("backend redis needs a redis: { url: ... } section");
      }
    } else if (name != "local") {
      backend->fail("expected local or redis, got " + in_quotes(name));
    } else if (redis) {
      redis->fail("backend is local: remove redis, or set backend: redis");
    }
  }
  if (!redis) {
    if (!backend) {
      field.fail("expected backend: local or redis: { url: ... }");
    }
    return s;
  }
  return load_redis(*redis, RedisUse::kLimits);
}

StateSettings load_redis(const YamlField& redis, RedisUse use) {
  const YamlMap r = use == RedisUse::kLimits
                        ? redis.map({"url", "timeout_ms", "on_error", "key_prefix"})
                        : redis.map({"url", "timeout_ms", "key_prefix"});
  StateSettings s;
  s.backend = StateSettings::Backend::kRedis;
  const YamlField url = r.required("url");
  s.redis_url = url.text();
  if (!parse_redis_url(s)) {
    url.fail("expected redis://[:password@]host[:port][/db] (value not shown)");
  }
  if (auto f = r.get("timeout_ms")) {
    s.timeout = f->millis_in(1, 1000);
  }
  if (auto f = r.get("on_error")) {
    const std::string policy = f->text();
    if (policy == "fail_open") {
      s.on_error = StateSettings::OnError::kFailOpen;
    } else if (policy == "fail_closed") {
      s.on_error = StateSettings::OnError::kFailClosed;
    } else {
      f->fail("expected fail_open or fail_closed, got " + in_quotes(policy));
    }
  }
  if (auto f = r.get("key_prefix")) {
    s.key_prefix = f->text();
    if (s.key_prefix.size() > 64 || !is_visible_ascii(s.key_prefix) ||
        s.key_prefix.find_first_of("{}") != std::string::npos) {
      f->fail("key_prefix must be up to 64 visible characters without spaces or braces");
    }
  }
  return s;
}

}  // namespace sluice::config
