#ifndef GPUSCHED_TESTS_POLICIES_POLICY_DUMP_H_
#define GPUSCHED_TESTS_POLICIES_POLICY_DUMP_H_

// Every field of a Policy as text, one per line, so that tests compare
// whole policies and a failure shows the differing lines.

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "queueing/policy.h"

namespace gpusched::testing {

inline std::string Opt(const std::optional<int64_t>& v) {
  return v ? absl::StrCat(*v) : "unset";
}

inline void DumpGroups(const std::vector<ResourceGroup>& groups,
                       std::string* out) {
  for (const ResourceGroup& g : groups) {
    absl::StrAppend(out, "  group [", absl::StrJoin(g.covered_resources, ","),
                    "]\n");
    for (const FlavorQuotas& f : g.flavors) {
      absl::StrAppend(out, "    flavor ", f.flavor, "\n");
      for (const ResourceQuota& r : f.resources) {
        absl::StrAppend(out, "      ", r.name, " nominal=", r.nominal,
                        " borrow=", Opt(r.borrowing_limit),
                        " lend=", Opt(r.lending_limit), "\n");
      }
    }
  }
}

inline void DumpSelector(const std::optional<LabelSelector>& s,
                         std::string* out) {
  if (!s) {
    absl::StrAppend(out, "  selector unset\n");
    return;
  }
  absl::StrAppend(out, "  selector labels={");
  for (const auto& [k, v] : s->match_labels)
    absl::StrAppend(out, k, "=", v, ";");
  absl::StrAppend(out, "} exprs={");
  for (const auto& e : s->match_expressions) {
    absl::StrAppend(out, e.key, " ", e.op, " [", absl::StrJoin(e.values, ","),
                    "];");
  }
  absl::StrAppend(out, "}\n");
}

inline void DumpQueue(const ClusterQueue& q, std::string* out) {
  absl::StrAppend(out, "ClusterQueue ", q.name, " cohort=", q.cohort,
                  " strategy=", static_cast<int>(q.queueing_strategy),
                  " weight=", q.fair_weight_milli, "\n");
  DumpSelector(q.namespace_selector, out);
  const PreemptionPolicy& p = q.preemption;
  absl::StrAppend(
      out, "  preemption within=", static_cast<int>(p.within_cluster_queue),
      " reclaim=", static_cast<int>(p.reclaim_within_cohort),
      " borrow=", static_cast<int>(p.borrow_within_cohort), " threshold=",
      p.max_priority_threshold ? absl::StrCat(*p.max_priority_threshold)
                               : "unset",
      "\n");
  DumpGroups(q.resource_groups, out);
}

inline void DumpFlavor(const ResourceFlavor& f, std::string* out) {
  absl::StrAppend(out, "ResourceFlavor ", f.name, "\n");
  for (const auto& [k, v] : f.node_labels) {
    absl::StrAppend(out, "  label ", k, "=", v, "\n");
  }
  for (const Taint& t : f.node_taints) {
    absl::StrAppend(out, "  taint ", t.key, "=", t.value, ":", t.effect, "\n");
  }
  for (const Toleration& t : f.tolerations) {
    absl::StrAppend(out, "  toleration ", t.key, " ", t.op, " ", t.value, ":",
                    t.effect, "\n");
  }
  if (!f.topology_name.empty()) {
    absl::StrAppend(out, "  topology ", f.topology_name, "\n");
  }
}

inline void DumpConfig(const SchedulerConfig& c, std::string* out) {
  absl::StrAppend(
      out, "SchedulerConfig fair=", c.fair_sharing, " strategies=",
      absl::StrJoin(c.preemption_strategies, ",",
                    [](std::string* out, auto strategy) {
                      out->append(FairPreemptionStrategyName(strategy));
                    }),
      " admission=", c.gang_admission_timeout_ms,
      " backoff=", c.gang_backoff_base_ms, "..", c.gang_backoff_max_ms,
      " stale=", c.stale_gang_grace_ms, " starvation=", c.starvation_timeout_ms,
      " min_runtime=", c.preemption_minimum_runtime_ms, "\n");
  absl::StrAppend(out, "  scoring");
  for (const auto& [name, w] : c.scoring)
    absl::StrAppend(out, " ", name, "=", w);
  absl::StrAppend(out, "\n  levels ", absl::StrJoin(c.topology_levels, ","),
                  "\n");
  for (const DeviceClassMapping& mapping : c.device_class_mappings) {
    absl::StrAppend(out, "  classes ",
                    absl::StrJoin(mapping.device_classes, ","), " -> ",
                    mapping.resource, "\n");
  }
}

inline std::string Dump(const Policy& p) {
  std::string out;
  for (const ResourceFlavor& f : p.flavors) DumpFlavor(f, &out);
  for (const Topology& t : p.topologies) {
    absl::StrAppend(&out, "Topology ", t.name, " ",
                    absl::StrJoin(t.levels, ","), "\n");
  }
  for (const ClusterQueue& q : p.cluster_queues) DumpQueue(q, &out);
  for (const LocalQueue& q : p.local_queues) {
    absl::StrAppend(&out, "LocalQueue ", q.namespace_name, "/", q.name, " -> ",
                    q.cluster_queue, " weight=", q.fair_weight_milli, "\n");
  }
  for (const Cohort& c : p.cohorts) {
    absl::StrAppend(&out, "Cohort ", c.name, " parent=", c.parent,
                    " weight=", c.fair_weight_milli, "\n");
    DumpGroups(c.resource_groups, &out);
  }
  for (const WorkloadPriorityClass& c : p.priority_classes) {
    absl::StrAppend(&out, "WorkloadPriorityClass ", c.name, "=", c.value, "\n");
  }
  DumpConfig(p.config, &out);
  return out;
}

}  // namespace gpusched::testing

#endif  // GPUSCHED_TESTS_POLICIES_POLICY_DUMP_H_
