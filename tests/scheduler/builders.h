#ifndef GPUSCHED_TESTS_SCHEDULER_BUILDERS_H_
#define GPUSCHED_TESTS_SCHEDULER_BUILDERS_H_

// Fluent builders for the domain's Pod and Node, so that a test states only
// what matters to it:
//
//   Pod pod = MakePod("team/train").Gpus(2).Priority(10).Build();
//   Node node = MakeNode("h100-a").Gpus(8).Product("NVIDIA-H100-80GB-HBM3")
//                   .Build();
//
// Quantities are written as Kubernetes writes them ("4", "500m", "16Gi").
// A malformed quantity is a bug in the test and aborts it.

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/codec/gpu_topology_annotation.h"
#include "scheduler/extender_service.h"
#include "scheduler/gpu_request.h"
#include "scheduler/k8s_objects.h"
#include "scheduler/resource_list.h"

namespace gpusched::testing {

// The GFD product label of the H100 nodes most tests build.
inline constexpr char kH100[] = "NVIDIA-H100-80GB-HBM3";

inline int64_t Amount(std::string_view resource, std::string_view quantity) {
  absl::StatusOr<int64_t> amount =
      ResourceList::ParseAmount(resource, quantity);
  if (!amount.ok()) {
    std::cerr << "bad quantity in test: " << amount.status() << "\n";
    std::abort();
  }
  return *amount;
}

// One node affinity requirement: Req("zone", "In", {"a", "b"}).
inline NodeSelectorRequirement Req(std::string key, std::string op,
                                   std::vector<std::string> values = {}) {
  return NodeSelectorRequirement{
      .key = std::move(key), .op = std::move(op), .values = std::move(values)};
}

// A pod with one app container "main" holding every request.
class PodBuilder {
 public:
  // "namespace/name", or "name" for the default namespace.
  explicit PodBuilder(std::string_view key) {
    const size_t slash = key.find('/');
    if (slash == std::string_view::npos) {
      pod_.meta.namespace_name = "default";
      pod_.meta.name = std::string(key);
    } else {
      pod_.meta.namespace_name = std::string(key.substr(0, slash));
      pod_.meta.name = std::string(key.substr(slash + 1));
    }
    pod_.meta.uid =
        absl::StrCat("uid-", pod_.meta.namespace_name, "-", pod_.meta.name);
    pod_.containers.push_back(Container{.name = "main"});
  }

  PodBuilder& Uid(std::string uid) {
    pod_.meta.uid = std::move(uid);
    return *this;
  }
  // nvidia.com/gpu: whole GPUs, or replicas on a shared node.
  PodBuilder& Gpus(int64_t count) {
    main().requests.Set(kNvidiaGpu, count);
    return *this;
  }
  // A share of one GPU: gpusched.io/gpu-milli plus nvidia.com/gpu: 1.
  PodBuilder& Milli(int milli) {
    main().requests.Set(kNvidiaGpu, 1);
    return Annotation(kGpuMilliAnnotation, absl::StrCat(milli));
  }
  PodBuilder& Mig(std::string_view resource, int64_t count) {
    main().requests.Set(resource, count);
    return *this;
  }
  PodBuilder& Cpu(std::string_view quantity) { return Request(kCpu, quantity); }
  PodBuilder& Memory(std::string_view quantity) {
    return Request(kMemory, quantity);
  }
  PodBuilder& Request(std::string_view resource, std::string_view quantity) {
    main().requests.Set(resource, Amount(resource, quantity));
    return *this;
  }
  // gpusched.io/gpu-link=nvlink: whole GPUs on one NVLink island.
  PodBuilder& RequireNvLink() {
    return Annotation(kGpuLinkAnnotation, "nvlink");
  }
  PodBuilder& NodeSelector(std::string key, std::string value) {
    pod_.node_selector[std::move(key)] = std::move(value);
    return *this;
  }
  // Adds one ORed term of ANDed requirements.
  PodBuilder& Affinity(std::vector<NodeSelectorRequirement> expressions,
                       std::vector<NodeSelectorRequirement> fields = {}) {
    pod_.required_affinity_terms.push_back(
        NodeSelectorTerm{.match_expressions = std::move(expressions),
                         .match_fields = std::move(fields)});
    return *this;
  }
  PodBuilder& Toleration(std::string key, std::string op, std::string value,
                         std::string effect) {
    pod_.tolerations.push_back(
        gpusched::Toleration{.key = std::move(key),
                             .op = std::move(op),
                             .value = std::move(value),
                             .effect = std::move(effect)});
    return *this;
  }
  PodBuilder& Priority(int32_t priority) {
    pod_.priority = priority;
    return *this;
  }
  PodBuilder& Annotation(std::string_view key, std::string value) {
    pod_.meta.annotations[std::string(key)] = std::move(value);
    return *this;
  }
  // spec.nodeName: a pod that already runs there.
  PodBuilder& OnNode(std::string node) {
    pod_.node_name = std::move(node);
    pod_.phase = PodPhase::kRunning;
    return *this;
  }
  PodBuilder& Phase(PodPhase phase) {
    pod_.phase = phase;
    return *this;
  }

  Pod Build() const { return pod_; }
  operator Pod() const { return pod_; }  // NOLINT: builder convenience

