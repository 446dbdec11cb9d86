#include "http/json_post.h"

#include <charconv>

#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/span_body.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include "core/version.h"
#include "http/net.h"
#include "http/resolve.h"
#include "providers/base_url.h"
#include "providers/endpoint.h"

namespace sluice::http {

namespace bhttp = beast::http;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

constexpr std::size_t kMaxAnswerBody = 64 * 1024;

std::optional<milliseconds> read_retry_after(std::string_view value) {
  std::uint32_t seconds = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (ec != std::errc() || end != value.data() + value.size()) {
    return std::nullopt;  // an HTTP date: the caller's own backoff applies
  }
  return milliseconds(std::min<std::uint64_t>(seconds, 86400) * 1000);
}

}  // namespace

struct JsonPoster::Connection {
  using TlsStream = beast::ssl_stream<beast::tcp_stream>;

  providers::BaseUrl url;
  std::string target;
  Headers headers;
  // POST, or a GET without a body (a metadata server), or a PUT (EC2's IMDSv2 token).
  bhttp::verb verb = bhttp::verb::post;
  std::shared_ptr<net::ssl::context> ssl;
  net::io_context ioc{1};
  std::unique_ptr<beast::tcp_stream> plain;
  std::unique_ptr<TlsStream> tls;
  beast::flat_buffer buffer;
  boost::system::error_code error;  // of the exchange under way

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

  PostAnswer post(std::string_view body, Clock::time_point deadline) {
    const bool reused = connected();
    PostAnswer answer = run_exchange(body, deadline);
    if (reused && answer.status == 0 && Clock::now() < deadline) {
      answer = run_exchange(body, deadline);  // the server closed the kept-alive connection
    }
    return answer;
  }

  PostAnswer run_exchange(std::string_view body, Clock::time_point deadline) {
    PostAnswer answer;
    error = {};
    net::co_spawn(ioc, exchange(body, deadline, answer), net::detached);
    ioc.restart();
    ioc.run();
    if (answer.status == 0) {
      answer.timed_out = error == beast::error::timeout || error == net::error::operation_aborted;
      answer.failure = error.message();
    }
    return answer;
  }

  Awaitable<void> connect(Clock::time_point deadline) {
    auto [rec, results] =
        co_await resolve_with_deadline(ioc.get_executor(), url.host, url.port, deadline);
    if (rec) {
      error = rec;
      co_return;
    }
    beast::tcp_stream stream(ioc);
    stream.expires_at(deadline);
    auto [cec, ep] = co_await stream.async_connect(results, use_nothrow);
    if (cec) {
      error = cec;
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
      error = net::error::invalid_argument;
      co_return;
    }
    secure->set_verify_callback(net::ssl::host_name_verification(url.host));
    auto [hec] = co_await secure->async_handshake(net::ssl::stream_base::client, use_nothrow);
    if (hec) {
      error = hec;
      co_return;
    }
    tls = std::move(secure);
  }

  template <class Stream>
  Awaitable<void> write_read(Stream& stream, std::string_view body, Clock::time_point deadline,
                             PostAnswer& answer) {
    const bool get = verb == bhttp::verb::get;
    bhttp::request<bhttp::span_body<const char>> req{verb, target, 11};
    req.set(bhttp::field::host, url.host_header);
    req.set(bhttp::field::user_agent, kUserAgent);
    if (!get) {
      req.set(bhttp::field::content_type, "application/json");
    }
    for (const auto& [name, value] : headers) {
      req.set(name, value);
    }
    req.body() = {body.data(), body.size()};
    req.prepare_payload();
    beast::get_lowest_layer(stream).expires_at(deadline);
    auto [wec, written] = co_await bhttp::async_write(stream, req, use_nothrow);
    if (wec) {
      error = wec;
      close();
      co_return;
    }
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(kMaxAnswerBody);
    auto [rec, read] = co_await bhttp::async_read(stream, buffer, parser, use_nothrow);
    if (rec) {
      error = rec;
      close();
      co_return;
    }
    const auto& res = parser.get();
    answer.status = static_cast<int>(res.result_int());
    answer.body = res.body();
    if (auto it = res.find(bhttp::field::retry_after); it != res.end()) {
      answer.retry_after = read_retry_after(it->value());
    }
    if (!res.keep_alive()) {
      close();
    } else {
      beast::get_lowest_layer(stream).expires_never();
    }
  }

  Awaitable<void> exchange(std::string_view body, Clock::time_point deadline, PostAnswer& answer) {
    if (!connected()) {
      co_await connect(deadline);
      if (error) {
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

Result<JsonPoster> JsonPoster::to(std::string_view url, Headers headers) {
  auto parsed = providers::parse_base_url(url);
  if (!parsed) {
    return std::move(parsed).error();
  }
  auto connection = std::make_unique<Connection>();
  connection->url = std::move(*parsed);
  connection->target = connection->url.path_prefix.empty() ? "/" : connection->url.path_prefix;
  connection->headers = std::move(headers);
  if (connection->url.tls) {
    connection->ssl = providers::make_client_tls_context(config::TlsSettings{});
  }
  return JsonPoster(std::move(connection));
}

JsonPoster::JsonPoster(std::unique_ptr<Connection> connection)
    : connection_(std::move(connection)) {}
JsonPoster::JsonPoster(JsonPoster&&) noexcept = default;
JsonPoster& JsonPoster::operator=(JsonPoster&&) noexcept = default;
JsonPoster::~JsonPoster() {
  if (connection_) {
    connection_->close();
  }
}

PostAnswer JsonPoster::post(std::string_view body, Clock::time_point deadline) {
  return connection_->post(body, deadline);
}

void JsonPoster::use_method(providers::FetchRequest::Method method) {
  using Method = providers::FetchRequest::Method;
  connection_->verb = method == Method::kGet   ? bhttp::verb::get
                      : method == Method::kPut ? bhttp::verb::put
                                               : bhttp::verb::post;
}

void JsonPoster::close() {
  if (connection_) {  // not moved from
    connection_->close();
  }
}

Result<int> post_json(const std::string& url, const std::string& body, milliseconds timeout) {
  auto poster = JsonPoster::to(url);
  if (!poster) {
    return std::move(poster).error();
  }
  const PostAnswer answer = poster->post(body, Clock::now() + timeout);
  if (answer.status != 0) {
    return answer.status;
  }
  if (answer.timed_out) {
    return Error(ErrorKind::kUpstreamTimeout,
                 "no answer within " + std::to_string(timeout.count()) + " ms");
  }
  return Error(ErrorKind::kUpstreamUnreachable, answer.failure);
}

providers::FetchAnswer fetch_in_background(const providers::FetchRequest& request,
                                           milliseconds timeout) {
  JsonPoster::Headers headers;
  if (!request.content_type.empty()) {
    headers.emplace_back("Content-Type", request.content_type);
  }
  if (!request.accept.empty()) {
    headers.emplace_back("Accept", request.accept);
  }
  for (const auto& [name, value] : request.headers) {
    headers.emplace_back(name, value);
  }
  auto poster = JsonPoster::to(request.url, std::move(headers));
  if (!poster) {
    return {.status = 0, .body = {}, .failure = poster.error().message()};
  }
  poster->use_method(request.method);
  PostAnswer answer = poster->post(request.body, Clock::now() + timeout);
  return {.status = answer.status,
          .body = std::move(answer.body),
          .failure = answer.timed_out
                         ? "no answer within " + std::to_string(timeout.count()) + " ms"
                         : std::move(answer.failure)};
}

}  // namespace sluice::http
