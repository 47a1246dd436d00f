// PolicySummary: the tables `gpusched validate` prints for a valid policy.

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "policies/policy_loader.h"
#include "policies/value_parsers.h"
#include "scheduler/base/strings.h"
#include "scheduler/resource_list.h"

namespace gpusched {
namespace {

using policy_internal::FormatDurationMs;

// Left-aligned columns two spaces apart, like kubectl get.
class Table {
 public:
  explicit Table(std::vector<std::string> header) {
    rows_.push_back(std::move(header));
  }
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

  std::string Render() const {
    std::vector<size_t> widths(rows_[0].size(), 0);
    for (const auto& row : rows_) {
      for (size_t i = 0; i < row.size(); ++i) {
        widths[i] = std::max(widths[i], row[i].size());
      }
    }
    std::string out;
    for (const auto& row : rows_) {
      std::string line = " ";
      for (size_t i = 0; i < row.size(); ++i) {
        absl::StrAppend(&line, " ", row[i]);
        if (i + 1 < row.size()) line.append(widths[i] - row[i].size() + 1, ' ');
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      absl::StrAppend(&out, line, "\n");
    }
    return out;
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

std::string Weight(int64_t milli) {
  std::string out = absl::StrCat(milli / 1000);
  if (milli % 1000 == 0) return out;
  std::string fraction = absl::StrCat(1000 + milli % 1000).substr(1);
  while (fraction.back() == '0') fraction.pop_back();
  return absl::StrCat(out, ".", fraction);
}

std::string Namespaces(const std::optional<LabelSelector>& selector) {
  if (!selector) return "*";
  std::vector<std::string> terms;
  for (const auto& [key, value] : selector->match_labels) {
    terms.push_back(absl::StrCat(key, "=", value));
  }
  for (const NodeSelectorRequirement& r : selector->match_expressions) {
    std::string term = absl::StrCat(r.key, " ", r.op);
    if (!r.values.empty()) {
      absl::StrAppend(&term, " (", absl::StrJoin(r.values, ","), ")");
    }
    terms.push_back(std::move(term));
  }
  return terms.empty() ? "*" : absl::StrJoin(terms, ", ");
}

std::string Preemption(const PreemptionPolicy& p) {
  static constexpr const char* kWithin[] = {"Never", "LowerPriority",
                                            "LowerOrNewerEqualPriority"};
  static constexpr const char* kReclaim[] = {"Never", "LowerPriority", "Any"};
  std::string borrow = p.borrow_within_cohort == BorrowWithinCohort::kNever
                           ? "Never"
                           : "LowerPriority";
  if (p.max_priority_threshold) {
    absl::StrAppend(&borrow, "<=", *p.max_priority_threshold);
  }
  return absl::StrCat(kWithin[static_cast<int>(p.within_cluster_queue)], "/",
                      kReclaim[static_cast<int>(p.reclaim_within_cohort)], "/",
                      borrow);
}

std::string ClusterQueueTable(const Policy& policy) {
  Table table({"CLUSTERQUEUE", "COHORT", "STRATEGY",
               "PREEMPTION (WITHIN/RECLAIM/BORROW)", "WEIGHT", "NAMESPACES"});
  for (const ClusterQueue& q : policy.cluster_queues) {
    table.AddRow({q.name, q.cohort.empty() ? "-" : q.cohort,
                  q.queueing_strategy == QueueingStrategy::kStrictFifo
                      ? "StrictFIFO"
                      : "BestEffortFIFO",
                  Preemption(q.preemption), Weight(q.fair_weight_milli),
                  Namespaces(q.namespace_selector)});
  }
  return table.Render();
}

std::string Limit(const std::string& name, const std::optional<int64_t>& v) {
  return v ? ResourceList::FormatAmount(name, *v) : "-";
}

void AddQuotaRows(const std::string& owner,
                  const std::vector<ResourceGroup>& groups, Table* table) {
  std::string owner_cell = owner;
  for (const ResourceGroup& group : groups) {
    for (const FlavorQuotas& flavor : group.flavors) {
      std::string flavor_cell = flavor.flavor;
      for (const ResourceQuota& r : flavor.resources) {
        table->AddRow(
            {std::exchange(owner_cell, ""), std::exchange(flavor_cell, ""),
             r.name, ResourceList::FormatAmount(r.name, r.nominal),
             Limit(r.name, r.borrowing_limit), Limit(r.name, r.lending_limit)});
      }
    }
  }
}

std::string QuotaTable(const Policy& policy) {
  Table table({"OWNER", "FLAVOR", "RESOURCE", "NOMINAL", "BORROWING-LIMIT",
               "LENDING-LIMIT"});
  for (const ClusterQueue& q : policy.cluster_queues) {
    AddQuotaRows(q.name, q.resource_groups, &table);
  }
  for (const Cohort& c : policy.cohorts) {
    AddQuotaRows(absl::StrCat("cohort/", c.name), c.resource_groups, &table);
  }
  return table.Render();
}

std::string LocalQueueTable(const Policy& policy) {
  Table table({"NAMESPACE", "LOCALQUEUE", "CLUSTERQUEUE"});
  for (const LocalQueue& q : policy.local_queues) {
    table.AddRow({q.namespace_name, q.name, q.cluster_queue});
  }
  return table.Render();
}

// The cohort forest: Cohort objects and implicit cohorts (named by a
// ClusterQueue or a parentName only), each with its cohorts and queues.
class CohortTree {
 public:
  explicit CohortTree(const Policy& policy) {
    for (const Cohort& c : policy.cohorts) {
      defined_[c.name] = &c;
      nodes_.insert(c.name);
      if (!c.parent.empty()) {
        nodes_.insert(c.parent);
        children_[c.parent].insert(c.name);
      }
    }
    for (const ClusterQueue& q : policy.cluster_queues) {
      if (q.cohort.empty()) continue;
      nodes_.insert(q.cohort);
      queues_[q.cohort].push_back(q.name);
    }
  }

  std::string Render() const {
    std::string out;
    std::set<std::string> done;
    for (const std::string& name : nodes_) {
      auto it = defined_.find(name);
      if (it == defined_.end() || it->second->parent.empty()) {
        RenderNode(name, 1, &done, &out);
      }
    }
    return out;
  }

 private:
  void RenderNode(const std::string& name, int depth,
                  std::set<std::string>* done, std::string* out) const {
    if (!done->insert(name).second) return;  // hand-built cycles stop here
    const std::string indent(2 * depth, ' ');
    auto it = defined_.find(name);
    const std::string detail =
        it == defined_.end()
            ? "implicit"
            : absl::StrCat("weight ", Weight(it->second->fair_weight_milli));
    absl::StrAppend(out, indent, "Cohort ", name, " (", detail, ")\n");
    if (auto q = queues_.find(name); q != queues_.end()) {
      for (const std::string& queue : q->second) {
        absl::StrAppend(out, indent, "  ClusterQueue ", queue, "\n");
      }
    }
    if (auto c = children_.find(name); c != children_.end()) {
      for (const std::string& child : c->second) {
        RenderNode(child, depth + 1, done, out);
      }
    }
  }

  std::set<std::string> nodes_;
  std::map<std::string, const Cohort*> defined_;
  std::map<std::string, std::set<std::string>> children_;
  std::map<std::string, std::vector<std::string>> queues_;
};

// "gpu.nvidia.com -> nvidia.com/gpu; ...", or the defaults.
std::string DeviceClassMappingsText(const SchedulerConfig& c) {
  if (c.device_class_mappings.empty()) {
    return "(defaults: gpu.nvidia.com and classes with extendedResourceName)";
  }
  std::vector<std::string> parts;
  bool mapped = false;
  for (const DeviceClassMapping& mapping : c.device_class_mappings) {
    mapped |= !mapping.outside_quota;
    parts.push_back(absl::StrCat(
        absl::StrJoin(mapping.device_classes, ", "), " -> ",
        mapping.outside_quota ? "outside quota" : mapping.resource));
  }
  if (!mapped) {
    parts.push_back(
        "(defaults: gpu.nvidia.com and classes with extendedResourceName)");
  }
  return absl::StrJoin(parts, "; ");
}

// What Kueue's waitForPodsReady adds to the gang timers, only when set.
std::string RequeuingText(const SchedulerConfig& c) {
  std::string text;
  if (c.gang_backoff_limit_count) {
    absl::StrAppend(&text, ", backoffLimitCount ", *c.gang_backoff_limit_count);
  }
  if (c.requeuing_timestamp == RequeuingTimestamp::kEviction) {
    absl::StrAppend(&text, ", requeued by eviction time");
  }
  return text;
}

std::string ConfigText(const SchedulerConfig& c) {
  std::vector<std::string> scoring;
  for (const auto& [name, weight] : c.scoring) {
    scoring.push_back(absl::StrCat(name, "=", weight));
  }
  std::vector<std::string> strategies;
  for (FairPreemptionStrategy strategy : c.preemption_strategies) {
    strategies.emplace_back(FairPreemptionStrategyName(strategy));
  }
  return absl::StrCat(
      "  fairSharing: ", c.fair_sharing ? "enabled" : "disabled",
      " (preemptionStrategies ", absl::StrJoin(strategies, ", "),
      ")\n  gang: admissionTimeout ",
      FormatDurationMs(c.gang_admission_timeout_ms), ", backoff ",
      FormatDurationMs(c.gang_backoff_base_ms), " to ",
      FormatDurationMs(c.gang_backoff_max_ms), ", staleGangGracePeriod ",
      c.stale_gang_grace_ms == SchedulerConfig::kNeverEvictShortGang
          ? "never (recoveryTimeout 0s)"
          : FormatDurationMs(c.stale_gang_grace_ms),
      RequeuingText(c), "\n  starvationTimeout ",
      FormatDurationMs(c.starvation_timeout_ms), ", preemption minimumRuntime ",
      FormatDurationMs(c.preemption_minimum_runtime_ms),
      "\n  scoring: ", absl::StrJoin(scoring, ", "), "\n  topologyLevels: ",
      c.topology_levels.empty() ? "(none)"
                                : absl::StrJoin(c.topology_levels, " > "),
      "\n  deviceClassMappings: ", DeviceClassMappingsText(c), "\n");
}

std::string Count(size_t n, std::string_view kind) {
  const char* plural = kind.ends_with("s") ? "es" : "s";
  return absl::StrCat(n, " ", Sv(kind), n == 1 ? "" : plural);
}

std::string Counts(const Policy& p) {
  return absl::StrJoin(
      {Count(p.cluster_queues.size(), "ClusterQueue"),
       Count(p.local_queues.size(), "LocalQueue"),
       Count(p.cohorts.size(), "Cohort"),
       Count(p.flavors.size(), "ResourceFlavor"),
       Count(p.priority_classes.size(), "WorkloadPriorityClass")},
      ", ");
}

// Each admission check with its ProvisioningRequestConfig and the
// ClusterQueues that name it (onFlavors in brackets).
std::string AdmissionCheckTable(const Policy& policy) {
  Table table({"ADMISSIONCHECK", "PROVISIONINGREQUESTCONFIG", "CLASS",
               "RETRY (LIMIT/BASE/MAX)", "CLUSTERQUEUES"});
  for (const AdmissionCheck& check : policy.admission_checks) {
    std::vector<std::string> queues;
    for (const ClusterQueue& cq : policy.cluster_queues) {
      for (const AdmissionCheckRule& rule : cq.admission_checks) {
        if (rule.name != check.name) continue;
        queues.push_back(rule.on_flavors.empty()
                             ? cq.name
                             : absl::StrCat(cq.name, " [",
                                            absl::StrJoin(rule.on_flavors, ","),
                                            "]"));
      }
    }
    std::string class_name = "-", retry = "-";
    for (const ProvisioningRequestConfig& c :
         policy.provisioning_request_configs) {
      if (c.name != check.provisioning_request_config) continue;
      class_name = c.provisioning_class_name;
      retry = absl::StrCat(c.retry_strategy.backoff_limit_count, "/",
                           c.retry_strategy.backoff_base_seconds, "s/",
                           c.retry_strategy.backoff_max_seconds, "s");
    }
    table.AddRow({check.name, check.provisioning_request_config, class_name,
                  retry, queues.empty() ? "-" : absl::StrJoin(queues, ", ")});
  }
  return table.Render();
}

// Each Topology's levels, widest first, and the flavors that name it.
std::string TopologyTable(const Policy& p) {
  Table table({"TOPOLOGY", "LEVELS", "FLAVORS"});
  for (const Topology& topology : p.topologies) {
    std::vector<std::string> flavors;
    for (const ResourceFlavor& f : p.flavors) {
      if (f.topology_name == topology.name) flavors.push_back(f.name);
    }
    table.AddRow({topology.name, absl::StrJoin(topology.levels, " > "),
                  flavors.empty() ? "-" : absl::StrJoin(flavors, ", ")});
  }
  return table.Render();
}

bool HasQuotas(const Policy& p) {
  for (const Cohort& c : p.cohorts) {
    if (!c.resource_groups.empty()) return true;
  }
  return !p.cluster_queues.empty();
}

}  // namespace

std::string PolicySummary(const Policy& policy) {
  std::string out = absl::StrCat("Policy: ", Counts(policy), "\n");
  if (!policy.cluster_queues.empty()) {
    absl::StrAppend(&out, "\nClusterQueues:\n", ClusterQueueTable(policy));
  }
  if (HasQuotas(policy)) {
    absl::StrAppend(&out,
                    "\nQuotas (limit \"-\": borrow up to what the cohort "
                    "lends; lend all unused quota):\n",
                    QuotaTable(policy));
  }
  if (!policy.local_queues.empty()) {
    absl::StrAppend(&out, "\nLocalQueues:\n", LocalQueueTable(policy));
  }
  const std::string tree = CohortTree(policy).Render();
  if (!tree.empty()) absl::StrAppend(&out, "\nCohorts:\n", tree);
  if (!policy.priority_classes.empty()) {
    Table table({"WORKLOADPRIORITYCLASS", "VALUE"});
    for (const WorkloadPriorityClass& c : policy.priority_classes) {
      table.AddRow({c.name, absl::StrCat(c.value)});
    }
    absl::StrAppend(&out, "\nWorkloadPriorityClasses:\n", table.Render());
  }
  if (!policy.admission_checks.empty()) {
    absl::StrAppend(&out, "\nAdmissionChecks:\n", AdmissionCheckTable(policy));
  }
  if (!policy.topologies.empty()) {
    absl::StrAppend(&out, "\nTopologies:\n", TopologyTable(policy));
  }
  absl::StrAppend(&out, "\nSchedulerConfig:\n", ConfigText(policy.config));
  return out;
}

}  // namespace gpusched
