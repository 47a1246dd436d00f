#include "queueing/workload.h"

#include "absl/strings/numbers.h"

namespace gpusched {
namespace {

std::string NamespaceOf(const Pod& pod) {
  return pod.meta.namespace_name.empty() ? "default" : pod.meta.namespace_name;
}

const std::string* Find(const StringMap& map, const char* key) {
  auto it = map.find(key);
  return it == map.end() || it->second.empty() ? nullptr : &it->second;
}

}  // namespace

WorkloadRef WorkloadOf(const Pod& pod) {
  const std::string ns = NamespaceOf(pod);
  if (const std::string* group = Find(pod.meta.labels, kKueueGroupLabel)) {
    WorkloadRef ref{WorkloadRef::Kind::kKueueGroup, ns + "/" + *group};
    if (const std::string* count =
            Find(pod.meta.annotations, kKueueGroupCountAnnotation)) {
      if (!absl::SimpleAtoi(*count, &ref.declared_count)) ref.declared_count = 0;
    }
    return ref;
  }
  if (const std::string* group =
          Find(pod.meta.annotations, kVolcanoGroupAnnotation)) {
    return {WorkloadRef::Kind::kVolcanoGroup, ns + "/" + *group};
  }
  if (const std::string* group = Find(pod.meta.labels, kCoschedulingGroupLabel)) {
    return {WorkloadRef::Kind::kCoschedulingGroup, ns + "/" + *group};
  }
  return {WorkloadRef::Kind::kSinglePod, pod.Key()};
}

std::vector<const Pod*> Workload::MembersToAdmit() const {
  std::vector<const Pod*> members;
  for (const auto& [key, pod] : pods) {
    if (placements.contains(key)) continue;
    members.push_back(&pod);
  }
  if (is_gang && !admitted() &&
      static_cast<int>(members.size()) > min_member) {
    members.resize(min_member);
  }
  return members;
}

std::vector<const Pod*> Workload::UnplacedMembers() const {
  std::vector<const Pod*> members;
  for (const auto& [key, pod] : pods) {
    if (!placements.contains(key)) members.push_back(&pod);
  }
  return members;
}

ResourceList TotalRequests(const std::vector<const Pod*>& pods) {
  ResourceList total;
  for (const Pod* pod : pods) total.Add(EffectiveRequests(*pod));
  return total;
}

}  // namespace gpusched
