#include "bench/lib/kube_json.h"

#include <cstdint>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "api/codec/json_writer.h"

namespace gpusched::bench {
namespace {

// CPU flags node-feature-discovery publishes on a recent x86 server.
constexpr const char* kCpuFlags[] = {
    "ADX",          "AESNI",      "AMXBF16",    "AMXINT8",
    "AMXTILE",      "AVX",        "AVX2",       "AVX512BF16",
    "AVX512BITALG", "AVX512BW",   "AVX512CD",   "AVX512DQ",
    "AVX512F",      "AVX512FP16", "AVX512IFMA", "AVX512VBMI",
    "AVX512VBMI2",  "AVX512VL",   "AVX512VNNI", "AVX512VPOPCNTDQ",
    "AVXVNNI",      "CETIBT",     "CETSS",      "CLDEMOTE",
    "CMPXCHG8",     "FMA3",       "FSRM",       "FXSR",
    "FXSROPT",      "GFNI",       "HYPERVISOR", "IBPB",
    "LAHF",         "MOVBE",      "MOVDIR64B",  "MOVDIRI",
    "OSXSAVE",      "SERIALIZE",  "SHA",        "STIBP",
    "SYSCALL",      "SYSEE",      "TSXLDTRK",   "VAES",
    "VMX",          "VPCLMULQDQ", "WAITPKG",    "X87",
    "XGETBV1",      "XSAVE"};

// Images a GPU node typically has cached (kubelet reports up to 50).
constexpr const char* kImages[] = {"nvcr.io/nvidia/pytorch",
                                   "nvcr.io/nvidia/tensorflow",
                                   "nvcr.io/nvidia/tritonserver",
                                   "nvcr.io/nvidia/nemo",
                                   "nvcr.io/nvidia/cuda",
                                   "nvcr.io/nvidia/k8s-device-plugin",
                                   "nvcr.io/nvidia/gpu-feature-discovery",
                                   "nvcr.io/nvidia/dcgm-exporter",
                                   "nvcr.io/nvidia/driver",
                                   "nvcr.io/nvidia/k8s/container-toolkit",
                                   "registry.k8s.io/kube-proxy",
                                   "registry.k8s.io/pause",
                                   "docker.io/calico/node",
                                   "docker.io/calico/cni",
                                   "quay.io/prometheus/node-exporter",
                                   "registry.k8s.io/nfd/node-feature-discovery",
                                   "ghcr.io/example/train-llm",
                                   "ghcr.io/example/serve-llm",
                                   "ghcr.io/example/data-prep",
                                   "ghcr.io/example/eval-harness"};

// Deterministic pseudo-random hex, for digests and UIDs.
std::string Hex(uint64_t seed, int length) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(length);
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  for (int i = 0; i < length; ++i) {
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    out.push_back(kDigits[x & 15]);
  }
  return out;
}

std::string Uid(uint64_t seed) {
  std::string h = Hex(seed, 32);
  return absl::StrCat(h.substr(0, 8), "-", h.substr(8, 4), "-", h.substr(12, 4),
                      "-", h.substr(16, 4), "-", h.substr(20, 12));
}

// Quantity text as the API server writes it.
std::string Quantity(std::string_view name, int64_t amount) {
  if (name == "cpu") {
    return amount % 1000 == 0 ? absl::StrCat(amount / 1000)
                              : absl::StrCat(amount, "m");
  }
  if (name == "memory" && amount % 1024 == 0) {
    return absl::StrCat(amount / 1024, "Ki");
  }
  return absl::StrCat(amount);
}

void StringMapJson(JsonWriter& w, const StringMap& map) {
  w.Raw("{");
  bool first = true;
  for (const auto& [key, value] : map) {
    if (!first) w.Raw(",");
    first = false;
    w.Key(key).String(value);
  }
  w.Raw("}");
}

void ResourcesJson(JsonWriter& w, const ResourceList& list,
                   bool with_node_extras) {
  // The API server sorts resource names; the node extras interleave.
  StringMap sorted;
  for (const auto& [name, amount] : list.entries()) {
    sorted[name] = Quantity(name, amount);
  }
  if (with_node_extras) {
    sorted["ephemeral-storage"] = "1798792198758";
    sorted["hugepages-1Gi"] = "0";
    sorted["hugepages-2Mi"] = "0";
    sorted["rdma/rdma_shared_device_a"] = "1k";
  }
  StringMapJson(w, sorted);
}

StringMap NodeLabels(const Node& node) {
  StringMap labels = node.meta.labels;
  labels["beta.kubernetes.io/arch"] = "amd64";
  labels["beta.kubernetes.io/os"] = "linux";
  labels["kubernetes.io/arch"] = "amd64";
  labels["kubernetes.io/os"] = "linux";
  labels["node.kubernetes.io/instance-type"] = "gpu-baremetal";
  labels["topology.kubernetes.io/region"] = "eu-west-4";
  for (const char* flag : kCpuFlags) {
    labels[absl::StrCat("feature.node.kubernetes.io/cpu-cpuid.", flag)] =
        "true";
  }
  labels["feature.node.kubernetes.io/cpu-hardware_multithreading"] = "true";
  labels["feature.node.kubernetes.io/cpu-model.family"] = "6";
  labels["feature.node.kubernetes.io/cpu-model.id"] = "143";
  labels["feature.node.kubernetes.io/cpu-model.vendor_id"] = "Intel";
  labels["feature.node.kubernetes.io/kernel-version.full"] =
      "5.15.0-105-generic";
  labels["feature.node.kubernetes.io/kernel-version.major"] = "5";
  labels["feature.node.kubernetes.io/kernel-version.minor"] = "15";
  labels["feature.node.kubernetes.io/pci-10de.present"] = "true";
  labels["feature.node.kubernetes.io/pci-15b3.present"] = "true";
  labels["feature.node.kubernetes.io/system-os_release.ID"] = "ubuntu";
  labels["feature.node.kubernetes.io/system-os_release.VERSION_ID"] = "22.04";
  labels["nvidia.com/cuda.driver.major"] = "550";
  labels["nvidia.com/cuda.driver.minor"] = "54";
  labels["nvidia.com/cuda.driver.rev"] = "15";
  labels["nvidia.com/cuda.runtime.major"] = "12";
  labels["nvidia.com/cuda.runtime.minor"] = "4";
  labels["nvidia.com/gfd.timestamp"] = "1731312000";
  labels["nvidia.com/gpu.compute.major"] = "9";
  labels["nvidia.com/gpu.compute.minor"] = "0";
  labels["nvidia.com/gpu.deploy.container-toolkit"] = "true";
  labels["nvidia.com/gpu.deploy.dcgm-exporter"] = "true";
  labels["nvidia.com/gpu.deploy.device-plugin"] = "true";
  labels["nvidia.com/gpu.deploy.driver"] = "true";
  labels["nvidia.com/gpu.deploy.gpu-feature-discovery"] = "true";
  // GFD's per-model labels, as the generated product says.
  const std::string& product = labels["nvidia.com/gpu.product"];
  const bool hopper = product.find("H100") != std::string::npos;
  const bool ampere = product.find("A100") != std::string::npos;
  labels["nvidia.com/gpu.family"] = hopper   ? "hopper"
                                    : ampere ? "ampere"
                                    : product.find("T4") != std::string::npos
                                        ? "turing"
                                        : "ada-lovelace";
  labels["nvidia.com/gpu.machine"] = hopper ? "DGXH100" : "PowerEdge-XE9680";
  labels["nvidia.com/gpu.memory"] = hopper   ? "81559"
                                    : ampere ? "40960"
                                             : "23034";
  labels["nvidia.com/gpu.present"] = "true";
  labels["nvidia.com/mig.capable"] = hopper || ampere ? "true" : "false";
  labels["nvidia.com/mps.capable"] = "false";
  return labels;
}

// metadata.managedFields: one entry per writer, each listing the fields it
// owns, as server-side apply records them.
void ManagedFieldsJson(JsonWriter& w, const StringMap& labels,
                       const StringMap& annotations) {
  w.Raw("[");
  w.Raw(
      R"({"manager":"kubeadm","operation":"Update","apiVersion":"v1",)"
      R"("time":"2025-03-11T08:14:28Z","fieldsType":"FieldsV1","fieldsV1":)"
      R"({"f:metadata":{"f:annotations":{"f:kubeadm.alpha.kubernetes.io/cri-socket":{}},)"
      R"("f:labels":{"f:node.kubernetes.io/exclude-from-external-load-balancers":{}}}}},)");
  w.Raw(
      R"({"manager":"kube-controller-manager","operation":"Update","apiVersion":"v1",)"
      R"("time":"2025-03-11T08:14:40Z","fieldsType":"FieldsV1","fieldsV1":)"
      R"({"f:metadata":{"f:annotations":{"f:node.alpha.kubernetes.io/ttl":{}}},)"
      R"("f:spec":{"f:podCIDR":{},"f:podCIDRs":{".":{},"v:\"10.244.17.0/24\"":{}}}}},)");
  w.Raw(
      R"({"manager":"nfd-master","operation":"Update","apiVersion":"v1",)"
      R"("time":"2025-11-20T10:02:11Z","fieldsType":"FieldsV1","fieldsV1":)"
      R"({"f:metadata":{"f:annotations":{"f:nfd.node.kubernetes.io/feature-labels":{}},)"
      R"("f:labels":{)");
  bool first = true;
  for (const auto& [key, value] : labels) {
    if (!first) w.Raw(",");
    first = false;
    w.Key(absl::StrCat("f:", key)).Raw("{}");
  }
  w.Raw("}}}},");
  w.Raw(R"({"manager":"calico-node","operation":"Update","apiVersion":"v1",)"
        R"("time":"2025-03-11T08:15:02Z","fieldsType":"FieldsV1","fieldsV1":)"
        R"({"f:metadata":{"f:annotations":{)");
  first = true;
  for (const auto& [key, value] : annotations) {
    if (!first) w.Raw(",");
    first = false;
    w.Key(absl::StrCat("f:", key)).Raw("{}");
  }
  w.Raw("}}},\"subresource\":\"status\"},");
  w.Raw(
      R"({"manager":"kubelet","operation":"Update","apiVersion":"v1",)"
      R"("time":"2025-11-23T11:58:31Z","fieldsType":"FieldsV1","fieldsV1":)"
      R"({"f:status":{"f:allocatable":{"f:cpu":{},"f:ephemeral-storage":{},)"
      R"("f:memory":{},"f:nvidia.com/gpu":{}},"f:capacity":{"f:cpu":{},)"
      R"("f:memory":{},"f:nvidia.com/gpu":{}},"f:conditions":{)"
      R"("k:{\"type\":\"DiskPressure\"}":{"f:lastHeartbeatTime":{}},)"
      R"("k:{\"type\":\"MemoryPressure\"}":{"f:lastHeartbeatTime":{}},)"
      R"("k:{\"type\":\"PIDPressure\"}":{"f:lastHeartbeatTime":{}},)"
      R"("k:{\"type\":\"Ready\"}":{"f:lastHeartbeatTime":{},)"
      R"("f:lastTransitionTime":{},"f:message":{},"f:reason":{},"f:status":{}}},)"
      R"("f:images":{},"f:nodeInfo":{"f:bootID":{},"f:kernelVersion":{}}}},)"
      R"("subresource":"status"})");
  w.Raw("]");
}

