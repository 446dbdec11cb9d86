#include "tenancy/budget.h"

#include <algorithm>
#include <cstdio>

#include "codec/json_writer.h"
#include "tenancy/money.h"

namespace sluice::tenancy {

namespace {

constexpr std::int64_t kMsPerDay = 86'400'000;

std::string_view subject(BudgetAccount::Kind kind) {
  switch (kind) {
    case BudgetAccount::Kind::kGroup:
      return "group";
    case BudgetAccount::Kind::kPool:
      return "pool";
    case BudgetAccount::Kind::kKey:
      return "key";
  }
  return "group";
}

// Micro-units as a decimal amount ("12.345678").
std::string amount(std::int64_t micros) {
  const bool negative = micros < 0;
  const std::uint64_t v =
      negative ? static_cast<std::uint64_t>(-(micros + 1)) + 1 : static_cast<std::uint64_t>(micros);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%s%llu.%06llu", negative ? "-" : "",
                static_cast<unsigned long long>(v / 1'000'000),
                static_cast<unsigned long long>(v % 1'000'000));
  return buf;
}

}  // namespace

std::int64_t local_month_start_ms(const TimeZone& zone, std::int32_t year, unsigned month) {
  if (month > 12) {
    year += static_cast<std::int32_t>((month - 1) / 12);
    month = (month - 1) % 12 + 1;
  }
  const std::int64_t local_midnight_s = days_from_civil(year, month, 1) * 86'400;
  // The offset in effect at that local midnight: guess with the offset a day earlier, then
  // correct once (a transition exactly at midnight on the first is resolved to the later offset).
  const std::int32_t guess = zone.offset_at(local_midnight_s - 86'400);
  const std::int32_t offset = zone.offset_at(local_midnight_s - guess);
  return (local_midnight_s - offset) * 1000;
}

Period budget_period(const store::Budget& budget, const TimeZone& zone, std::int64_t now_ms) {
  if (budget.period == store::BudgetPeriod::kCumulative) {
    return {budget.starts_at_ms, INT64_MAX};
  }
  const LocalTime local = zone.local(now_ms);
  Period p{local_month_start_ms(zone, local.year, local.month),
           local_month_start_ms(zone, local.year, local.month + 1u)};
  // A local month start computed around a transition can land a few hours off the instant;
  // keep the invariant start <= now < end whatever the zone data says.
  if (now_ms < p.start_ms) {
    p.start_ms = now_ms - now_ms % kMsPerDay;
  }
  if (now_ms >= p.end_ms) {
    p.end_ms = now_ms + 1;
  }
  return p;
}

bool same_budget(const store::Budget& a, const store::Budget& b) {
  return a.amount_micros == b.amount_micros && a.period == b.period && a.mode == b.mode &&
         a.time_zone == b.time_zone && a.starts_at_ms == b.starts_at_ms;
}

BudgetAccount::BudgetAccount(Kind kind, std::string name, std::string group,
                             const store::Budget& budget, std::int64_t cap_micros, TimeZone zone,
                             std::string key_id)
    : kind_(kind),
      name_(std::make_shared<const std::string>(std::move(name))),
      group_(std::move(group)),
      key_id_(std::move(key_id)),
      budget_(budget),
      cap_micros_(cap_micros),
      zone_(std::move(zone)) {}

std::int64_t BudgetAccount::spent(std::int64_t now_ms) const {
  const std::int64_t end = end_ms_.load(std::memory_order_acquire);
  if (now_ms >= end || now_ms < start_ms_.load(std::memory_order_acquire)) {
    return 0;
  }
  return saturating_add(base_.load(std::memory_order_relaxed),
                        local_.load(std::memory_order_relaxed));
}

void BudgetAccount::add(std::int64_t micros) {
  std::int64_t current = local_.load(std::memory_order_relaxed);
  while (!local_.compare_exchange_weak(current, saturating_add(current, micros),
                                       std::memory_order_relaxed)) {
  }
}

bool BudgetAccount::start_period(std::int64_t now_ms) {
  const Period current = period();
  if (current.end_ms != 0 && now_ms >= current.start_ms && now_ms < current.end_ms) {
    return false;
  }
  const Period next = budget_period(budget_, zone_, now_ms);
  // Workers see the account closed (end 0: spent() is 0) while it is reset.
  end_ms_.store(0, std::memory_order_release);
  base_.store(0, std::memory_order_relaxed);
  local_.store(0, std::memory_order_relaxed);
  announced_ = 0;
  start_ms_.store(next.start_ms, std::memory_order_release);
  end_ms_.store(next.end_ms, std::memory_order_release);
  return true;
}

void BudgetAccount::settle(std::int64_t ledger_micros) {
  // Moved, not exchanged: a reader between the two steps sees the charge twice (briefly
  // stricter), never not at all.
  const std::int64_t charged = local_.load(std::memory_order_relaxed);
  const std::int64_t known = saturating_add(base_.load(std::memory_order_relaxed), charged);
  base_.store(known, std::memory_order_relaxed);
  local_.fetch_sub(charged, std::memory_order_relaxed);
  base_.store(std::max(known, ledger_micros), std::memory_order_relaxed);
}

std::vector<std::uint32_t> BudgetAccount::crossed(const std::vector<std::uint32_t>& thresholds,
                                                  std::int64_t now_ms) {
  std::vector<std::uint32_t> out;
  if (cap_micros_ <= 0) {
    return out;
  }
  const std::int64_t used = spent(now_ms);
  for (std::uint32_t t : thresholds) {
    // used / cap >= t / 100, in integers (caps are at most ~9.2e12 micros: no overflow below
    // 1000 %).
    if (t > announced_ &&
        static_cast<__int128>(used) * 100 >= static_cast<__int128>(t) * cap_micros_) {
      out.push_back(t);
      announced_ = t;
    }
  }
  return out;
}

Error budget_exhausted(const BudgetAccount& account, std::int64_t now_ms) {
  const Period p = account.period();
  const bool monthly = account.budget().period == store::BudgetPeriod::kMonthly;
  std::string who;
  switch (account.kind()) {
    case BudgetAccount::Kind::kGroup:
      who = "key group " + account.name();
      break;
    case BudgetAccount::Kind::kPool:
      who = "key group " + account.name() + " (the share of its keys without an allocation)";
      break;
    case BudgetAccount::Kind::kKey:
      who = "key " + account.name() + " (its allocation in key group " + account.group() + ")";
      break;
  }
  std::string message = "budget exhausted: " + who + " has spent " + amount(account.spent(now_ms)) +
                        " of " + amount(account.cap_micros());
  if (monthly) {
    message += " this month (" + account.zone().name() + "; period " +
               format_rfc3339_ms(p.start_ms) + " to " + format_rfc3339_ms(p.end_ms) + ")";
  } else {
    message += " since " + format_rfc3339_ms(p.start_ms) + " (cumulative budget)";
  }
  return Error(ErrorKind::kRateLimited, std::move(message)).with_code("insufficient_quota");
}

std::string budget_event_json(const BudgetAccount& account, std::uint32_t threshold,
                              std::int64_t now_ms, std::string_view instance) {
  const Period p = account.period();
  std::string out;
  codec::JsonWriter w(out);
  w.raw(R"({"type":"budget.threshold","subject":)").string(subject(account.kind()));
  w.next_key("group").string(account.group());
  w.next_key("key");
  account.kind() == BudgetAccount::Kind::kKey ? w.string(account.name()) : w.null();
  w.next_key("threshold_percent").number(std::uint64_t{threshold});
  w.next_key("spent_micros").number(account.spent(now_ms));
  w.next_key("amount_micros").number(account.cap_micros());
  w.next_key("mode").string(account.hard() ? "hard" : "advisory");
  w.next_key("period").string(
      account.budget().period == store::BudgetPeriod::kMonthly ? "monthly" : "cumulative");
  w.next_key("time_zone").string(account.zone().name());
  w.next_key("period_start").string(format_rfc3339_ms(p.start_ms));
  w.next_key("period_end");
  p.end_ms == INT64_MAX ? w.null() : w.string(format_rfc3339_ms(p.end_ms));
  w.next_key("at").string(format_rfc3339_ms(now_ms));
  w.next_key("instance").string(instance);
  w.ch('}');
  return out;
}

}  // namespace sluice::tenancy
