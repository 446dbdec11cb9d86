#include "http/json_post.h"

#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/beast/http/read.hpp>
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

namespace {

constexpr std::size_t kMaxAnswerBody = 64 * 1024;

struct Exchange {
  providers::BaseUrl url;
  const std::string& body;
  Clock::time_point deadline;
  net::io_context& ioc;
  int status = 0;
  boost::system::error_code error;

  template <class Stream>
  Awaitable<void> write_read(Stream& stream) {
    bhttp::request<bhttp::string_body> req{bhttp::verb::post,
                                           url.path_prefix.empty() ? "/" : url.path_prefix, 11};
    req.set(bhttp::field::host, url.host_header);
    req.set(bhttp::field::user_agent, kUserAgent);
    req.set(bhttp::field::content_type, "application/json");
    req.set(bhttp::field::connection, "close");
    req.body() = body;
    req.prepare_payload();
    auto [wec, written] = co_await bhttp::async_write(stream, req, use_nothrow);
    if (wec) {
      error = wec;
      co_return;
    }
    beast::flat_buffer buffer;
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(kMaxAnswerBody);
    auto [rec, read] = co_await bhttp::async_read(stream, buffer, parser, use_nothrow);
    if (rec) {
      error = rec;
      co_return;
    }
    status = static_cast<int>(parser.get().result_int());
  }

  Awaitable<void> run() {
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
    if (!url.tls) {
      co_await write_read(stream);
      co_return;
    }
    auto ssl = providers::make_client_tls_context(config::TlsSettings{});
    beast::ssl_stream<beast::tcp_stream> secure(std::move(stream), *ssl);
    boost::system::error_code addr_ec;
    net::ip::make_address(url.host, addr_ec);
    if (addr_ec && !SSL_set_tlsext_host_name(secure.native_handle(), url.host.c_str())) {
      error = net::error::invalid_argument;
      co_return;
    }
    secure.set_verify_callback(net::ssl::host_name_verification(url.host));
    auto [hec] = co_await secure.async_handshake(net::ssl::stream_base::client, use_nothrow);
    if (hec) {
      error = hec;
      co_return;
    }
    co_await write_read(secure);
  }
};

}  // namespace

Result<int> post_json(const std::string& url, const std::string& body,
                      std::chrono::milliseconds timeout) {
  auto parsed = providers::parse_base_url(url);
  if (!parsed) {
    return std::move(parsed).error();
  }
  net::io_context ioc{1};
  Exchange exchange{std::move(*parsed), body, Clock::now() + timeout, ioc, 0, {}};
  net::co_spawn(ioc, exchange.run(), net::detached);
  ioc.run();
  if (exchange.status != 0) {
    return exchange.status;
  }
  if (exchange.error == beast::error::timeout || exchange.error == net::error::operation_aborted) {
    return Error(ErrorKind::kUpstreamTimeout,
                 "no answer within " + std::to_string(timeout.count()) + " ms");
  }
  return Error(ErrorKind::kUpstreamUnreachable, exchange.error.message());
}

}  // namespace sluice::http