void ConditionsJson(JsonWriter& w) {
  struct Condition {
    const char* type;
    const char* status;
    const char* reason;
    const char* message;
  };
  static constexpr Condition kConditions[] = {
      {"NetworkUnavailable", "False", "CalicoIsUp",
       "Calico is running on this node"},
      {"MemoryPressure", "False", "KubeletHasSufficientMemory",
       "kubelet has sufficient memory available"},
      {"DiskPressure", "False", "KubeletHasNoDiskPressure",
       "kubelet has no disk pressure"},
      {"PIDPressure", "False", "KubeletHasSufficientPID",
       "kubelet has sufficient PID available"},
      {"Ready", "True", "KubeletReady",
       "kubelet is posting ready status. AppArmor enabled"},
  };
  w.Raw("[");
  for (size_t i = 0; i < std::size(kConditions); ++i) {
    const Condition& c = kConditions[i];
    if (i > 0) w.Raw(",");
    w.Raw("{").Key("type").String(c.type).Raw(",").Key("status").String(
        c.status);
    w.Raw(R"(,"lastHeartbeatTime":"2025-11-23T11:58:31Z",)"
          R"("lastTransitionTime":"2025-03-11T08:15:02Z",)");
    w.Key("reason").String(c.reason).Raw(",").Key("message").String(c.message);
    w.Raw("}");
  }
  w.Raw("]");
}

