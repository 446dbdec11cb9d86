#pragma once

// Shared Asio/Beast vocabulary for http/, admin/ and server/. Only these folders (and the mock
// upstream tool) include Beast: its templates dominate compile time.

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>

namespace sluice::http {

namespace net = boost::asio;
namespace beast = boost::beast;
using tcp = net::ip::tcp;

// Completion token for the data plane: `auto [ec, n] = co_await op(..., use_nothrow);`.
// Boost 1.81 has no default token and no bare `as_tuple`; this is the portable spelling.
inline constexpr auto use_nothrow = net::as_tuple(net::use_awaitable);

template <class T = void>
using Awaitable = net::awaitable<T>;

}  // namespace sluice::http
