#include "policies/policy_validator.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "policies/kueue_configuration.h"
#include "scheduler/base/strings.h"

namespace gpusched::policy_internal {
namespace {

std::string Where(const Origin& origin) {
  return absl::StrCat(origin.file.name, ":", origin.line);
}

void Report(Diagnostics* diagnostics, const Origin& origin, int line,
            std::string_view path, std::string_view text) {
  diagnostics->Add(origin.file, line, origin.subject, path, text);
}

// Later definitions of a key name the first one. Documents are decoded in
// file and document order, so "first" is the earliest in the input.
template <typename T>
void CheckUniqueNames(const std::vector<T>& objects, Diagnostics* diagnostics) {
  std::map<std::string_view, const Origin*> first;
  for (const T& object : objects) {
    const Origin& origin = object.origin;
    if (origin.key.empty()) continue;
    auto [it, inserted] = first.emplace(origin.key, &origin);
    if (inserted) continue;
    const Origin& earlier = *it->second;
    Report(diagnostics, origin, origin.name_line, "metadata.name",
           DuplicateValue(origin.key.substr(origin.key.find('/') + 1),
                          absl::StrCat("already defined at ", earlier.file.name,
                                       ":", earlier.name_line)));
  }
}

void CheckSingleConfig(const PolicyDraft& draft, Diagnostics* diagnostics) {
  for (size_t i = 1; i < draft.configs.size(); ++i) {
    const Origin& first = draft.configs[0].origin;
    Report(diagnostics, draft.configs[i].origin, draft.configs[i].origin.line,
           "",
           Forbidden(absl::StrCat("at most one SchedulerConfig per policy; ",
                                  first.subject, " is at ", Where(first))));
  }
}

template <typename T>
std::set<std::string, std::less<>> Keys(const std::vector<T>& objects) {
  std::set<std::string, std::less<>> keys;
  for (const T& object : objects) keys.insert(object.origin.key);
  return keys;
}

template <typename T>
void CheckReferences(const std::vector<T>& objects, Kind target,
                     const std::set<std::string, std::less<>>& defined,
                     Diagnostics* diagnostics) {
  for (const T& object : objects) {
    for (const Reference& ref : object.references) {
      if (ref.target != target || defined.contains(ref.name)) continue;
      Report(diagnostics, object.origin, ref.line, ref.path,
             NotFound(ref.name, absl::StrCat("no ", Sv(KindName(target)),
                                             " of that name")));
    }
  }
}

void CheckAllReferences(const PolicyDraft& draft, Diagnostics* diagnostics) {
  const auto flavors = Keys(draft.flavors);
  CheckReferences(draft.cluster_queues, Kind::kResourceFlavor, flavors,
                  diagnostics);
  CheckReferences(draft.cohorts, Kind::kResourceFlavor, flavors, diagnostics);
  CheckReferences(draft.local_queues, Kind::kClusterQueue,
                  Keys(draft.cluster_queues), diagnostics);
  CheckReferences(draft.cluster_queues, Kind::kAdmissionCheck,
                  Keys(draft.admission_checks), diagnostics);
  CheckReferences(draft.admission_checks, Kind::kProvisioningRequestConfig,
                  Keys(draft.provisioning_request_configs), diagnostics);
  CheckReferences(draft.flavors, Kind::kTopology, Keys(draft.topologies),
                  diagnostics);
}

// The cycle reached by following parents from `start`, or empty.
std::vector<std::string> CycleFrom(
    const std::string& start,
    const std::map<std::string, std::string, std::less<>>& parents) {
  std::vector<std::string> path;
  std::string current = start;
  while (true) {
    auto found = std::find(path.begin(), path.end(), current);
    if (found != path.end()) return {found, path.end()};
    auto it = parents.find(current);
    if (it == parents.end() || it->second.empty()) return {};
    path.push_back(current);
    current = it->second;
  }
}

// Each cycle once, at the Cohort with the smallest name in it:
// `spec.parentName: Invalid value "b": cohort cycle: a -> b -> a`.
void CheckCohortCycles(const PolicyDraft& draft, Diagnostics* diagnostics) {
  std::map<std::string, std::string, std::less<>> parents;
  std::map<std::string, const Decoded<Cohort>*, std::less<>> by_name;
  for (const Decoded<Cohort>& cohort : draft.cohorts) {
    if (cohort.origin.key.empty()) continue;
    parents.emplace(cohort.origin.key, cohort.value.parent);
    by_name.emplace(cohort.origin.key, &cohort);
  }
  std::set<std::string, std::less<>> reported;
  for (const auto& [name, parent] : parents) {
    std::vector<std::string> cycle = CycleFrom(name, parents);
    if (cycle.empty() || reported.contains(cycle.front())) continue;
    std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()),
                cycle.end());
    reported.insert(cycle.begin(), cycle.end());
    const Decoded<Cohort>& at = *by_name.at(cycle.front());
    const Reference& ref = at.references.front();  // parentName comes first
    cycle.push_back(cycle.front());
    Report(diagnostics, at.origin, ref.line, ref.path,
           InvalidValue(
               at.value.parent,
               absl::StrCat("cohort cycle: ", absl::StrJoin(cycle, " -> "))));
  }
}

