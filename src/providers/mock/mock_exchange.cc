#include "providers/mock/mock_exchange.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "providers/adapter.h"

namespace sluice::providers {

MockExchange::MockExchange(boost::asio::any_io_executor executor, MockReply reply, bool stream,
                           std::chrono::milliseconds interval)
    : pace_(std::move(executor)), reply_(std::move(reply)), stream_(stream), interval_(interval) {}

std::string_view MockExchange::header(std::string_view name) const {
  return iequals(name, "content-type") ? content_type() : std::string_view();
}

void MockExchange::for_each_header(
    FunctionRef<void(std::string_view, std::string_view)> visit) const {
  visit("content-type", content_type());
}

Awaitable<Result<std::size_t>> MockExchange::read_some(std::string& out) {
  if (aborted_) {
    co_return Error(ErrorKind::kClientGone, "client disconnected");
  }
  if (!stream_) {
    if (body_sent_) {
      co_return std::size_t{0};
    }
    body_sent_ = true;
    out.append(reply_.body);
    co_return reply_.body.size();
  }
  if (next_ >= reply_.events.size()) {
    co_return std::size_t{0};
  }
  if (interval_.count() > 0 && next_ > 0) {
    pace_.expires_after(interval_);
    co_await pace_.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    if (aborted_) {
      co_return Error(ErrorKind::kClientGone, "client disconnected");
    }
  }
  const std::string& event = reply_.events[next_++];
  out.append(event);
  co_return event.size();
}

Awaitable<Result<std::string>> MockExchange::read_all(std::size_t limit) {
  std::string body;
  for (;;) {
    auto n = co_await read_some(body);
    if (!n) {
      co_return std::move(n).error();
    }
    if (body.size() > limit) {
      co_return Error(ErrorKind::kUpstreamProtocol, "mock response exceeds the size limit")
          .with_code("upstream_response_too_large");
    }
    if (*n == 0) {
      co_return body;
    }
  }
}

void MockExchange::abort() {
  aborted_ = true;
  pace_.cancel();
}

}  // namespace sluice::providers
