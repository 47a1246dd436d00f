#include "bench/loadgen/workload.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "bench/lib/kube_json.h"
#include "bench/loadgen/http_load.h"

namespace gpusched::bench {

absl::Status WriteClusterFile(const GeneratedCluster& cluster,
                              const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  out << ClusterListJson(cluster.nodes, cluster.running);
  return out.good() ? absl::OkStatus()
                    : absl::UnavailableError(absl::StrCat("write ", path));
}

namespace {

// A loopback port the kernel reports free now. Another process may still
// take it before the child binds, which StartServeProcess retries.
absl::StatusOr<uint16_t> FreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return absl::UnavailableError("socket failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  const bool ok =
      bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  close(fd);
  if (!ok) return absl::UnavailableError("no free loopback port");
  return ntohs(addr.sin_port);
}

absl::StatusOr<ChildServer> StartServeOnPort(const std::string& binary,
                                             const std::string& cluster_file,
                                             uint16_t port,
                                             const std::string& log_path,
                                             int threads) {
  const std::string listen = absl::StrCat("127.0.0.1:", port);
  const std::string thread_arg = absl::StrCat(threads);
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    FILE* log = std::fopen(log_path.c_str(), "w");
    if (log != nullptr) {
      dup2(fileno(log), 1);
      dup2(fileno(log), 2);
    }
    execl(binary.c_str(), binary.c_str(), "serve", "--cluster",
          cluster_file.c_str(), "--listen", listen.c_str(), "--threads",
          thread_arg.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  ChildServer child{.pid = pid, .port = port};
  for (int attempt = 0; attempt < 600; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      return absl::UnavailableError(
          absl::StrCat(binary, " serve exited early; see ", log_path));
    }
    absl::StatusOr<int> ready =
        HttpStatusOf("127.0.0.1", port, "GET", "/readyz");
    if (ready.ok() && *ready == 200) return child;
  }
  StopServeProcess(child);
  return absl::DeadlineExceededError("serve did not become ready in 60 s");
}

}  // namespace

absl::StatusOr<ChildServer> StartServeProcess(const std::string& binary,
                                              const std::string& cluster_file,
                                              const std::string& log_path,
                                              int threads) {
  // The port is free when chosen but not reserved: beside a parallel e2e
  // run something else can bind it first, and the child then exits early.
  // A fresh port on each of a few tries makes that race harmless.
  absl::Status last = absl::UnavailableError("serve never started");
  for (int attempt = 0; attempt < 5; ++attempt) {
    absl::StatusOr<uint16_t> port = FreeLoopbackPort();
    if (!port.ok()) return port.status();
    absl::StatusOr<ChildServer> child =
        StartServeOnPort(binary, cluster_file, *port, log_path, threads);
    if (child.ok() || !absl::IsUnavailable(child.status())) return child;
    last = child.status();
  }
  return last;
}

void StopServeProcess(ChildServer& child) {
  if (child.pid <= 0) return;
  kill(child.pid, SIGTERM);
  int status = 0;
  waitpid(child.pid, &status, 0);
  child.pid = -1;
}

nlohmann::json MachineConditions() {
  double load[3] = {0, 0, 0};
  getloadavg(load, 3);
  utsname name{};
  uname(&name);
  return {{"cores", std::thread::hardware_concurrency()},
          {"loadavg_1m", load[0]},
          {"loadavg_5m", load[1]},
          {"kernel", name.release}};
}

absl::Status WriteJsonFile(const std::string& path, const nlohmann::json& doc) {
  std::filesystem::path p(path);
  if (p.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(p.parent_path(), ec);
  }
  std::ofstream out(path);
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  out << doc.dump(2) << "\n";
  return absl::OkStatus();
}

int WriteResultsAndExit(const char* tool, const std::string& path,
                        const nlohmann::json& doc) {
  if (absl::Status s = WriteJsonFile(path, doc); !s.ok()) {
    std::cerr << tool << ": " << s << "\n";
    return 1;
  }
  return 0;
}

Args::Args(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) continue;
    arg = arg.substr(2);
    size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      values_.emplace_back(arg.substr(0, eq), arg.substr(eq + 1));
    } else if (i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0) {
      values_.emplace_back(arg, argv[++i]);
    } else {
      values_.emplace_back(arg, "true");
    }
  }
}

bool Args::Has(std::string_view name) const {
  for (const auto& [key, value] : values_) {
    if (key == name) return true;
  }
  return false;
}

std::string Args::Get(std::string_view name, std::string fallback) const {
  for (const auto& [key, value] : values_) {
    if (key == name) return value;
  }
  return fallback;
}

int64_t Args::GetInt(std::string_view name, int64_t fallback) const {
  return Has(name) ? std::atoll(Get(name, "").c_str()) : fallback;
}

double Args::GetDouble(std::string_view name, double fallback) const {
  return Has(name) ? std::atof(Get(name, "").c_str()) : fallback;
}

std::vector<int> Args::GetInts(std::string_view name,
                               std::vector<int> fallback) const {
  if (!Has(name)) return fallback;
  std::vector<int> out;
  std::string text = Get(name, "");
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    if (comma > pos)
      out.push_back(std::atoi(text.substr(pos, comma - pos).c_str()));
    pos = comma + 1;
  }
  return out;
}

}  // namespace gpusched::bench
