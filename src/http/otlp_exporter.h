#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "config/config.h"
#include "http/json_post.h"
#include "observability/span_buffer.h"

namespace sluice::http {

// Ships finished spans from a SpanBuffer to an OTLP/HTTP collector as JSON
// (POST traces.endpoint, Content-Type application/json, an ExportTraceServiceRequest per
// batch: observability/otlp_json.h), on its own thread with its own io_context: workers only
// ever push to the buffer.
//
// A batch is sent every traces.export_interval, or sooner once traces.batch_size spans wait.
// Each POST (connect, TLS, write, read) is bounded by traces.export_timeout. 429, 502, 503,
// 504 and transport failures are retried up to kMaxRetries times with exponential backoff
// and jitter (Retry-After in seconds is honoured up to kMaxRetryAfter); any other answer, or
// retries exhausted, drops the batch and counts its spans as failed. While the exporter
// waits, spans keep queueing up to the buffer's capacity and are dropped (counted) beyond.
// The connection is kept alive between batches. https:// endpoints verify the collector's
// certificate against the system store.
class OtlpExporter {
 public:
  static constexpr int kMaxRetries = 3;
  static constexpr std::chrono::seconds kMaxRetryAfter{10};

  // Parses the endpoint and starts the thread. Throws std::runtime_error when the endpoint is
  // not a usable http(s) URL (start-up only). `instance_id` becomes service.instance.id.
  OtlpExporter(const config::TraceSettings& settings, observability::SpanBuffer& buffer,
               std::string instance_id);
  ~OtlpExporter();  // shutdown()
  OtlpExporter(const OtlpExporter&) = delete;
  OtlpExporter& operator=(const OtlpExporter&) = delete;

  // Any thread, once workers have stopped pushing: exports what is queued (bounded by
  // export_timeout in all, retries included), then joins the thread. Idempotent.
  void shutdown();

  // Any thread. Spans the collector accepted, and spans given up on (refused, or retries
  // exhausted); the buffer counts the ones dropped before export.
  std::uint64_t exported_spans() const { return exported_.load(std::memory_order_relaxed); }
  std::uint64_t failed_spans() const { return failed_.load(std::memory_order_relaxed); }
  // Export POSTs that were answered with anything but 2xx or failed in transport (retries
  // included).
  std::uint64_t failed_requests() const { return failed_requests_.load(std::memory_order_relaxed); }

 private:
  void run();
  // Exports queued batches until the buffer is empty or `deadline` passes.
  void export_pending(std::chrono::steady_clock::time_point deadline, bool final);
  // One batch with its retries; true when the collector took it.
  bool send_batch(const std::string& body, std::chrono::steady_clock::time_point deadline,
                  bool final);
  // Waits `delay` (less if stop is asked and `interruptible`); false if stopped meanwhile.
  bool wait(std::chrono::milliseconds delay, bool interruptible);

  config::TraceSettings settings_;
  observability::SpanBuffer& buffer_;
  std::string instance_id_;
  JsonPoster poster_;               // exporter thread only, after construction
  std::vector<std::string> batch_;  // exporter thread only
  bool failing_ = false;            // exporter thread only: the last export failed
  std::atomic<std::uint64_t> exported_{0};
  std::atomic<std::uint64_t> failed_{0};
  std::atomic<std::uint64_t> failed_requests_{0};
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace sluice::http
