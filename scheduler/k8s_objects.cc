#include "scheduler/k8s_objects.h"

#include "absl/strings/str_cat.h"

namespace gpusched {

namespace {

struct PhaseNameEntry {
  PodPhase phase;
  std::string_view name;
};
constexpr PhaseNameEntry kPhaseNames[] = {
    {PodPhase::kPending, "Pending"},     {PodPhase::kRunning, "Running"},
    {PodPhase::kSucceeded, "Succeeded"}, {PodPhase::kFailed, "Failed"},
    {PodPhase::kUnknown, "Unknown"},
};

}  // namespace

PodPhase PodPhaseFromName(std::string_view name) {
  for (const PhaseNameEntry& entry : kPhaseNames) {
    if (entry.name == name) return entry.phase;
  }
  return PodPhase::kUnknown;
}

std::string_view PodPhaseName(PodPhase phase) {
  for (const PhaseNameEntry& entry : kPhaseNames) {
    if (entry.phase == phase) return entry.name;
  }
  return "Unknown";
}

std::string Pod::Key() const {
  return absl::StrCat(
      meta.namespace_name.empty() ? "default" : meta.namespace_name, "/",
      meta.name);
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
  sum.Add(pod.claim_requests);
  return sum;
}

bool IsTerminal(const Pod& pod) {
  return pod.phase == PodPhase::kSucceeded || pod.phase == PodPhase::kFailed;
}

}  // namespace gpusched
