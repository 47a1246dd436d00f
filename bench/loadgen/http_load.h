// A closed-loop HTTP/1.1 load generator: N keep-alive connections, each
// sending its next request as soon as the previous response arrived, driven
// by Asio coroutines on one thread so that the client costs as little CPU as
// possible on a machine it shares with the server. Records per verb the
// client round-trip time and the server time the server reported in its
// X-Gpusched-Server-Micros header.
#ifndef GPUSCHED_BENCH_LOADGEN_HTTP_LOAD_H_
#define GPUSCHED_BENCH_LOADGEN_HTTP_LOAD_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace gpusched::bench {

// One request a connection sends, prebuilt to the bytes on the wire.
struct WireRequest {
  std::string verb;  // label for the statistics, e.g. "filter"
  std::string bytes;
};

// "POST <target> HTTP/1.1" with Host, Content-Type and Content-Length.
WireRequest MakePost(std::string verb, std::string_view target,
                     std::string_view body);

struct Reply {
  int status = 0;
  std::string_view body;  // valid during the callback only
};

// What a connection does: Next() returns the request to send (its index
// and the previous reply let scripts chain filter -> bind); returning false
// ends the connection early.
class Script {
 public:
  virtual ~Script() = default;
  // `connection` is 0..connections-1; `last` is the reply to the previous
  // request of this connection (status 0 before the first).
  virtual bool Next(int connection, const Reply& last, WireRequest** out) = 0;
};

struct LoadOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  int connections = 1;
  std::chrono::milliseconds warmup{1000};    // not recorded
  std::chrono::milliseconds duration{5000};  // recorded, after warmup
  // Cap on requests per second over all connections; 0: as fast as possible.
  double max_rate = 0;
  // Nice value of the client thread while it runs (0: unchanged). An
  // in-process client shares the cores with the server; a positive value
  // makes the scheduler run a woken server thread before it, as the server
  // would run beside a kube-scheduler on other cores.
  int client_nice = 0;
};

struct Percentiles {
  double p50 = 0, p99 = 0, p999 = 0, max = 0, mean = 0;
};
Percentiles PercentilesOf(std::vector<double> samples);

struct VerbStats {
  std::vector<double> client_us;      // round trip seen by the client
  std::vector<double> server_us;      // from the server's timing header
  std::vector<double> server_cpu_us;  // the serving thread's CPU time
  uint64_t errors = 0;                // transport faults and non-200 replies
  uint64_t bytes_sent = 0;
  uint64_t bytes_received = 0;
};

struct LoadResult {
  double seconds = 0;  // the recorded window
  std::map<std::string, VerbStats> verbs;
  uint64_t all_requests = 0;  // completed, warm-up included
  double cpu_seconds = 0;     // user + system of this process, whole run
  uint64_t requests() const;
};

// Runs `script` over `options.connections` connections. Fails only if no
// connection could be made; request errors are counted, not fatal.
absl::StatusOr<LoadResult> RunLoad(const LoadOptions& options, Script& script);

// One request through http::Client, its status (setup and health checks).
absl::StatusOr<int> HttpStatusOf(const std::string& host, uint16_t port,
                                 std::string_view method,
                                 std::string_view target);

// Resident set size of a process in KiB from /proc/<pid>/status (VmRSS);
// pid 0: this process. -1 when unreadable.
int64_t ResidentKib(int pid = 0);

}  // namespace gpusched::bench

#endif  // GPUSCHED_BENCH_LOADGEN_HTTP_LOAD_H_
