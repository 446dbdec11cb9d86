#pragma once

#include <chrono>
#include <memory>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include "providers/exchange.h"
#include "providers/mock/mock_provider.h"

namespace sluice::providers {

// The in-process "response" of the mock adapter: a complete JSON body, or SSE events handed out
// one per read, `interval` apart (the pause is a real timer on the worker's executor, so a paced
// mock stream behaves like a slow provider). abort() ends a pending pause at once.
class MockExchange final : public Exchange {
 public:
  MockExchange(boost::asio::any_io_executor executor, MockReply reply, bool stream,
               std::chrono::milliseconds interval);

  int status() const override { return 200; }
  std::string_view header(std::string_view name) const override;
  void for_each_header(FunctionRef<void(std::string_view, std::string_view)> visit) const override;
  const ExchangeTimings& timings() const override { return timings_; }
  Awaitable<Result<std::size_t>> read_some(std::string& out) override;
  Awaitable<Result<std::string>> read_all(std::size_t limit) override;
  void abort() override;

 private:
  std::string_view content_type() const {
    return stream_ ? "text/event-stream" : "application/json";
  }

  boost::asio::steady_timer pace_;
  MockReply reply_;
  bool stream_;
  std::chrono::milliseconds interval_;
  std::size_t next_ = 0;
  bool body_sent_ = false;
  bool aborted_ = false;
  ExchangeTimings timings_;
};

}  // namespace sluice::providers
