#include "tests/http/raw_socket.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace gpusched::http::testing {
namespace {

using Clock = std::chrono::steady_clock;

std::chrono::milliseconds Remaining(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - Clock::now());
  return left.count() > 0 ? left : std::chrono::milliseconds(0);
}

}  // namespace

RawSocket::RawSocket(uint16_t port) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd_ < 0) return;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) !=
      0) {
    ::close(fd_);
    fd_ = -1;
  }
}

RawSocket::~RawSocket() {
  if (fd_ >= 0) ::close(fd_);
}

bool RawSocket::Send(std::string_view data) {
  while (!data.empty()) {
    ssize_t sent = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    if (sent <= 0) return false;
    data.remove_prefix(static_cast<size_t>(sent));
  }
  return true;
}

long RawSocket::ReadSome(std::chrono::milliseconds timeout, std::string* out) {
  pollfd poll_fd{.fd = fd_, .events = POLLIN, .revents = 0};
  int ready = ::poll(&poll_fd, 1, static_cast<int>(timeout.count()));
  if (ready == 0) return -1;
  if (ready < 0) return -2;
  char buffer[16384];
  ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
  if (n < 0) return -2;
  out->append(buffer, static_cast<size_t>(n));
  return n;
}

std::string RawSocket::ReadUntilClose(std::chrono::milliseconds timeout,
                                      bool* closed) {
  std::string out = std::move(pending_);
  pending_.clear();
  auto deadline = Clock::now() + timeout;
  *closed = false;
  for (;;) {
    long n = ReadSome(Remaining(deadline), &out);
    if (n == -1) return out;
    if (n <= 0) {
      *closed = true;
      return out;
    }
  }
}

std::string RawSocket::ReadResponse(std::chrono::milliseconds timeout) {
  std::string data = std::move(pending_);
  pending_.clear();
  auto deadline = Clock::now() + timeout;
  for (;;) {
    size_t header_end = data.find("\r\n\r\n");
    if (header_end != std::string::npos) {
      size_t length = 0;
      size_t at = data.find("Content-Length: ");
      if (at != std::string::npos && at < header_end) {
        length = std::strtoul(data.c_str() + at + 16, nullptr, 10);
      }
      size_t total = header_end + 4 + length;
      if (data.size() >= total) {
        pending_ = data.substr(total);
        return data.substr(0, total);
      }
    }
    if (ReadSome(Remaining(deadline), &data) <= 0) return "";
  }
}

}  // namespace gpusched::http::testing
