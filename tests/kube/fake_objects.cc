// JSON builders for the fake API server's nodes and pods.
#include <string>
#include <vector>

#include "tests/kube/fake_apiserver.h"

namespace gpusched::kube::testing {

Json GpuNode(std::string_view name, int gpus) {
  const std::string count = std::to_string(gpus);
  Json resources = {{"cpu", "224"},
                    {"memory", "2Ti"},
                    {"pods", "110"},
                    {"nvidia.com/gpu", count}};
  return Json{
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata",
       {{"name", name},
        {"uid", "node-uid-" + std::string(name)},
        {"labels",
         {{"kubernetes.io/hostname", name},
          {"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"},
          {"nvidia.com/gpu.count", count}}}}},
      {"spec", Json::object()},
      {"status", {{"capacity", resources}, {"allocatable", resources}}}};
}

Json DraGpuSlice(const std::string& node, int gpus, int generation) {
  Json devices = Json::array();
  for (int i = 0; i < gpus; ++i) {
    devices.push_back(
        {{"name", "gpu-" + std::to_string(i)},
         {"attributes",
          {{"type", {{"string", "gpu"}}},
           {"index", {{"int", i}}},
           {"productName", {{"string", "NVIDIA H100 80GB HBM3"}}}}},
         {"capacity", {{"memory", {{"value", "80Gi"}}}}}});
  }
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceSlice"},
          {"metadata", {{"name", node + "-gpu.nvidia.com"}}},
          {"spec",
           {{"driver", "gpu.nvidia.com"},
            {"nodeName", node},
            {"pool",
             {{"name", node},
              {"generation", generation},
              {"resourceSliceCount", 1}}},
            {"devices", devices}}}};
}

Json DraGpuClass() {
  return {
      {"apiVersion", "resource.k8s.io/v1"},
      {"kind", "DeviceClass"},
      {"metadata", {{"name", "gpu.nvidia.com"}}},
      {"spec",
       {{"selectors",
         {{{"cel", {{"expression", "device.driver == 'gpu.nvidia.com'"}}}}}},
        {"extendedResourceName", "nvidia.com/gpu"}}}};
}

Json GpuPod(std::string_view key, int gpus, std::string_view node) {
  const size_t slash = key.find('/');
  const std::string ns(key.substr(0, slash));
  const std::string name(key.substr(slash + 1));
  Json spec = {
      {"schedulerName", "gpusched"},
      {"containers",
       {{{"name", "main"},
         {"resources",
          {{"requests", {{"cpu", "1"}}},
           {"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}}}}};
  if (!node.empty()) spec["nodeName"] = node;
  return Json{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", name}, {"namespace", ns}, {"uid", "uid-" + ns + "-" + name}}},
      {"spec", spec},
      {"status", {{"phase", node.empty() ? "Pending" : "Running"}}}};
}

Json Gated(Json pod, const std::vector<std::string>& gates) {
  Json list = Json::array();
  for (const std::string& gate : gates) list.push_back({{"name", gate}});
  pod["spec"]["schedulingGates"] = list;
  return pod;
}

namespace {

Json PodGroupOf(std::string_view api, std::string_view key, int min_member) {
  const size_t slash = key.find('/');
  return Json{{"apiVersion", api},
              {"kind", "PodGroup"},
              {"metadata",
               {{"name", key.substr(slash + 1)},
                {"namespace", key.substr(0, slash)},
                {"uid", "pg-uid-" + std::string(key.substr(slash + 1))}}},
              {"spec", {{"minMember", min_member}}}};
}

}  // namespace

Json VolcanoPodGroup(std::string_view key, int min_member) {
  return PodGroupOf("scheduling.volcano.sh/v1beta1", key, min_member);
}

Json CoschedulingPodGroup(std::string_view key, int min_member) {
  return PodGroupOf("scheduling.x-k8s.io/v1alpha1", key, min_member);
}

Json NativePodGroup(std::string_view key, int min_count) {
  Json group = PodGroupOf("scheduling.k8s.io/v1beta1", key, 0);
  group["spec"] = {{"schedulingPolicy", {{"gang", {{"minCount", min_count}}}}}};
  return group;
}

}  // namespace gpusched::kube::testing
