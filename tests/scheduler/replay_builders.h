#ifndef GPUSCHED_TESTS_SCHEDULER_REPLAY_BUILDERS_H_
#define GPUSCHED_TESTS_SCHEDULER_REPLAY_BUILDERS_H_

// Trace rows for the replay tests: TraceGpuNode("a", 8).Cpu(96000) etc.

#include <string>
#include <utility>
#include <vector>

#include "scheduler/replay/trace.h"

namespace gpusched::testing {

class TraceNodeBuilder {
 public:
  TraceNodeBuilder(std::string name, int gpus) {
    node_.name = std::move(name);
    node_.gpus = gpus;
    node_.cpu_milli = 96000;
    node_.memory_mib = 393216;
    node_.model = "G2";
  }
  TraceNodeBuilder& Cpu(int64_t milli) {
    node_.cpu_milli = milli;
    return *this;
  }
  TraceNodeBuilder& MemoryMib(int64_t mib) {
    node_.memory_mib = mib;
    return *this;
  }
  TraceNodeBuilder& Model(std::string model) {
    node_.model = std::move(model);
    return *this;
  }
  operator replay::TraceNode() const { return node_; }  // NOLINT

 private:
  replay::TraceNode node_;
};

inline TraceNodeBuilder TraceGpuNode(std::string name, int gpus) {
  return TraceNodeBuilder(std::move(name), gpus);
}

class TracePodBuilder {
 public:
  explicit TracePodBuilder(std::string name) {
    pod_.name = std::move(name);
    pod_.cpu_milli = 1000;
    pod_.memory_mib = 1024;
  }
  TracePodBuilder& Gpus(int count) {
    pod_.num_gpu = count;
    pod_.gpu_milli = 1000;
    return *this;
  }
  TracePodBuilder& Share(int milli) {
    pod_.num_gpu = 1;
    pod_.gpu_milli = milli;
    return *this;
  }
  TracePodBuilder& Cpu(int64_t milli) {
    pod_.cpu_milli = milli;
    return *this;
  }
  TracePodBuilder& MemoryMib(int64_t mib) {
    pod_.memory_mib = mib;
    return *this;
  }
  TracePodBuilder& Models(std::vector<std::string> models) {
    pod_.gpu_spec = std::move(models);
    return *this;
  }
  operator replay::TracePod() const { return pod_; }  // NOLINT

 private:
  replay::TracePod pod_;
};

inline TracePodBuilder TracePodOf(std::string name) {
  return TracePodBuilder(std::move(name));
}

}  // namespace gpusched::testing

#endif  // GPUSCHED_TESTS_SCHEDULER_REPLAY_BUILDERS_H_