void ImagesJson(JsonWriter& w, int index) {
  w.Raw("[");
  for (int i = 0; i < 50; ++i) {
    const char* repo = kImages[(i + index) % std::size(kImages)];
    if (i > 0) w.Raw(",");
    w.Raw(R"({"names":[)")
        .String(absl::StrCat(repo, "@sha256:", Hex(i * 7919 + index % 13, 64)))
        .Raw(",")
        .String(absl::StrCat(repo, ":v", 1 + i % 9, ".", i % 24, ".", i % 5))
        .Raw(R"(],"sizeBytes":)")
        .Int(int64_t{150000000} + int64_t{97000003} * ((i * 31 + index) % 97))
        .Raw("}");
  }
  w.Raw("]");
}

}  // namespace

std::string KubeNodeJson(const Node& node, int index) {
  const StringMap labels = NodeLabels(node);
  const std::string ip = absl::StrCat("10.", 16 + index / 65536 % 16, ".",
                                      index / 256 % 256, ".", index % 256);
  StringMap annotations = node.meta.annotations;
  annotations["csi.volume.kubernetes.io/nodeid"] =
      absl::StrCat(R"({"csi.tigera.io":")", node.meta.name, R"("})");
  annotations["kubeadm.alpha.kubernetes.io/cri-socket"] =
      "unix:///run/containerd/containerd.sock";
  std::string features;
  for (const char* flag : kCpuFlags) {
    absl::StrAppend(&features, features.empty() ? "" : ",", "cpu-cpuid.", flag);
  }
  annotations["nfd.node.kubernetes.io/feature-labels"] = features;
  annotations["nfd.node.kubernetes.io/master.version"] = "v0.14.2";
  annotations["node.alpha.kubernetes.io/ttl"] = "0";
  annotations["projectcalico.org/IPv4Address"] = absl::StrCat(ip, "/16");
  annotations["projectcalico.org/IPv4VXLANTunnelAddr"] =
      absl::StrCat("192.168.", index % 256, ".0");
  annotations["volumes.kubernetes.io/controller-managed-attach-detach"] =
      "true";

  JsonWriter w;
  w.out().reserve(16 << 10);
  w.Raw(R"({"kind":"Node","apiVersion":"v1","metadata":{)");
  w.Key("name").String(node.meta.name).Raw(",");
  w.Key("uid").String(Uid(index)).Raw(",");
  w.Key("resourceVersion")
      .String(node.meta.resource_version.empty() ? "1"
                                                 : node.meta.resource_version)
      .Raw(",");
  w.Raw(R"("creationTimestamp":"2025-03-11T08:14:27Z","labels":)");
  StringMapJson(w, labels);
  w.Raw(",").Key("annotations");
  StringMapJson(w, annotations);
  w.Raw(",").Key("managedFields");
  ManagedFieldsJson(w, labels, annotations);
  w.Raw("},\"spec\":{");
  w.Raw(R"("podCIDR":"10.244.17.0/24","podCIDRs":["10.244.17.0/24"],)");
  w.Key("providerID").String(absl::StrCat("baremetal://", node.meta.name));
  if (node.unschedulable) w.Raw(R"(,"unschedulable":true)");
  if (!node.taints.empty()) {
    w.Raw(",\"taints\":[");
    for (size_t i = 0; i < node.taints.size(); ++i) {
      if (i > 0) w.Raw(",");
      w.Raw("{").Key("key").String(node.taints[i].key);
      if (!node.taints[i].value.empty()) {
        w.Raw(",").Key("value").String(node.taints[i].value);
      }
      w.Raw(",").Key("effect").String(node.taints[i].effect).Raw("}");
    }
    w.Raw("]");
  }
  w.Raw("},\"status\":{\"capacity\":");
  ResourcesJson(w, node.capacity, true);
  w.Raw(",\"allocatable\":");
  ResourcesJson(w, node.allocatable, true);
  w.Raw(",\"phase\":\"Running\",\"conditions\":");
  ConditionsJson(w);
  w.Raw(",\"addresses\":[{\"type\":\"InternalIP\",\"address\":")
      .String(ip)
      .Raw("},{\"type\":\"Hostname\",\"address\":")
      .String(node.meta.name)
      .Raw("}]");
  w.Raw(
      R"(,"daemonEndpoints":{"kubeletEndpoint":{"Port":10250}},"nodeInfo":{)");
  w.Key("machineID").String(Hex(index + 1000003, 32)).Raw(",");
  w.Key("systemUUID").String(Uid(index + 2000003)).Raw(",");
  w.Key("bootID").String(Uid(index + 3000003)).Raw(",");
  w.Raw(
      R"("kernelVersion":"5.15.0-105-generic","osImage":"Ubuntu 22.04.4 LTS",)"
      R"("containerRuntimeVersion":"containerd://1.7.12","kubeletVersion":"v1.30.4",)"
      R"("kubeProxyVersion":"v1.30.4","operatingSystem":"linux","architecture":"amd64"},)");
  w.Raw("\"images\":");
  ImagesJson(w, index);
  w.Raw(
      R"(,"runtimeHandlers":[{"name":"nvidia","features":{"recursiveReadOnlyMounts":true}},)"
      R"({"name":"runc","features":{"recursiveReadOnlyMounts":true}}]}})");
  return w.Take();
}

