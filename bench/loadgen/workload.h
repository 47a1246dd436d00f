// The extender workload the load tools share: a generated cluster, the pods
// kube-scheduler would ask about, candidate name sets as kube-scheduler
// samples them, and helpers to start a server on the cluster (in-process or
// as a `gpusched serve` child process).
#ifndef GPUSCHED_BENCH_LOADGEN_WORKLOAD_H_
#define GPUSCHED_BENCH_LOADGEN_WORKLOAD_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/lib/cluster_generator.h"
#include "nlohmann/json.hpp"

namespace gpusched::bench {

// Writes the cluster as a JSON List to `path` (for `serve --cluster`).
absl::Status WriteClusterFile(const GeneratedCluster& cluster,
                              const std::string& path);

// A `gpusched serve` child process.
struct ChildServer {
  int pid = -1;
  uint16_t port = 0;
};
// Starts `binary serve --cluster FILE --listen 127.0.0.1:PORT` on a free
// loopback port with its output sent to `log_path`, and waits until /readyz
// answers 200.
absl::StatusOr<ChildServer> StartServeProcess(const std::string& binary,
                                              const std::string& cluster_file,
                                              const std::string& log_path,
                                              int threads);
void StopServeProcess(ChildServer& child);

// Machine conditions for result files: cores, load average, kernel.
nlohmann::json MachineConditions();

// Writes `doc` pretty-printed to `path`, creating the directory.
absl::Status WriteJsonFile(const std::string& path, const nlohmann::json& doc);
// WriteJsonFile as a tool's last step: the exit code, with the error on
// stderr under the tool's name.
int WriteResultsAndExit(const char* tool, const std::string& path,
                        const nlohmann::json& doc);

// Small command-line parser: --name=value or --name value.
class Args {
 public:
  Args(int argc, char** argv);
  std::string Get(std::string_view name, std::string fallback) const;
  int64_t GetInt(std::string_view name, int64_t fallback) const;
  double GetDouble(std::string_view name, double fallback) const;
  std::vector<int> GetInts(std::string_view name,
                           std::vector<int> fallback) const;
  bool Has(std::string_view name) const;

 private:
  std::vector<std::pair<std::string, std::string>> values_;
};

}  // namespace gpusched::bench

#endif  // GPUSCHED_BENCH_LOADGEN_WORKLOAD_H_
