// The PodGroup APIs gpusched reads, one row each, in PodGroup::Flavor
// order, so that the sync, the status writer and the admission loop's feed
// name each API alike and a new flavor is one more row:
//
//   scheduling.volcano.sh/v1beta1  Volcano's CRD
//   scheduling.x-k8s.io/v1alpha1   the coscheduling plugin's CRD
//   scheduling.k8s.io/v1beta1      Kubernetes' own (KEP-4671), built in:
//                                  served only with kube-apiserver's
//                                  --runtime-config=scheduling.k8s.io/
//                                  v1beta1=true and the GenericWorkload
//                                  feature gate (both off by default in
//                                  v1.37)
#ifndef GPUSCHED_API_KUBE_PODGROUP_API_H_
#define GPUSCHED_API_KUBE_PODGROUP_API_H_

#include <array>
#include <cstddef>
#include <string_view>

#include "queueing/workload_types.h"

namespace gpusched::kube {

struct PodGroupApi {
  PodGroup::Flavor flavor;
  std::string_view group_version;
  std::string_view list_path;  // across namespaces
  // The CRD that defines the API and the version gpusched lists; empty for
  // the built-in API, which no CRD defines (its absence is polled).
  std::string_view crd;
  std::string_view crd_version;
  // Status goes to .../status; without, to the object itself.
  bool status_subresource;
};

inline constexpr std::array<PodGroupApi, 3> kPodGroupApis = {{
    {.flavor = PodGroup::Flavor::kVolcano,
     .group_version = "scheduling.volcano.sh/v1beta1",
     .list_path = "/apis/scheduling.volcano.sh/v1beta1/podgroups",
     .crd = "podgroups.scheduling.volcano.sh",
     .crd_version = "v1beta1",
     .status_subresource = false},
    {.flavor = PodGroup::Flavor::kCoscheduling,
     .group_version = "scheduling.x-k8s.io/v1alpha1",
     .list_path = "/apis/scheduling.x-k8s.io/v1alpha1/podgroups",
     .crd = "podgroups.scheduling.x-k8s.io",
     .crd_version = "v1alpha1",
     .status_subresource = true},
    {.flavor = PodGroup::Flavor::kNative,
     .group_version = "scheduling.k8s.io/v1beta1",
     .list_path = "/apis/scheduling.k8s.io/v1beta1/podgroups",
     .crd = "",
     .crd_version = "",
     .status_subresource = true},
}};

inline constexpr size_t kPodGroupFlavors = kPodGroupApis.size();

constexpr size_t FlavorIndex(PodGroup::Flavor flavor) {
  return static_cast<size_t>(flavor);
}

constexpr const PodGroupApi& PodGroupApiOf(PodGroup::Flavor flavor) {
  return kPodGroupApis[FlavorIndex(flavor)];
}

static_assert(
    [] {
      for (size_t i = 0; i < kPodGroupFlavors; ++i) {
        if (FlavorIndex(kPodGroupApis[i].flavor) != i) return false;
      }
      return true;
    }(),
    "kPodGroupApis must list the flavors in PodGroup::Flavor order");

}  // namespace gpusched::kube

#endif  // GPUSCHED_API_KUBE_PODGROUP_API_H_
