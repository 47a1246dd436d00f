// Transport-neutral HTTP request and response values. Handlers see only these,
// so the Beast types stay inside the server and client implementations.
#ifndef GPUSCHED_API_HTTP_MESSAGE_H_
#define GPUSCHED_API_HTTP_MESSAGE_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpusched::http {

struct Request {
  std::string method;
  std::string target;  // Path without the query string.
  std::string query;   // Text after '?', without the '?'.
  std::string body;
  std::string content_type;
  std::string remote;  // Peer "address:port", for logs.
  // Only from a server with ServerOptions::keep_headers: every header field
  // as received (names lower-cased, repeated fields kept apart).
  std::vector<std::pair<std::string, std::string>> headers;
  // Only from a server with ServerOptions::ask_client_certificate: the
  // client's certificates as DER, its own first, NOT verified (the handler
  // checks them against a CA that may change while the listener serves).
  // Null when the client sent none. Shared by a connection's requests.
  std::shared_ptr<const std::vector<std::string>> peer_certificates;
};

// The values of the header `lowercase_name` in `request.headers`, in order.
std::vector<std::string_view> HeaderValues(const Request& request,
                                           std::string_view lowercase_name);

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // Extra headers; Content-Type and Content-Length are set by the transport.
  std::vector<std::pair<std::string, std::string>> headers;
};

// Every server response carries the server time of its exchange in
// microseconds with one decimal ("41.7"): from the request fully read to the
// response built, i.e. routing and handler, without socket I/O.
inline constexpr char kServerTimeHeader[] = "X-Gpusched-Server-Micros";
// The CPU time the serving thread spent on the same span, in the same
// format: unlike the wall time it does not grow when the machine is busy and
// the thread waits for a core.
inline constexpr char kServerCpuHeader[] = "X-Gpusched-Server-Cpu-Micros";

// Called on a server I/O thread; must be thread-safe. May throw: the server
// turns an exception into a 500 response.
using Handler = std::function<Response(const Request&)>;

// A JSON error body: {"error":"<escaped message>","code":<status>}.
Response JsonError(int status, std::string_view message);

// Escapes `text` for use inside a JSON string literal (no quotes added).
std::string JsonEscape(std::string_view text);

}  // namespace gpusched::http

#endif  // GPUSCHED_API_HTTP_MESSAGE_H_
