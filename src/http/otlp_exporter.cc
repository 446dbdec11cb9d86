#include "http/otlp_exporter.h"

#include <charconv>
#include <random>
#include <stdexcept>

#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/span_body.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include "core/thread_name.h"
#include "core/version.h"
#include "http/net.h"
#include "http/resolve.h"
#include "observability/otlp_json.h"
#include "providers/base_url.h"
#include "providers/endpoint.h"
#include "spdlog/spdlog.h"

namespace sluice::http {

namespace bhttp = beast::http;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

constexpr std::size_t kMaxAnswerBody = 64 * 1024;
constexpr milliseconds kFirstBackoff{200};
// How often the thread looks at the queues for a full batch between export intervals. Workers
// never signal (that would be a syscall per request); the exporter polls.
constexpr milliseconds kPoll{25};

// What one POST came to.
struct Answer {
  int status = 0;  // 0: no answer (transport failure, timeout)
  boost::system::error_code error;
  std::optional<milliseconds> retry_after;
};

bool retryable(const Answer& a) {
  // opentelemetry-proto docs/specification.md, "Retryable Response Codes"; a transport
  // failure ("the server disconnects without returning a response") is retried too.
  return a.status == 0 || a.status == 429 || a.status == 502 || a.status == 503 || a.status == 504;
}

std::optional<milliseconds> read_retry_after(std::string_view value) {
  std::uint32_t seconds = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (ec != std::errc() || end != value.data() + value.size()) {
    return std::nullopt;  // an HTTP date: the exporter's own backoff applies
  }
  return milliseconds(std::min<std::uint64_t>(seconds, 86400) * 1000);
}

}  // namespace

struct OtlpExporter::Transport {
  using TlsStream = beast::ssl_stream<beast::tcp_stream>;

  providers::BaseUrl url;
  std::string target;
  std::shared_ptr<net::ssl::context> ssl;
  std::vector<std::pair<std::string, std::string>> headers;
  net::io_context ioc{1};
  std::unique_ptr<beast::tcp_stream> plain;
  std::unique_ptr<TlsStream> tls;
  beast::flat_buffer buffer;

  bool connected() const { return plain != nullptr || tls != nullptr; }

  void close() {
    boost::system::error_code ignored;
    if (plain) {
      plain->socket().close(ignored);
    }
    if (tls) {
      beast::get_lowest_layer(*tls).socket().close(ignored);
    }
    plain.reset();
    tls.reset();
    buffer.clear();
  }

  // Runs one POST of `body` to completion on this thread.
  Answer post(std::string_view body, Clock::time_point deadline) {
    Answer answer;
    const bool reused = connected();
    net::co_spawn(ioc, exchange(body, deadline, answer), net::detached);
    ioc.restart();
    ioc.run();
    if (reused && answer.status == 0 && Clock::now() < deadline) {
      // A kept-alive connection the collector closed meanwhile: one fresh try, not a retry.
      answer = Answer{};
      net::co_spawn(ioc, exchange(body, deadline, answer), net::detached);
      ioc.restart();
      ioc.run();
    }
    return answer;
  }

  Awaitable<void> connect(Clock::time_point deadline, Answer& answer) {
    auto [rec, results] =
        co_await resolve_with_deadline(ioc.get_executor(), url.host, url.port, deadline);
    if (rec) {
      answer.error = rec;
      co_return;
    }
    beast::tcp_stream stream(ioc);
    stream.expires_at(deadline);
    auto [cec, ep] = co_await stream.async_connect(results, use_nothrow);
    if (cec) {
      answer.error = cec;
      co_return;
    }
    stream.socket().set_option(tcp::no_delay(true));
    if (!url.tls) {
      plain = std::make_unique<beast::tcp_stream>(std::move(stream));
      co_return;
    }
    auto secure = std::make_unique<TlsStream>(std::move(stream), *ssl);
    boost::system::error_code addr_ec;
    net::ip::make_address(url.host, addr_ec);
    if (addr_ec && !SSL_set_tlsext_host_name(secure->native_handle(), url.host.c_str())) {
      answer.error = net::error::invalid_argument;
      co_return;
    }
    secure->set_verify_callback(net::ssl::host_name_verification(url.host));
    auto [hec] = co_await secure->async_handshake(net::ssl::stream_base::client, use_nothrow);
    if (hec) {
      answer.error = hec;
      co_return;
    }
    tls = std::move(secure);
  }

  template <class Stream>
  Awaitable<void> write_read(Stream& stream, std::string_view body, Clock::time_point deadline,
                             Answer& answer) {
    bhttp::request<bhttp::span_body<const char>> req{bhttp::verb::post, target, 11};
    req.set(bhttp::field::host, url.host_header);
    req.set(bhttp::field::user_agent, kUserAgent);
    req.set(bhttp::field::content_type, "application/json");
    for (const auto& [name, value] : headers) {
      req.set(name, value);
    }
    req.body() = {body.data(), body.size()};
    req.prepare_payload();
    beast::get_lowest_layer(stream).expires_at(deadline);
    auto [wec, written] = co_await bhttp::async_write(stream, req, use_nothrow);
    if (wec) {
      answer.error = wec;
      close();
      co_return;
    }
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(kMaxAnswerBody);
    auto [rec, read] = co_await bhttp::async_read(stream, buffer, parser, use_nothrow);
    if (rec) {
      answer.error = rec;
      close();
      co_return;
    }
    const auto& res = parser.get();
    answer.status = static_cast<int>(res.result_int());
    if (auto it = res.find(bhttp::field::retry_after); it != res.end()) {
      answer.retry_after = read_retry_after(it->value());
    }
    if (!res.keep_alive()) {
      close();
    } else {
      beast::get_lowest_layer(stream).expires_never();
    }
  }

  Awaitable<void> exchange(std::string_view body, Clock::time_point deadline, Answer& answer) {
    if (!connected()) {
      co_await connect(deadline, answer);
      if (answer.error) {
        close();
        co_return;
      }
    }
    if (tls) {
      co_await write_read(*tls, body, deadline, answer);
    } else {
      co_await write_read(*plain, body, deadline, answer);
    }
  }
};

OtlpExporter::OtlpExporter(const config::TraceSettings& settings, observability::SpanBuffer& buffer,
                           std::string instance_id)
    : settings_(settings),
      buffer_(buffer),
      instance_id_(std::move(instance_id)),
      transport_(std::make_unique<Transport>()) {
  auto url = providers::parse_base_url(settings_.endpoint);
  if (!url) {
    throw std::runtime_error("traces.endpoint: " + url.error().message());
  }
  transport_->url = std::move(*url);
  transport_->target = transport_->url.path_prefix.empty() ? "/" : transport_->url.path_prefix;
  transport_->headers = settings_.headers;
  if (transport_->url.tls) {
    transport_->ssl = providers::make_client_tls_context(config::TlsSettings{});
  }
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
  transport_->close();
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
    const Answer answer = transport_->post(body, attempt_deadline);
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
      spdlog::warn(
          "trace export to {} failed ({}); retrying, and dropping spans while it fails",
          settings_.endpoint,
          answer.status != 0 ? "HTTP " + std::to_string(answer.status) : answer.error.message());
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
