#include "scheduler/replay/replay_cluster.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "scheduler/gpu_fit.h"

namespace gpusched::replay {
namespace {

constexpr int64_t kBytesPerMib = int64_t{1} << 20;

Pod PodOf(const TracePod& trace) {
  Pod pod;
  pod.meta.namespace_name = "trace";
  pod.meta.name = trace.name;
  Container main{.name = "main"};
  main.requests.Set(kCpu, trace.cpu_milli);
  main.requests.Set(kMemory, trace.memory_mib * kBytesPerMib);
  if (trace.num_gpu > 0) main.requests.Set(kNvidiaGpu, trace.num_gpu);
  if (trace.IsShare()) {
    pod.meta.annotations[kGpuMilliAnnotation] = absl::StrCat(trace.gpu_milli);
  }
  pod.containers.push_back(std::move(main));
  return pod;
}

Node NodeOf(const TraceNode& trace) {
  Node node;
  node.meta.name = trace.name;
  if (!trace.model.empty()) {
    node.meta.labels["nvidia.com/gpu.product"] = trace.model;
  }
  node.allocatable.Set(kCpu, trace.cpu_milli);
  node.allocatable.Set(kMemory, trace.memory_mib * kBytesPerMib);
  if (trace.gpus > 0) node.allocatable.Set(kNvidiaGpu, trace.gpus);
  node.capacity = node.allocatable;
  return node;
}

bool ModelAllowed(const TracePod& pod, const std::string& model) {
  return pod.gpu_spec.empty() ||
         std::find(pod.gpu_spec.begin(), pod.gpu_spec.end(), model) !=
             pod.gpu_spec.end();
}

}  // namespace

ReplayPods::ReplayPods(std::span<const TracePod> pods) {
  using ShapeKey =
      std::tuple<int64_t, int64_t, int, int, std::vector<std::string>>;
  std::map<ShapeKey, int> shape_ids;
  for (const TracePod& trace : pods) {
    auto pod = std::make_unique<ReplayPod>();
    pod->trace = &trace;
    pod->pod = PodOf(trace);
    pod->view = PodView::Of(pod->pod);
    ShapeKey key{trace.cpu_milli, trace.memory_mib, trace.num_gpu,
                 trace.gpu_milli, trace.gpu_spec};
    auto [it, added] = shape_ids.emplace(std::move(key), shape_count_);
    if (added) ++shape_count_;
    pod->shape_id = it->second;
    pods_.push_back(std::move(pod));
  }
}

ReplayCluster::ReplayCluster(std::span<const TraceNode> nodes) {
  for (const TraceNode& trace : nodes) {
    auto node = std::make_unique<ReplayNode>(NodeOf(trace));
    node->model = trace.model;
    node->cpu_capacity = trace.cpu_milli;
    node->memory_capacity = trace.memory_mib;
    node->free_cpu = trace.cpu_milli;
    node->free_memory = trace.memory_mib;
    node->free_milli.assign(trace.gpus, kTraceMilliPerGpu);
    Refresh(*node);
    total_milli_ += int64_t{trace.gpus} * kTraceMilliPerGpu;
    max_cpu_ = std::max(max_cpu_, trace.cpu_milli);
    max_gpu_milli_ =
        std::max(max_gpu_milli_, int64_t{trace.gpus} * kTraceMilliPerGpu);
    nodes_.push_back(std::move(node));
  }
}

void ReplayCluster::Refresh(ReplayNode& node) {
  node.whole_free_gpus = static_cast<int>(std::count(
      node.free_milli.begin(), node.free_milli.end(), kTraceMilliPerGpu));
  node.largest_free_share =
      node.free_milli.empty()
          ? 0
          : *std::max_element(node.free_milli.begin(), node.free_milli.end());
  ++node.version;
}

bool ReplayCluster::Fits(const ReplayPod& pod, int index) const {
  const ReplayNode& node = *nodes_[index];
  const TracePod& trace = *pod.trace;
  if (node.free_cpu < trace.cpu_milli || node.free_memory < trace.memory_mib) {
    return false;
  }
  if (trace.num_gpu == 0) return true;
  if (!ModelAllowed(trace, node.model)) return false;
  if (trace.IsShare()) return node.largest_free_share >= trace.gpu_milli;
  return node.whole_free_gpus >= trace.num_gpu;
}

GpuAssignment ReplayCluster::PlanGpus(const ReplayPod& pod, int index) const {
  const ReplayNode& node = *nodes_[index];
  const TracePod& trace = *pod.trace;
  if (trace.num_gpu == 0) return {};
  if (!trace.IsShare()) {
    return gpusched::PlanGpus(pod.view.gpu, node.state.gpus()).assignment;
  }
  int best = -1;
  for (int gpu = 0; gpu < static_cast<int>(node.free_milli.size()); ++gpu) {
    const int free = node.free_milli[gpu];
    if (free < trace.gpu_milli) continue;
    if (best < 0 || free < node.free_milli[best]) best = gpu;
  }
  if (best < 0) return {};
  return GpuAssignment{.gpu_ids = {best}, .milli_per_gpu = trace.gpu_milli};
}

absl::Status ReplayCluster::Place(const ReplayPod& pod, int index,
                                  const GpuAssignment& gpus) {
  ReplayNode& node = *nodes_[index];
  const TracePod& trace = *pod.trace;
  if (!Fits(pod, index) || static_cast<int>(gpus.gpu_ids.size()) !=
                               (trace.num_gpu > 0 ? trace.num_gpu : 0)) {
    return absl::InternalError(absl::StrCat("pod ", trace.name,
                                            " does not fit node ",
                                            node.state.name(), " as planned"));
  }
  PodAllocation allocation{.pod_key = absl::StrCat("trace/", placed_++),
                           .requests = pod.view.requests,
                           .gpus = gpus};
  allocation.uid = allocation.pod_key;
  if (absl::Status added = node.state.AddPod(std::move(allocation));
      !added.ok()) {
    return absl::InternalError(added.message());
  }
  node.free_cpu -= trace.cpu_milli;
  node.free_memory -= trace.memory_mib;
  for (int gpu : gpus.gpu_ids) {
    node.free_milli[gpu] -= gpus.milli_per_gpu;
    allocated_milli_ += gpus.milli_per_gpu;
  }
  Refresh(node);
  return absl::OkStatus();
}

}  // namespace gpusched::replay