// Kueue: borrowWithinCohort cannot be combined with fair sharing.
void CheckFairSharingPreemption(const PolicyDraft& draft,
                                Diagnostics* diagnostics) {
  const Origin* on = nullptr;
  if (!draft.configs.empty() && draft.configs[0].value.fair_sharing) {
    on = &draft.configs[0].origin;
  }
  for (const DecodedKueueConfiguration& kueue : draft.kueue_configurations) {
    if (kueue.fair_sharing_line != 0 && kueue.mapped.fair_sharing) {
      on = &kueue.origin;
    }
  }
  if (on == nullptr) return;
  const Origin& config = *on;
  for (const DecodedClusterQueue& queue : draft.cluster_queues) {
    if (queue.borrow_within_cohort_line == 0) continue;
    Report(
        diagnostics, queue.origin, queue.borrow_within_cohort_line,
        "spec.preemption.borrowWithinCohort.policy",
        InvalidValue("LowerPriority",
                     absl::StrCat("must be Never when fair sharing is "
                                  "enabled (",
                                  config.subject, " at ", Where(config), ")")));
  }
}

template <typename T, typename Key>
std::vector<T> SortedValues(std::vector<Decoded<T>>& objects, Key key) {
  std::vector<T> values;
  for (Decoded<T>& object : objects) values.push_back(std::move(object.value));
  std::sort(values.begin(), values.end(),
            [&](const T& a, const T& b) { return key(a) < key(b); });
  return values;
}

}  // namespace

void ValidateDraft(const PolicyDraft& draft, Diagnostics* diagnostics) {
  CheckUniqueNames(draft.flavors, diagnostics);
  CheckUniqueNames(draft.cluster_queues, diagnostics);
  CheckUniqueNames(draft.local_queues, diagnostics);
  CheckUniqueNames(draft.cohorts, diagnostics);
  CheckUniqueNames(draft.priority_classes, diagnostics);
  CheckUniqueNames(draft.admission_checks, diagnostics);
  CheckUniqueNames(draft.provisioning_request_configs, diagnostics);
  CheckUniqueNames(draft.topologies, diagnostics);
  CheckSingleConfig(draft, diagnostics);
  CheckKueueConfiguration(draft, diagnostics);
  CheckAllReferences(draft, diagnostics);
  CheckCohortCycles(draft, diagnostics);
  CheckFairSharingPreemption(draft, diagnostics);
}

Policy BuildPolicy(PolicyDraft draft) {
  auto by_name = [](const auto& object) { return object.name; };
  Policy policy;
  policy.flavors = SortedValues(draft.flavors, by_name);
  std::vector<Decoded<ClusterQueue>> queues;
  for (DecodedClusterQueue& queue : draft.cluster_queues) {
    queues.push_back(std::move(queue));
  }
  policy.cluster_queues = SortedValues(queues, by_name);
  policy.local_queues =
      SortedValues(draft.local_queues, [](const LocalQueue& queue) {
        return std::pair(queue.namespace_name, queue.name);
      });
  policy.cohorts = SortedValues(draft.cohorts, by_name);
  policy.priority_classes = SortedValues(draft.priority_classes, by_name);
  policy.admission_checks = SortedValues(draft.admission_checks, by_name);
  policy.provisioning_request_configs =
      SortedValues(draft.provisioning_request_configs, by_name);
  policy.topologies = SortedValues(draft.topologies, by_name);
  if (!draft.configs.empty()) policy.config = std::move(draft.configs[0].value);
  ApplyKueueConfiguration(draft, &policy.config);
  return policy;
}

}  // namespace gpusched::policy_internal
