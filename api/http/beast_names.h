// The Boost.Asio and Beast names that the HTTP client's connection and the
// server's session are written in, in one place so both spell a request and
// a TLS stream the same way.
#ifndef GPUSCHED_API_HTTP_BEAST_NAMES_H_
#define GPUSCHED_API_HTTP_BEAST_NAMES_H_

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <boost/system/error_code.hpp>

namespace gpusched::http::internal {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;
using BeastRequest = bhttp::request<bhttp::string_body>;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;
// Completion token of every coroutine step: the error comes back as a value.
inline constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);

}  // namespace gpusched::http::internal

#endif  // GPUSCHED_API_HTTP_BEAST_NAMES_H_
