#include "http/resolve.h"

namespace sluice::http {

Awaitable<std::pair<boost::system::error_code, tcp::resolver::results_type>> resolve_with_deadline(
    const net::any_io_executor& executor, const std::string& host, std::uint16_t port,
    std::chrono::steady_clock::time_point deadline) {
  tcp::resolver resolver(executor);
  net::steady_timer timer(executor);
  timer.expires_at(deadline);
  timer.async_wait([&resolver](boost::system::error_code ec) {
    if (!ec) {
      resolver.cancel();
    }
  });
  auto [ec, results] = co_await resolver.async_resolve(host, std::to_string(port), use_nothrow);
  timer.cancel();
  co_return std::pair{ec, std::move(results)};
}

}  // namespace sluice::http