std::string KubePodJson(const Pod& pod) {
  JsonWriter w;
  w.Raw(R"({"kind":"Pod","apiVersion":"v1","metadata":{)");
  w.Key("name").String(pod.meta.name).Raw(",");
  w.Key("namespace").String(pod.meta.namespace_name).Raw(",");
  w.Key("uid").String(pod.meta.uid).Raw(",");
  w.Raw(R"("resourceVersion":"1","creationTimestamp":"2025-11-23T11:00:00Z")");
  if (!pod.meta.labels.empty()) {
    w.Raw(",").Key("labels");
    StringMapJson(w, pod.meta.labels);
  }
  if (!pod.meta.annotations.empty()) {
    w.Raw(",").Key("annotations");
    StringMapJson(w, pod.meta.annotations);
  }
  w.Raw("},\"spec\":{\"containers\":[");
  for (size_t i = 0; i < pod.containers.size(); ++i) {
    const Container& c = pod.containers[i];
    if (i > 0) w.Raw(",");
    w.Raw("{").Key("name").String(c.name);
    w.Raw(
        R"(,"image":"ghcr.io/example/train-llm:v2.4.1","resources":{"requests":)");
    ResourcesJson(w, c.requests, false);
    w.Raw(",\"limits\":");
    ResourcesJson(w, c.limits.empty() ? c.requests : c.limits, false);
    w.Raw(
        R"(},"terminationMessagePath":"/dev/termination-log",)"
        R"("terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"})");
  }
  w.Raw(R"(],"restartPolicy":"Never","terminationGracePeriodSeconds":30,)"
        R"("dnsPolicy":"ClusterFirst","serviceAccountName":"default",)");
  if (!pod.node_name.empty()) w.Key("nodeName").String(pod.node_name).Raw(",");
  w.Key("schedulerName")
      .String(pod.scheduler_name.empty() ? "gpusched" : pod.scheduler_name);
  w.Raw(
      R"(,"tolerations":[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"},)"
      R"({"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}],)"
      R"("priority":0,"enableServiceLinks":true,"preemptionPolicy":"PreemptLowerPriority"},)");
  w.Raw("\"status\":{\"phase\":")
      .String(PodPhaseName(pod.phase))
      .Raw(",\"qosClass\":\"Burstable\"}}");
  return w.Take();
}

