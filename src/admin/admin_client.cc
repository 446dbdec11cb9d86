#include "admin/admin_client.h"

#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include "core/version.h"
#include "http/net.h"

namespace sluice::admin {

namespace {

namespace bhttp = boost::beast::http;
using http::tcp;
using http::beast::tcp_stream;

constexpr std::size_t kMaxAnswer = 16 * 1024 * 1024;

struct Url {
  std::string host;
  std::string port = "80";
  std::string prefix;  // path prefix without a trailing '/'
};

Result<Url> parse_url(std::string_view url) {
  constexpr std::string_view kScheme = "http://";
  if (url.substr(0, kScheme.size()) != kScheme) {
    return Error(ErrorKind::kBadRequest,
                 "the admin URL must start with http:// (the admin listener speaks plain HTTP)");
  }
  url.remove_prefix(kScheme.size());
  const std::size_t slash = url.find('/');
  std::string_view authority = url.substr(0, slash);
  Url out;
  if (slash != std::string_view::npos) {
    out.prefix = std::string(url.substr(slash));
    while (!out.prefix.empty() && out.prefix.back() == '/') {
      out.prefix.pop_back();
    }
  }
  const std::size_t colon = authority.rfind(':');
  if (colon != std::string_view::npos && authority.find(']', colon) == std::string_view::npos) {
    out.port = std::string(authority.substr(colon + 1));
    authority = authority.substr(0, colon);
  }
  if (authority.size() > 2 && authority.front() == '[' && authority.back() == ']') {
    authority = authority.substr(1, authority.size() - 2);
  }
  if (authority.empty() || out.port.empty()) {
    return Error(ErrorKind::kBadRequest, "the admin URL has no host or port");
  }
  out.host = std::string(authority);
  return out;
}

}  // namespace

Result<ClientResponse> admin_request(
    std::string_view base_url, std::string_view method, std::string_view target,
    std::string_view body, const std::vector<std::pair<std::string, std::string>>& headers,
    std::chrono::milliseconds timeout) {
  auto url = parse_url(base_url);
  if (!url) {
    return url.error();
  }
  bhttp::request<bhttp::string_body> req;
  req.method_string(boost::beast::string_view(method.data(), method.size()));
  req.target(url->prefix + std::string(target));
  req.version(11);
  req.set(bhttp::field::host, url->host);
  req.set(bhttp::field::user_agent, kUserAgent);
  req.set(bhttp::field::connection, "close");
  for (const auto& [name, value] : headers) {
    req.set(name, value);
  }
  if (!body.empty()) {
    req.set(bhttp::field::content_type, "application/json");
    req.body() = std::string(body);
  }
  req.prepare_payload();

  // Asynchronous operations on a private io_context: tcp_stream's deadline bounds only those,
  // so a listener that accepts and never answers cannot hang the CLI.
  http::net::io_context ioc{1};
  boost::system::error_code failed;
  ClientResponse answer;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto exchange = [&]() -> http::Awaitable<void> {
    tcp::resolver resolver(ioc);
    auto [rec, endpoints] =
        co_await resolver.async_resolve(url->host, url->port, http::use_nothrow);
    if (rec) {
      failed = rec;
      co_return;
    }
    tcp_stream stream(ioc);
    stream.expires_at(deadline);
    auto [cec, ep] = co_await stream.async_connect(endpoints, http::use_nothrow);
    if (cec) {
      failed = cec;
      co_return;
    }
    auto [wec, written] = co_await bhttp::async_write(stream, req, http::use_nothrow);
    if (wec) {
      failed = wec;
      co_return;
    }
    boost::beast::flat_buffer buffer;
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(kMaxAnswer);
    auto [rdec, read] = co_await bhttp::async_read(stream, buffer, parser, http::use_nothrow);
    if (rdec) {
      failed = rdec;
      co_return;
    }
    answer.status = static_cast<int>(parser.get().result_int());
    answer.body = std::move(parser.get().body());
  };
  http::net::co_spawn(ioc, exchange(), http::net::detached);
  ioc.run();
  if (failed || answer.status == 0) {
    return Error(ErrorKind::kUnavailable,
                 "admin listener " + url->host + ":" + url->port + ": " +
                     (failed ? failed.message() : std::string("no answer")));
  }
  return answer;
}

}  // namespace sluice::admin
