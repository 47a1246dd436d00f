#include "bench/loadgen/http_load.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <numeric>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "api/http/client.h"

namespace gpusched::bench {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);

// Case-insensitive search for a header's value in the header block.
std::string_view HeaderValue(std::string_view head, std::string_view name) {
  size_t pos = 0;
  while ((pos = head.find("\r\n", pos)) != std::string_view::npos) {
    pos += 2;
    if (head.size() - pos < name.size() + 1) return {};
    bool match = true;
    for (size_t i = 0; i < name.size() && match; ++i) {
      match = std::tolower(static_cast<unsigned char>(head[pos + i])) ==
              std::tolower(static_cast<unsigned char>(name[i]));
    }
    if (!match || head[pos + name.size()] != ':') continue;
    size_t start = pos + name.size() + 1;
    while (start < head.size() && head[start] == ' ') ++start;
    size_t end = head.find("\r\n", start);
    return head.substr(start, end - start);
  }
  return {};
}

struct ParsedHead {
  int status = 0;
  size_t content_length = 0;
  double server_us = -1;
  double server_cpu_us = -1;
};

ParsedHead ParseHead(std::string_view head) {
  ParsedHead parsed;
  // "HTTP/1.1 200 OK"
  if (head.size() > 12) {
    std::from_chars(head.data() + 9, head.data() + 12, parsed.status);
  }
  std::string_view length = HeaderValue(head, "content-length");
  std::from_chars(length.data(), length.data() + length.size(),
                  parsed.content_length);
  std::string_view server = HeaderValue(head, "x-gpusched-server-micros");
  if (!server.empty())
    parsed.server_us = std::strtod(std::string(server).c_str(), nullptr);
  std::string_view cpu = HeaderValue(head, "x-gpusched-server-cpu-micros");
  if (!cpu.empty()) {
    parsed.server_cpu_us = std::strtod(std::string(cpu).c_str(), nullptr);
  }
  return parsed;
}

struct Shared {
  const LoadOptions& options;
  Script& script;
  Clock::time_point record_from;
  Clock::time_point stop_at;
  Clock::time_point next_slot;  // pacing under max_rate
  std::chrono::nanoseconds slot{0};
  uint64_t* completed = nullptr;
};

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// A connection's receive buffer: grows to the largest response once and is
// reused, so that reading costs no allocation or zero-filling per request
// (the client shares the machine's two cores with the server).
class ReceiveBuffer {
 public:
  std::string_view data() const { return {bytes_.data(), used_}; }
  // Room for at least `want` more bytes after data().
  asio::mutable_buffer Space(size_t want) {
    if (bytes_.size() - used_ < want) bytes_.resize(used_ + want);
    return asio::buffer(bytes_.data() + used_, bytes_.size() - used_);
  }
  void Commit(size_t n) { used_ += n; }
  // Drops the first `n` bytes (a whole response), keeping what follows.
  void Consume(size_t n) {
    std::memmove(bytes_.data(), bytes_.data() + n, used_ - n);
    used_ -= n;
  }

 private:
  std::vector<char> bytes_ = std::vector<char>(64 * 1024);
  size_t used_ = 0;
};

// Reads one response into `in`: its head, parsed, and its size with the
// body (status 0 when the connection failed).
asio::awaitable<std::pair<ParsedHead, size_t>> ReadResponse(tcp::socket& socket,
                                                            ReceiveBuffer& in,
                                                            size_t& head_size) {
  constexpr std::string_view kEnd = "\r\n\r\n";
  size_t end = std::string_view::npos;
  while ((end = in.data().find(kEnd)) == std::string_view::npos) {
    auto [ec, n] = co_await socket.async_read_some(in.Space(16 * 1024), kAwait);
    if (ec) co_return std::pair{ParsedHead{}, size_t{0}};
    in.Commit(n);
  }
  head_size = end + kEnd.size();
  ParsedHead head = ParseHead(in.data().substr(0, head_size));
  const size_t total = head_size + head.content_length;
  while (in.data().size() < total) {
    auto [ec, n] = co_await socket.async_read_some(
        in.Space(total - in.data().size()), kAwait);
    if (ec) co_return std::pair{ParsedHead{}, size_t{0}};
    in.Commit(n);
  }
  co_return std::pair{head, total};
}

void Record(VerbStats& verb, const ParsedHead& head, double client_us,
            size_t sent, size_t received) {
  if (head.status != 200) ++verb.errors;
  verb.client_us.push_back(client_us);
  if (head.server_us >= 0) verb.server_us.push_back(head.server_us);
  if (head.server_cpu_us >= 0) verb.server_cpu_us.push_back(head.server_cpu_us);
  verb.bytes_sent += sent;
  verb.bytes_received += received;
}

