#include "redis/purge.h"

#include <memory>
#include <vector>

#include <hiredis/hiredis.h>

namespace sluice::redis {
namespace {

struct ContextFree {
  void operator()(redisContext* c) const { redisFree(c); }
};
struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Context = std::unique_ptr<redisContext, ContextFree>;
using OwnedReply = std::unique_ptr<redisReply, ReplyFree>;

OwnedReply run(redisContext* c, const std::vector<std::string_view>& args) {
  std::vector<const char*> argv;
  std::vector<std::size_t> lens;
  for (std::string_view a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  return OwnedReply(static_cast<redisReply*>(
      redisCommandArgv(c, static_cast<int>(args.size()), argv.data(), lens.data())));
}

bool failed(const OwnedReply& r, std::string& error, std::string_view what) {
  if (r == nullptr || r->type == REDIS_REPLY_ERROR) {
    error = std::string(what) + (r == nullptr ? ": no answer" : ": " + std::string(r->str, r->len));
    return true;
  }
  return false;
}

}  // namespace

std::optional<std::uint64_t> purge_matching(const config::StateSettings& settings,
                                            std::string_view pattern,
                                            std::chrono::milliseconds budget, std::string& error) {
  const auto give_up = std::chrono::steady_clock::now() + budget;
  timeval tv{};
  tv.tv_sec = static_cast<long>(budget.count() / 1000);
  tv.tv_usec = static_cast<long>((budget.count() % 1000) * 1000);
  Context c(redisConnectWithTimeout(settings.redis_host.c_str(), settings.redis_port, tv));
  if (c == nullptr || c->err != 0) {
    error = "cannot connect to redis";
    return std::nullopt;
  }
  redisSetTimeout(c.get(), tv);
  if (!settings.redis_password.empty() &&
      failed(run(c.get(), {"AUTH", settings.redis_password}), error, "AUTH")) {
    return std::nullopt;
  }
  const std::string db = std::to_string(settings.redis_db);
  if (settings.redis_db != 0 && failed(run(c.get(), {"SELECT", db}), error, "SELECT")) {
    return std::nullopt;
  }
  std::uint64_t deleted = 0;
  std::string cursor = "0";
  do {
    if (std::chrono::steady_clock::now() > give_up) {
      error = "purge took longer than its budget; " + std::to_string(deleted) + " deleted";
      return std::nullopt;
    }
    OwnedReply page = run(c.get(), {"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"});
    if (failed(page, error, "SCAN")) {
      return std::nullopt;
    }
    if (page->type != REDIS_REPLY_ARRAY || page->elements != 2 ||
        page->element[0]->type != REDIS_REPLY_STRING ||
        page->element[1]->type != REDIS_REPLY_ARRAY) {
      error = "SCAN: unexpected reply";
      return std::nullopt;
    }
    cursor.assign(page->element[0]->str, page->element[0]->len);
    const redisReply* keys = page->element[1];
    if (keys->elements == 0) {
      continue;
    }
    std::vector<std::string_view> unlink{"UNLINK"};
    for (std::size_t i = 0; i < keys->elements; ++i) {
      unlink.emplace_back(keys->element[i]->str, keys->element[i]->len);
    }
    OwnedReply done = run(c.get(), unlink);
    if (failed(done, error, "UNLINK")) {
      return std::nullopt;
    }
    deleted += done->type == REDIS_REPLY_INTEGER ? static_cast<std::uint64_t>(done->integer) : 0;
  } while (cursor != "0");
  return deleted;
}

}  // namespace sluice::redis
