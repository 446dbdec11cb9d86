#pragma once

#include <string_view>

namespace sluice::limits {

// The Redis side of RedisLimiter: Lua scripts run atomically by EVALSHA, so a check is one
// round trip with no read-modify-write race between instances. Time comes from the server
// (TIME), so instances with skewed clocks still share one bucket. Redis 7 replicates a script's
// effects, not the script, so reading TIME before writing is allowed.
//
// kCheckScript: token buckets (hashes: t = tokens, ts = last update in ms) refilled
// continuously at limit/60000 per ms up to `limit`, and concurrency slots (sorted sets: member =
// lease id, score = expiry in ms; expired leases are removed on every acquire, so an instance
// that dies holding slots loses them after the lease TTL). All or none: nothing is taken unless
// every bucket and slot set has room. Nothing is taken either when Redis runs the script after
// `deadline` (its own clock, in ms; 0: none): the instance gave up on the check by then, so
// whatever it took would never be given back (a stall must not lock a tenant out).
//   KEYS[1..n] token buckets, KEYS[n+1..n+m] slot sets
//   ARGV: n, m, lease id, lease ttl ms, deadline ms, then limit and cost per bucket, then limit
//   per slot set
//   returns {1 | 0 | -1 (past the deadline), index of the refusing key (0: none), retry-after
//   ms, Redis's time in ms, tokens left per bucket}
inline constexpr std::string_view kCheckScript = R"lua(
local n = tonumber(ARGV[1])
local m = tonumber(ARGV[2])
local lease = ARGV[3]
local ttl = tonumber(ARGV[4])
local deadline = tonumber(ARGV[5])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if deadline > 0 and now > deadline then
  return {-1, 0, 0, now}
end
local out = {1, 0, 0, now}
local level = {}
for i = 1, n do
  local limit = tonumber(ARGV[4 + 2 * i])
  local cost = tonumber(ARGV[5 + 2 * i])
  local rate = limit / 60000
  local b = redis.call('HMGET', KEYS[i], 't', 'ts')
  local tokens = tonumber(b[1]) or limit
  local ts = tonumber(b[2]) or now
  if now > ts then tokens = math.min(limit, tokens + (now - ts) * rate) end
  level[i] = tokens
  if out[1] == 1 and tokens < cost then
    out = {0, i, math.ceil((cost - tokens) / rate), now}
    if cost > limit then out[3] = -1 end
  end
end
if out[1] == 1 then
  for j = 1, m do
    local key = KEYS[n + j]
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
    if redis.call('ZCARD', key) >= tonumber(ARGV[5 + 2 * n + j]) then
      out = {0, n + j, 1000, now}
      break
    end
  end
end
for i = 1, n do
  if out[1] == 1 then
    level[i] = level[i] - tonumber(ARGV[5 + 2 * i])
    redis.call('HSET', KEYS[i], 't', level[i], 'ts', now)
    redis.call('PEXPIRE', KEYS[i], 120000)
  end
  out[4 + i] = math.floor(level[i])
end
if out[1] == 1 then
  for j = 1, m do
    redis.call('ZADD', KEYS[n + j], now + ttl, lease)
    redis.call('PEXPIRE', KEYS[n + j], ttl)
  end
end
return out
)lua";

// kGiveBackScript: undoes a check that took its charges after the instance had given up on it
// (the reply came after the deadline, within the clock error the deadline allows): the same
// KEYS and ARGV as that check. Each bucket gets its cost back (never above full) and each slot
// set loses the lease.
inline constexpr std::string_view kGiveBackScript = R"lua(
local n = tonumber(ARGV[1])
local m = tonumber(ARGV[2])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
for i = 1, n do
  local limit = tonumber(ARGV[4 + 2 * i])
  local b = redis.call('HMGET', KEYS[i], 't', 'ts')
  local tokens = tonumber(b[1]) or limit
  local ts = tonumber(b[2]) or now
  if now > ts then tokens = tokens + (now - ts) * limit / 60000 end
  tokens = math.min(limit, tokens + tonumber(ARGV[5 + 2 * i]))
  redis.call('HSET', KEYS[i], 't', tokens, 'ts', now)
  redis.call('PEXPIRE', KEYS[i], 120000)
end
for j = 1, m do
  redis.call('ZREM', KEYS[n + j], ARGV[3])
end
return n + m
)lua";

// kCorrectScript: settles token buckets with real usage. KEYS[i] a bucket, ARGV[2i-1] its
// limit, ARGV[2i] the tokens to add to what it used (negative gives back). A bucket may go into
// debt down to -limit (a minute of its rate) and never above full.
inline constexpr std::string_view kCorrectScript = R"lua(
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
for i = 1, #KEYS do
  local limit = tonumber(ARGV[2 * i - 1])
  local delta = tonumber(ARGV[2 * i])
  local b = redis.call('HMGET', KEYS[i], 't', 'ts')
  local tokens = tonumber(b[1]) or limit
  local ts = tonumber(b[2]) or now
  if now > ts then tokens = math.min(limit, tokens + (now - ts) * limit / 60000) end
  tokens = math.max(-limit, math.min(limit, tokens - delta))
  redis.call('HSET', KEYS[i], 't', tokens, 'ts', now)
  redis.call('PEXPIRE', KEYS[i], 120000)
end
return #KEYS
)lua";

}  // namespace sluice::limits
