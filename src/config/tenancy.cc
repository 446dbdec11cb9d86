#include "config/tenancy.h"

#include "config/loader.h"
#include "config/scalars.h"

namespace sluice::config {

// tenancy: { enabled, refresh_ms, spend_refresh_ms, budget_thresholds,
//            budget_webhook: { url, timeout_ms } }
TenancySettings load_tenancy(const YamlField* field, bool has_store) {
  TenancySettings t;
  t.enabled = has_store;
  if (field == nullptr) {
    return t;
  }
  const YamlMap m = field->map(
      {"enabled", "refresh_ms", "spend_refresh_ms", "budget_thresholds", "budget_webhook"});
  if (auto f = m.get("enabled")) {
    t.enabled = f->boolean();
    if (t.enabled && !has_store) {
      f->fail(
          "keys and budgets in the store need a store: set store: { sqlite: PATH } or "
          "{ postgres: URL }");
    }
  } else if (!has_store) {
    field->fail(
        "keys and budgets in the store need a store: set store: { sqlite: PATH } or "
        "{ postgres: URL }");
  }
  if (auto f = m.get("refresh_ms")) {
    t.refresh = f->millis_in(50, 600000);
  }
  if (auto f = m.get("spend_refresh_ms")) {
    t.spend_refresh = f->millis_in(100, 3600000);
  }
  if (auto f = m.get("budget_thresholds")) {
    t.budget_thresholds.clear();
    const std::vector<YamlField> items = f->items();
    if (items.empty()) {
      f->fail("list at least one percentage (e.g. [80, 100])");
    }
    for (const YamlField& item : items) {
      const auto percent = static_cast<std::uint32_t>(item.unsigned_in(1, 1000));
      if (!t.budget_thresholds.empty() && percent <= t.budget_thresholds.back()) {
        item.fail("thresholds must increase (" + std::to_string(percent) + " after " +
                  std::to_string(t.budget_thresholds.back()) + ")");
      }
      t.budget_thresholds.push_back(percent);
    }
  }
  if (auto f = m.get("budget_webhook")) {
    const YamlMap w = f->map({"url", "timeout_ms"});
    const YamlField url = w.required("url");
    t.webhook_url = url.text();
    if ((!t.webhook_url.starts_with("http://") && !t.webhook_url.starts_with("https://")) ||
        !is_visible_ascii(t.webhook_url)) {
      url.fail("expected an http:// or https:// URL");
    }
    if (auto g = w.get("timeout_ms")) {
      t.webhook_timeout = g->millis_in(10, 60000);
    }
  }
  return t;
}

}  // namespace sluice::config
