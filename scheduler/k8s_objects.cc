#include "scheduler/k8s_objects.h"

#include "absl/strings/str_cat.h"

namespace gpusched {

std::string Pod::Key() const {
  return absl::StrCat(meta.namespace_name.empty() ? "default"
                                                  : meta.namespace_name,
                      "/", meta.name);
}

namespace {

// A container's requests with limits filling in missing requests.
ResourceList ContainerRequests(const Container& container) {
  ResourceList requests = container.requests;
  for (const auto& [name, amount] : container.limits.entries()) {
    if (!requests.Has(name)) requests.Set(name, amount);
  }
  return requests;
}

}  // namespace

ResourceList EffectiveRequests(const Pod& pod) {
  ResourceList sum;
  for (const Container& c : pod.containers) sum.Add(ContainerRequests(c));
  for (const Container& c : pod.init_containers) {
    sum.MaxWith(ContainerRequests(c));
  }
  sum.Add(pod.overhead);
  return sum;
}

bool IsTerminal(const Pod& pod) {
  return pod.phase == "Succeeded" || pod.phase == "Failed";
}

}  // namespace gpusched