// One keep-alive connection's loop.
asio::awaitable<void> Connection(Shared& shared, int index, tcp::socket socket,
                                 std::map<std::string, VerbStats>& stats) {
  ReceiveBuffer in;
  Reply last;
  size_t last_size = 0;  // the previous response, consumed before the next
  for (;;) {
    WireRequest* request = nullptr;
    if (Clock::now() >= shared.stop_at ||
        !shared.script.Next(index, last, &request)) {
      break;
    }
    in.Consume(last_size);
    last_size = 0;
    if (shared.slot.count() > 0) {
      Clock::time_point when = std::max(shared.next_slot, Clock::now());
      shared.next_slot = when + shared.slot;
      if (when > Clock::now()) {
        asio::steady_timer timer(socket.get_executor(), when);
        co_await timer.async_wait(kAwait);
      }
    }
    const Clock::time_point start = Clock::now();
    auto [write_ec, written] = co_await asio::async_write(
        socket, asio::buffer(request->bytes), kAwait);
    ParsedHead head;
    size_t total = 0;
    size_t head_size = 0;
    if (!write_ec) {
      std::tie(head, total) = co_await ReadResponse(socket, in, head_size);
    }
    const Clock::time_point end = Clock::now();
    const bool recorded = start >= shared.record_from && end <= shared.stop_at;
    if (head.status == 0) {
      if (recorded) ++stats[request->verb].errors;
      co_return;  // the connection is gone
    }
    ++*shared.completed;
    // The body stays in `in` until the next request is chosen.
    last = Reply{head.status, in.data().substr(head_size, total - head_size)};
    last_size = total;
    if (recorded) {
      Record(stats[request->verb], head,
             std::chrono::duration<double, std::micro>(end - start).count(),
             request->bytes.size(), total);
    }
  }
  boost::system::error_code ignored;
  socket.shutdown(tcp::socket::shutdown_both, ignored);
}

}  // namespace

WireRequest MakePost(std::string verb, std::string_view target,
                     std::string_view body) {
  WireRequest request{std::move(verb), {}};
  request.bytes = absl::StrCat(
      "POST ", absl::string_view(target.data(), target.size()),
      " HTTP/1.1\r\nHost: gpusched\r\nContent-Type: application/json\r\n"
      "Content-Length: ",
      body.size(), "\r\n\r\n");
  request.bytes.append(body);
  return request;
}

Percentiles PercentilesOf(std::vector<double> samples) {
  Percentiles p;
  if (samples.empty()) return p;
  std::sort(samples.begin(), samples.end());
  auto at = [&](double q) {
    return samples[static_cast<size_t>(q * (samples.size() - 1))];
  };
  p.p50 = at(0.50);
  p.p99 = at(0.99);
  p.p999 = at(0.999);
  p.max = samples.back();
  p.mean =
      std::accumulate(samples.begin(), samples.end(), 0.0) / samples.size();
  return p;
}

uint64_t LoadResult::requests() const {
  uint64_t n = 0;
  for (const auto& [name, verb] : verbs) n += verb.client_us.size();
  return n;
}

absl::StatusOr<LoadResult> RunLoad(const LoadOptions& options, Script& script) {
  asio::io_context io(1);
  tcp::endpoint endpoint(asio::ip::make_address(options.host), options.port);
  std::vector<std::map<std::string, VerbStats>> stats(options.connections);
  std::vector<tcp::socket> sockets;
  for (int i = 0; i < options.connections; ++i) {
    tcp::socket socket(io);
    boost::system::error_code ec;
    socket.connect(endpoint, ec);
    if (ec) {
      return absl::UnavailableError(absl::StrCat(
          "connect ", options.host, ":", options.port, ": ", ec.message()));
    }
    socket.set_option(tcp::no_delay(true));
    sockets.push_back(std::move(socket));
  }
  const Clock::time_point now = Clock::now();
  Shared shared{.options = options,
                .script = script,
                .record_from = now + options.warmup,
                .stop_at = now + options.warmup + options.duration,
                .next_slot = now};
  if (options.max_rate > 0) {
    shared.slot =
        std::chrono::nanoseconds(static_cast<int64_t>(1e9 / options.max_rate));
  }
  uint64_t completed = 0;
  shared.completed = &completed;
  // Per thread on Linux: only this (the client) thread is reniced.
  const int tid = static_cast<int>(syscall(SYS_gettid));
  const int nice_before = getpriority(PRIO_PROCESS, tid);
  if (options.client_nice != 0) {
    setpriority(PRIO_PROCESS, tid, options.client_nice);
  }
  const double cpu_start = CpuSeconds();
  for (int i = 0; i < options.connections; ++i) {
    asio::co_spawn(io, Connection(shared, i, std::move(sockets[i]), stats[i]),
                   asio::detached);
  }
  io.run();
  // Raising it back needs privileges; where that fails the thread stays
  // niced, which only ever affects later client runs.
  if (options.client_nice != 0) setpriority(PRIO_PROCESS, tid, nice_before);
  LoadResult result;
  result.cpu_seconds = CpuSeconds() - cpu_start;
  result.all_requests = completed;
  result.seconds = std::chrono::duration<double>(options.duration).count();
  for (auto& per_connection : stats) {
    for (auto& [name, verb] : per_connection) {
      VerbStats& into = result.verbs[name];
      into.client_us.insert(into.client_us.end(), verb.client_us.begin(),
                            verb.client_us.end());
      into.server_us.insert(into.server_us.end(), verb.server_us.begin(),
                            verb.server_us.end());
      into.server_cpu_us.insert(into.server_cpu_us.end(),
                                verb.server_cpu_us.begin(),
                                verb.server_cpu_us.end());
      into.errors += verb.errors;
      into.bytes_sent += verb.bytes_sent;
      into.bytes_received += verb.bytes_received;
    }
  }
  return result;
}

// Through the product's client: only the load loop above has its own wire
// code, to keep the client's CPU cost out of the server's measurements.
absl::StatusOr<int> HttpStatusOf(const std::string& host, uint16_t port,
                                 std::string_view method,
                                 std::string_view target) {
  auto client = http::Client::Connect(host, port);
  if (!client.ok()) return client.status();
  auto response = (*client)->Send(method, target, "");
  if (!response.ok()) return response.status();
  return response->status;
}

int64_t ResidentKib(int pid) {
  std::ifstream in(pid == 0 ? std::string("/proc/self/status")
                            : absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atoll(line.c_str() + 6);
  }
  return -1;
}

}  // namespace gpusched::bench