 private:
  Container& main() { return pod_.containers.front(); }
  Pod pod_;
};

inline PodBuilder MakePod(std::string_view key) { return PodBuilder(key); }

// A node; by default with 64 CPUs, 512Gi memory, 110 pods and no GPUs.
// Resources are set in both capacity and allocatable.
class NodeBuilder {
 public:
  explicit NodeBuilder(std::string name) {
    node_.meta.name = std::move(name);
    Cpu("64").Memory("512Gi").Pods(110);
  }

  // Physical GPUs. On a shared node (Replicas) the device plugin offers
  // gpus * replicas nvidia.com/gpu; Build() does that multiplication.
  NodeBuilder& Gpus(int gpus) {
    gpus_ = gpus;
    return *this;
  }
  // GPUs in capacity but not in allocatable (the highest indices).
  NodeBuilder& UnhealthyGpus(int count) {
    unhealthy_ = count;
    return *this;
  }
  NodeBuilder& Product(std::string product) {
    return Label("nvidia.com/gpu.product", std::move(product));
  }
  // Time-slicing: nvidia.com/gpu.replicas and the sharing strategy label.
  NodeBuilder& Replicas(int replicas) {
    replicas_ = replicas;
    Label("nvidia.com/gpu.sharing-strategy", "time-slicing");
    return Label("nvidia.com/gpu.replicas", absl::StrCat(replicas));
  }
  NodeBuilder& Mig(std::string_view resource, int64_t count) {
    node_.capacity.Set(resource, count);
    node_.allocatable.Set(resource, count);
    Label("nvidia.com/mig.strategy", "mixed");
    return *this;
  }
  NodeBuilder& MigConfigState(std::string state) {
    return Label("nvidia.com/mig.config.state", std::move(state));
  }
  NodeBuilder& Cpu(std::string_view quantity) {
    return Resource(kCpu, quantity);
  }
  NodeBuilder& Memory(std::string_view quantity) {
    return Resource(kMemory, quantity);
  }
  NodeBuilder& Pods(int64_t pods) {
    return Resource(kPods, absl::StrCat(pods));
  }
  NodeBuilder& Resource(std::string_view name, std::string_view quantity) {
    const int64_t amount = Amount(name, quantity);
    node_.capacity.Set(name, amount);
    node_.allocatable.Set(name, amount);
    return *this;
  }
  NodeBuilder& Label(std::string key, std::string value) {
    node_.meta.labels[std::move(key)] = std::move(value);
    return *this;
  }
  NodeBuilder& Taint(std::string key, std::string value, std::string effect) {
    node_.taints.push_back(gpusched::Taint{.key = std::move(key),
                                           .value = std::move(value),
                                           .effect = std::move(effect)});
    return *this;
  }
  NodeBuilder& Unschedulable() {
    node_.unschedulable = true;
    return *this;
  }
  NodeBuilder& Annotation(std::string_view key, std::string value) {
    node_.meta.annotations[std::string(key)] = std::move(value);
    return *this;
  }
  // gpusched.io/gpu-topology, read as the codec reads a decoded Node's.
  NodeBuilder& Topology(std::string annotation) {
    Annotation(kGpuTopologyAnnotation, std::move(annotation));
    ReadGpuTopologyAnnotation(node_);
    return *this;
  }
  NodeBuilder& ResourceVersion(std::string version) {
    node_.meta.resource_version = std::move(version);
    return *this;
  }

  Node Build() const {
    Node node = node_;
    if (gpus_ > 0) {
      node.capacity.Set(kNvidiaGpu, int64_t{gpus_} * replicas_);
      node.allocatable.Set(kNvidiaGpu, int64_t{gpus_ - unhealthy_} * replicas_);
      node.meta.labels.emplace("nvidia.com/gpu.count", absl::StrCat(gpus_));
    }
    return node;
  }
  operator Node() const { return Build(); }  // NOLINT: builder convenience

 private:
  Node node_;
  int gpus_ = 0;
  int unhealthy_ = 0;
  int replicas_ = 1;
};

inline NodeBuilder MakeNode(std::string name) {
  return NodeBuilder(std::move(name));
}

// A compact gpusched.io/gpu-topology annotation: two NVLink islands of four
// GPUs (0-3 and 4-7, NV18 inside), joined only by SYS; island i on NUMA i.
// The bind request kube-scheduler sends for `pod` on `node`.
inline BindRequest BindOf(const Pod& pod, std::string node) {
  return BindRequest{.pod_name = pod.meta.name,
                     .pod_namespace = pod.meta.namespace_name,
                     .pod_uid = pod.meta.uid,
                     .node = std::move(node)};
}

inline std::string TwoIslandTopology() {
  std::string rows;
  for (int a = 0; a < 8; ++a) {
    std::string row;
    for (int b = 0; b < 8; ++b) {
      const char* cell = a == b           ? "\"X\""
                         : a / 4 == b / 4 ? "\"NV18\""
                                          : "\"SYS\"";
      absl::StrAppend(&row, b == 0 ? "" : ",", cell);
    }
    absl::StrAppend(&rows, a == 0 ? "" : ",", "[", row, "]");
  }
  return absl::StrCat("{\"links\": [", rows, "], \"numa\": [0,0,0,0,1,1,1,1]}");
}

}  // namespace gpusched::testing

#endif  // GPUSCHED_TESTS_SCHEDULER_BUILDERS_H_
