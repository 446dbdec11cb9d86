#include "tenancy/budget_notifier.h"

#include "core/thread_name.h"
#include "spdlog/spdlog.h"

namespace sluice::tenancy {

BudgetNotifier::BudgetNotifier(std::string url, std::chrono::milliseconds timeout, WebhookPost post)
    : url_(std::move(url)), timeout_(timeout), post_(std::move(post)) {}

BudgetNotifier::~BudgetNotifier() { stop(); }

void BudgetNotifier::start() {
  if (url_.empty() || !post_ || thread_.joinable()) {
    return;
  }
  thread_ = std::thread([this] { run(); });
}

void BudgetNotifier::stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) {
    thread_.join();
  }
  // Never started (tests, or a stop before start): what was queued gets its one try here.
  std::deque<std::string> rest;
  {
    std::lock_guard lock(mu_);
    rest.swap(queue_);
  }
  for (const std::string& body : rest) {
    send(body);
  }
}

void BudgetNotifier::push(std::string event_json) {
  if (url_.empty() || !post_) {
    return;
  }
  {
    std::lock_guard lock(mu_);
    if (queue_.size() >= kCapacity) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    queue_.push_back(std::move(event_json));
  }
  wake_.notify_one();
}

void BudgetNotifier::run() {
  name_this_thread("budget-notify");
  std::unique_lock lock(mu_);
  while (true) {
    wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) {
      return;  // stopping, and everything queued was sent
    }
    std::string body = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    send(body);
    lock.lock();
  }
}

void BudgetNotifier::send(const std::string& body) {
  auto status = post_(url_, body, timeout_);
  const bool ok = status && *status >= 200 && *status < 300;
  if (ok) {
    sent_.fetch_add(1, std::memory_order_relaxed);
    if (failing_) {
      spdlog::info("budget webhook: events are delivered again");
      failing_ = false;
    }
    return;
  }
  failed_.fetch_add(1, std::memory_order_relaxed);
  if (!failing_) {
    spdlog::warn(
        "budget webhook: an event was not delivered ({}); further failures are counted "
        "in sluice_budget_webhook_events_total{{result=\"failed\"}}",
        status ? "answered " + std::to_string(*status) : status.error().message());
    failing_ = true;
  }
}

}  // namespace sluice::tenancy
