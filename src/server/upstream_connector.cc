#include "server/upstream_connector.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "http/upstream_call.h"
#include "pipeline/snapshot.h"
#include "server/worker.h"

namespace sluice::server {

boost::asio::awaitable<Result<std::unique_ptr<providers::Exchange>>> WorkerConnector::open(
    const pipeline::FramedRequest& request, providers::Cancellation& cancel) {
  const providers::ProviderAdapter& adapter = *request.provider->adapter;
  const providers::Endpoint* endpoint = adapter.endpoint();
  if (endpoint == nullptr) {
    providers::InProcessRequest in;
    in.operation = request.operation;
    in.stream = request.stream;
    in.body = request.body;
    co_return co_await adapter.call_in_process(worker_.io_context().get_executor(), in, cancel);
  }
  auto pool = worker_.pool_for(adapter);
  auto call = co_await http::UpstreamCall::start(
      std::move(pool), http::UpstreamRequestBytes{request.head, request.body}, request.timeouts,
      cancel);
  if (!call) {
    co_return std::move(call).error();
  }
  co_return std::unique_ptr<providers::Exchange>(std::move(*call));
}

boost::asio::awaitable<bool> WorkerSleeper::sleep(std::chrono::milliseconds duration,
                                                  providers::Cancellation& cancel) {
  if (cancel.cancelled()) {
    co_return false;
  }
  boost::asio::steady_timer timer(worker_.io_context(), duration);
  cancel.on_cancel([&timer] { timer.cancel(); });
  auto [ec] = co_await timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
  cancel.clear();
  co_return !ec && !cancel.cancelled();
}

}  // namespace sluice::server
