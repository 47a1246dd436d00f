// A bare POSIX TCP client for tests that must send what a well-behaved HTTP
// client never would: garbage, half requests, trickles.
#ifndef GPUSCHED_TESTS_HTTP_RAW_SOCKET_H_
#define GPUSCHED_TESTS_HTTP_RAW_SOCKET_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace gpusched::http::testing {

class RawSocket {
 public:
  // Connects to 127.0.0.1:port; ok() tells whether it worked.
  explicit RawSocket(uint16_t port);
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;
  ~RawSocket();

  bool ok() const { return fd_ >= 0; }
  bool Send(std::string_view data);

  // Reads until the peer closes the connection or `timeout` passes. Sets
  // `*closed` to whether the peer closed (EOF or reset) in time.
  std::string ReadUntilClose(std::chrono::milliseconds timeout, bool* closed);

  // Reads one HTTP response with a Content-Length body; empty on timeout or
  // close before it was complete.
  std::string ReadResponse(std::chrono::milliseconds timeout);

 private:
  // Waits up to `timeout` for data; returns bytes read, 0 on EOF, -1 on
  // timeout, -2 on error.
  long ReadSome(std::chrono::milliseconds timeout, std::string* out);

  int fd_ = -1;
  std::string pending_;  // Bytes read past the last response.
};

}  // namespace gpusched::http::testing

#endif  // GPUSCHED_TESTS_HTTP_RAW_SOCKET_H_
