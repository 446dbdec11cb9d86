#include "http/otlp_exporter.h"

#include <random>
#include <stdexcept>

#include "core/thread_name.h"
#include "core/version.h"
#include "http/json_post.h"
#include "observability/otlp_json.h"
#include "spdlog/spdlog.h"

namespace sluice::http {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

constexpr milliseconds kFirstBackoff{200};
// How often the thread looks at the queues for a full batch between export intervals. Workers
// never signal (that would be a syscall per request); the exporter polls.
constexpr milliseconds kPoll{25};

bool retryable(const PostAnswer& a) {
  // opentelemetry-proto docs/specification.md, "Retryable Response Codes"; a transport
  // failure ("the server disconnects without returning a response") is retried too.
  return a.status == 0 || a.status == 429 || a.status == 502 || a.status == 503 || a.status == 504;
}

JsonPoster make_poster(const config::TraceSettings& settings) {
  auto poster = JsonPoster::to(settings.endpoint, settings.headers);
  if (!poster) {
    throw std::runtime_error("traces.endpoint: " + poster.error().message());
  }
  return std::move(*poster);
}

}  // namespace

OtlpExporter::OtlpExporter(const config::TraceSettings& settings, observability::SpanBuffer& buffer,
                           std::string instance_id)
    : settings_(settings),
      buffer_(buffer),
      instance_id_(std::move(instance_id)),
      poster_(make_poster(settings_)) {
  thread_ = std::thread([this] { run(); });
}

OtlpExporter::~OtlpExporter() { shutdown(); }

void OtlpExporter::shutdown() {
  {
    std::lock_guard lock(mu_);
    if (stop_) {
      return;
    }
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

bool OtlpExporter::wait(milliseconds delay, bool interruptible) {
  std::unique_lock lock(mu_);
  if (!interruptible) {
    lock.unlock();
    std::this_thread::sleep_for(delay);
    return true;
  }
  return !wake_.wait_for(lock, delay, [this] { return stop_; });
}

void OtlpExporter::run() {
  name_this_thread("otlp-export");
  auto next_export = Clock::now() + settings_.export_interval;
  while (true) {
    const bool running = wait(std::min(kPoll, settings_.export_interval), true);
    if (!running) {
      break;
    }
    const auto now = Clock::now();
    if (now >= next_export || buffer_.pending() >= settings_.batch_size) {
      export_pending(Clock::time_point::max(), false);
      next_export = Clock::now() + settings_.export_interval;
    }
  }
  // Shutdown: what workers queued before they stopped, within one export timeout in all.
  export_pending(Clock::now() + settings_.export_timeout, true);
  poster_.close();
}

void OtlpExporter::export_pending(Clock::time_point deadline, bool final) {
  const observability::ResourceInfo resource{settings_.service_name, kVersion, instance_id_};
  while (Clock::now() < deadline) {
    batch_.clear();
    if (buffer_.take(batch_, settings_.batch_size) == 0) {
      return;
    }
    const std::string body = observability::export_request(resource, batch_);
    if (send_batch(body, deadline, final)) {
      exported_.fetch_add(batch_.size(), std::memory_order_relaxed);
    } else {
      failed_.fetch_add(batch_.size(), std::memory_order_relaxed);
    }
    if (!final) {
      std::lock_guard lock(mu_);
      if (stop_) {
        return;  // the final pass takes over, under its own deadline
      }
    }
  }
}

bool OtlpExporter::send_batch(const std::string& body, Clock::time_point deadline, bool final) {
  thread_local std::mt19937 jitter{std::random_device{}()};
  milliseconds backoff = kFirstBackoff;
  for (int attempt = 0; attempt <= kMaxRetries; ++attempt) {
    const auto attempt_deadline = std::min(deadline, Clock::now() + settings_.export_timeout);
    const PostAnswer answer = poster_.post(body, attempt_deadline);
    if (answer.status >= 200 && answer.status < 300) {
      if (failing_) {
        failing_ = false;
        spdlog::info("trace export to {} works again", settings_.endpoint);
      }
      return true;
    }
    failed_requests_.fetch_add(1, std::memory_order_relaxed);
    if (!failing_) {
      // One line when exports start failing and one when they recover, not one per batch.
      failing_ = true;
      spdlog::warn("trace export to {} failed ({}); retrying, and dropping spans while it fails",
                   settings_.endpoint,
                   answer.status != 0 ? "HTTP " + std::to_string(answer.status) : answer.failure);
    }
    if (!retryable(answer) || attempt == kMaxRetries) {
      return false;
    }
    milliseconds delay{
        std::uniform_int_distribution<std::int64_t>(backoff.count() / 2, backoff.count())(jitter)};
    if (answer.retry_after) {
      delay = std::min<milliseconds>(*answer.retry_after, kMaxRetryAfter);
    }
    backoff *= 2;
    if (Clock::now() + delay >= deadline) {
      return false;
    }
    if (!wait(delay, !final)) {
      // Stopping: the remaining retries get the shutdown's bound, not an unbounded one.
      final = true;
      deadline = std::min(deadline, Clock::now() + settings_.export_timeout);
    }
  }
  return false;
}

}  // namespace sluice::http
