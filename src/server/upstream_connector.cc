#include "server/upstream_connector.h"

#include "http/upstream_call.h"
#include "pipeline/snapshot.h"
#include "server/worker.h"

namespace sluice::server {

boost::asio::awaitable<Result<std::unique_ptr<providers::Exchange>>> WorkerConnector::open(
    const pipeline::UpstreamRequest& request, providers::Cancellation& cancel) {
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

}  // namespace sluice::server
