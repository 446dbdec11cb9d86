#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/time_zone.h"
#include "store/tenancy.h"

namespace sluice::tenancy {

// [start_ms, end_ms): the budget period an instant falls in.
struct Period {
  std::int64_t start_ms = 0;
  std::int64_t end_ms = INT64_MAX;
};

// The period of `budget` that contains `now_ms`. Monthly: from 00:00 on the first day of the
// calendar month in `zone` (the budget's time_zone, loaded by the caller) to the same instant of
// the next month; cumulative: from budget.starts_at_ms, never ending. Pure; any thread.
Period budget_period(const store::Budget& budget, const TimeZone& zone, std::int64_t now_ms);

// The unix ms of 00:00 local time on year-month-01 in `zone` (month may be 13: January of the
// next year).
std::int64_t local_month_start_ms(const TimeZone& zone, std::int32_t year, unsigned month);

// One amount cap and what has been spent against it in the current period: a key group's whole
// budget, the pool its keys without an allocation share, or one key's exclusive allocation.
//
// Workers read it (exhausted(), spent()) and add to it (add()) with relaxed atomics: no lock,
// no I/O. The key directory's background thread owns everything else: it re-reads the spend from
// the usage ledger (settle()), rolls the period over (start_period()) and keeps the thresholds
// already announced. An account is shared (shared_ptr) by every KeySet that names it, so a
// request that pinned an older key set still charges the live account.
class BudgetAccount {
 public:
  enum class Kind : std::uint8_t {
    kGroup,  // everything the group's keys spend, against the group's amount
    kPool,   // what keys without an allocation spend, against amount minus all allocations
    kKey,    // what one key with an allocation spends, against its allocation
  };

  // `budget` gives the period, mode and time zone (a key's allocation uses its group's);
  // `cap_micros` the amount of this account (may be <= 0: a pool fully allocated away);
  // `key_id` the key's immutable id (kKey; its spend is counted by it).
  BudgetAccount(Kind kind, std::string name, std::string group, const store::Budget& budget,
                std::int64_t cap_micros, TimeZone zone, std::string key_id = {});

  Kind kind() const { return kind_; }
  // Any thread. The group's name (kGroup, kPool) or the key's (kKey), for messages and events.
  std::string name() const { return *name_.load(std::memory_order_acquire); }
  const std::string& group() const { return group_; }
  const std::string& key_id() const { return key_id_; }
  const store::Budget& budget() const { return budget_; }
  std::int64_t cap_micros() const { return cap_micros_; }
  const TimeZone& zone() const { return zone_; }
  bool hard() const { return budget_.mode == store::BudgetMode::kHard; }

  // Any thread. What was spent in the period containing `now_ms`: the last ledger read plus what
  // this instance charged since. 0 once `now_ms` is past the period the account is in (the new
  // period's spend is unknown until the background thread starts it: it admits meanwhile).
  std::int64_t spent(std::int64_t now_ms) const;
  // Any thread: a hard cap that the spend has reached.
  bool exhausted(std::int64_t now_ms) const { return hard() && spent(now_ms) >= cap_micros_; }
  // Any thread (workers, when a request ends): adds a settled charge. Sums saturate
  // (tenancy/money.h): a total beyond int64 stays above every cap.
  void add(std::int64_t micros);
  Period period() const {
    return {start_ms_.load(std::memory_order_acquire), end_ms_.load(std::memory_order_acquire)};
  }

  // Background thread: a renamed key keeps its account (its spend is its id's), with the new
  // name in messages.
  void rename(std::string name) {
    name_.store(std::make_shared<const std::string>(std::move(name)), std::memory_order_release);
  }

  // Background thread. Starts the period containing `now_ms` when it is not the current one
  // (spend back to 0, thresholds re-armed); true when it did.
  bool start_period(std::int64_t now_ms);
  // Background thread. `ledger_micros` is the period's spend per the usage ledger, read just
  // now. What this instance charged since the last settle is folded into the base, and the base
  // becomes the larger of the two lower bounds: the ledger (every instance, but missing records
  // still queued for writing) and the last base plus this instance's charges since.
  void settle(std::int64_t ledger_micros);
  // Background thread. The thresholds (percent of the cap, increasing) reached and not yet
  // announced in this period; each is returned once per period.
  std::vector<std::uint32_t> crossed(const std::vector<std::uint32_t>& thresholds,
                                     std::int64_t now_ms);

 private:
  const Kind kind_;
  std::atomic<std::shared_ptr<const std::string>> name_;
  const std::string group_;
  const std::string key_id_;
  const store::Budget budget_;
  const std::int64_t cap_micros_;
  const TimeZone zone_;
  std::atomic<std::int64_t> start_ms_{0};
  std::atomic<std::int64_t> end_ms_{0};  // 0: no period started yet (spent() is 0)
  std::atomic<std::int64_t> base_{0};
  std::atomic<std::int64_t> local_{0};
  std::uint32_t announced_ = 0;  // background thread: the highest threshold announced
};

// Whether two budgets count the same way (an account is kept across key-set reloads when its
// budget and cap did not change).
bool same_budget(const store::Budget& a, const store::Budget& b);

// The 429 a request gets when `account` is exhausted: OpenAI's insufficient_quota, naming the
// group or key and the period. Built only on refusal (allocates).
Error budget_exhausted(const BudgetAccount& account, std::int64_t now_ms);

// A budget event for the webhook and the log: `threshold` percent of `account`'s cap reached.
// JSON, one object:
//   {"type":"budget.threshold","subject":"group"|"pool"|"key","group":"...","key":"..."|null,
//    "threshold_percent":80,"spent_micros":...,"amount_micros":...,"mode":"hard"|"advisory",
//    "period":"monthly"|"cumulative","time_zone":"...","period_start":"<RFC 3339>",
//    "period_end":"<RFC 3339>"|null,"at":"<RFC 3339>","instance":"..."}
std::string budget_event_json(const BudgetAccount& account, std::uint32_t threshold,
                              std::int64_t now_ms, std::string_view instance);

}  // namespace sluice::tenancy
