#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "core/result.h"

namespace sluice::tenancy {

// POSTs `body` (JSON) to `url` and returns the HTTP status, bounded by `timeout` in all
// (resolve, connect, TLS, write, read). Blocking; called on the notifier's thread only.
using WebhookPost = std::function<Result<int>(const std::string& url, const std::string& body,
                                              std::chrono::milliseconds timeout)>;

// Sends budget events to the webhook (tenancy.budget_webhook) on its own thread, so a slow or
// dead receiver never delays key refreshes, and never a worker. Events wait in a bounded queue
// (kCapacity; beyond it they are dropped and counted). Each is tried once: a receiver that
// answers anything but 2xx, or does not answer in time, loses that event (counted); one warning
// is logged when sending starts failing and one line when it works again.
class BudgetNotifier {
 public:
  static constexpr std::size_t kCapacity = 1024;

  // `post` null or `url` empty: events are only logged (push() does nothing).
  BudgetNotifier(std::string url, std::chrono::milliseconds timeout, WebhookPost post);
  ~BudgetNotifier();  // stop()
  BudgetNotifier(const BudgetNotifier&) = delete;
  BudgetNotifier& operator=(const BudgetNotifier&) = delete;

  void start();
  // Sends what is queued (each bounded by the timeout; on the calling thread if start() never
  // ran), then joins the thread. Idempotent.
  void stop();
  // Any thread; never blocks on the network.
  void push(std::string event_json);

  std::uint64_t sent() const { return sent_.load(std::memory_order_relaxed); }
  std::uint64_t failed() const { return failed_.load(std::memory_order_relaxed); }
  std::uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

 private:
  void run();
  void send(const std::string& body);

  const std::string url_;
  const std::chrono::milliseconds timeout_;
  const WebhookPost post_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::string> queue_;
  bool stop_ = false;
  bool failing_ = false;  // notifier thread only
  std::atomic<std::uint64_t> sent_{0};
  std::atomic<std::uint64_t> failed_{0};
  std::atomic<std::uint64_t> dropped_{0};
  std::thread thread_;
};

}  // namespace sluice::tenancy