std::string ExtenderArgsWithNames(const Pod& pod,
                                  const std::vector<std::string>& names) {
  JsonWriter w;
  w.Raw("{\"Pod\":")
      .Raw(KubePodJson(pod))
      .Raw(",\"Nodes\":null,\"NodeNames\":[");
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) w.Raw(",");
    w.String(names[i]);
  }
  w.Raw("]}");
  return w.Take();
}

std::string ExtenderArgsWithNodes(const Pod& pod,
                                  const std::vector<std::string>& node_json) {
  size_t size = 1024;
  for (const std::string& node : node_json) size += node.size() + 1;
  JsonWriter w;
  w.out().reserve(size);
  w.Raw("{\"Pod\":").Raw(KubePodJson(pod));
  w.Raw(R"(,"Nodes":{"metadata":{"resourceVersion":"1"},"items":[)");
  for (size_t i = 0; i < node_json.size(); ++i) {
    if (i > 0) w.Raw(",");
    w.Raw(node_json[i]);
  }
  w.Raw("]},\"NodeNames\":null}");
  return w.Take();
}

std::string BindingArgs(const Pod& pod, const std::string& node) {
  JsonWriter w;
  w.Raw("{").Key("PodName").String(pod.meta.name);
  w.Raw(",").Key("PodNamespace").String(pod.meta.namespace_name);
  w.Raw(",").Key("PodUID").String(pod.meta.uid);
  w.Raw(",").Key("Node").String(node).Raw("}");
  return w.Take();
}

std::string ClusterListJson(const std::vector<Node>& nodes,
                            const std::vector<Pod>& pods) {
  std::string out = R"({"apiVersion":"v1","kind":"List","items":[)";
  bool first = true;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!first) out += ",\n";
    first = false;
    out += KubeNodeJson(nodes[i], static_cast<int>(i));
  }
  for (const Pod& pod : pods) {
    if (!first) out += ",\n";
    first = false;
    out += KubePodJson(pod);
  }
  out += "]}\n";
  return out;
}

}  // namespace gpusched::bench
