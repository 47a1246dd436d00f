#include "api/codec/visibility_status_json.h"

#include <map>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/codec/json_writer.h"
#include "api/codec/visibility_json.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace {

void WriteTypeMeta(JsonWriter& w, std::string_view kind) {
  w.Key("kind").String(kind).Raw(",");
  w.Key("apiVersion").String(kVisibilityGroupVersion);
}

void WriteOptional(JsonWriter& w, std::string_view key,
                   const std::optional<int64_t>& value) {
  if (value) w.Raw(",").Key(key).Int(*value);
}

// flavorsUsage: the usages (sorted by flavor, then resource) grouped by
// flavor, as Kueue's ClusterQueue status groups them.
void WriteFlavorsUsage(JsonWriter& w, const std::vector<QuotaUsage>& usage) {
  w.Key("flavorsUsage").Raw("[");
  for (size_t i = 0; i < usage.size(); ++i) {
    const QuotaUsage& u = usage[i];
    const bool first_of_flavor =
        i == 0 || usage[i - 1].fr.flavor != u.fr.flavor;
    if (first_of_flavor) {
      if (i > 0) w.Raw("]},");
      w.Raw("{").Key("name").String(u.fr.flavor).Raw(",");
      w.Key("resources").Raw("[");
    } else {
      w.Raw(",");
    }
    w.Raw("{").Key("name").String(u.fr.resource).Raw(",");
    w.Key("nominal").Int(u.nominal).Raw(",").Key("used").Int(u.used).Raw(",");
    w.Key("borrowed").Int(u.borrowed).Raw(",").Key("lent").Int(u.lent);
    WriteOptional(w, "borrowingLimit", u.borrowing_limit);
    WriteOptional(w, "lendingLimit", u.lending_limit);
    w.Raw("}");
  }
  w.Raw(usage.empty() ? "]" : "]}]");
}

void WriteClusterQueueStatus(JsonWriter& w, const ClusterQueueView& queue) {
  w.Raw("{").Key("cohort").String(queue.cohort).Raw(",");
  w.Key("pendingWorkloads").Int(static_cast<int64_t>(queue.pending.size()));
  w.Raw(",").Key("admittedWorkloads");
  w.Int(static_cast<int64_t>(queue.admitted.size())).Raw(",");
  WriteFlavorsUsage(w, queue.quota);
  w.Raw("}");
}

void WriteLocalQueueStatus(JsonWriter& w, const LocalQueueView& queue) {
  w.Raw("{").Key("clusterQueue").String(queue.cluster_queue).Raw(",");
  w.Key("pendingWorkloads").Int(static_cast<int64_t>(queue.pending)).Raw(",");
  w.Key("admittedWorkloads").Int(static_cast<int64_t>(queue.admitted));
  w.Raw("}");
}

template <typename Items, typename WriteItem>
std::string ListOf(std::string_view kind, const Items& items,
                   WriteItem write_item) {
  JsonWriter w;
  w.Raw("{");
  WriteTypeMeta(w, kind);
  w.Raw(",").Key("metadata").Raw("{},").Key("items").Raw("[");
  bool first = true;
  for (const auto& item : items) {
    if (!first) w.Raw(",");
    first = false;
    write_item(w, item);
  }
  w.Raw("]}");
  return w.Take();
}

std::string_view StateName(WorkloadExplanation::State state) {
  switch (state) {
    case WorkloadExplanation::State::kPending:
      return "Pending";
    case WorkloadExplanation::State::kAdmitted:
      return "Admitted";
    case WorkloadExplanation::State::kFinished:
      return "Finished";
  }
  return "Pending";
}

void WriteQuotaLevel(JsonWriter& w, const QuotaLevel& level) {
  w.Raw("{").Key("level").String(level.node).Raw(",");
  w.Key("cohort").Bool(level.cohort).Raw(",");
  w.Key("flavor").String(level.fr.flavor).Raw(",");
  w.Key("resource").String(level.fr.resource).Raw(",");
  w.Key("nominal").Int(level.nominal).Raw(",").Key("used").Int(level.used);
  w.Raw(",").Key("borrowed").Int(level.borrowed).Raw(",");
  w.Key("available").Int(level.available).Raw(",");
  w.Key("mostEver").Int(level.most_ever);
  WriteOptional(w, "borrowingLimit", level.borrowing_limit);
  w.Raw(",").Key("asks").Int(level.asks).Raw("}");
}

// "key":["a","b"]
void WriteStrings(JsonWriter& w, std::string_view key,
                  const std::vector<std::string>& texts) {
  w.Key(key).Raw("[");
  for (size_t i = 0; i < texts.size(); ++i) {
    if (i > 0) w.Raw(",");
    w.String(texts[i]);
  }
  w.Raw("]");
}

void WriteNodeGroup(JsonWriter& w, const NodeGroup& group) {
  w.Raw("{").Key("verdict").String(group.verdict).Raw(",");
  w.Key("nodes").Int(group.nodes).Raw(",");
  WriteStrings(w, "examples", group.examples);
  if (!group.dra.empty()) w.Raw(",").Key("dra").String(group.dra);
  w.Raw("}");
}

void WriteDraRequest(JsonWriter& w, const DraRequestLine& r) {
  w.Raw("{").Key("claim").String(r.claim).Raw(",");
  w.Key("request").String(r.request).Raw(",");
  w.Key("deviceClass").String(r.device_class).Raw(",");
  w.Key("count").Int(r.count).Raw(",");
  WriteStrings(w, "selectors", r.selectors);
  const bool ours = r.left_to_kube_scheduler.empty();
  w.Raw(",").Key("checkedBy").String(ours ? "gpusched" : "kube-scheduler");
  if (!ours) w.Raw(",").Key("reason").String(r.left_to_kube_scheduler);
  w.Raw("}");
}

void WriteDraMember(JsonWriter& w, const DraMemberDevices& m) {
  w.Raw("{").Key("pod").String(m.pod).Raw(",");
  w.Key("node").String(m.node).Raw(",");
  WriteStrings(w, "allocated", m.allocated);
  w.Raw(",");
  WriteStrings(w, "claims", m.claims);
  w.Raw(",");
  WriteStrings(w, "planned", m.planned);
  w.Raw("}");
}

// "dra": a workload's claims (scheduler/dra_explain.h).
void WriteDra(JsonWriter& w, const DraExplanation& dra) {
  w.Raw(",").Key("dra").Raw("{").Key("pod").String(dra.pod).Raw(",");
  w.Key("requests").Raw("[");
  for (size_t i = 0; i < dra.requests.size(); ++i) {
    if (i > 0) w.Raw(",");
    WriteDraRequest(w, dra.requests[i]);
  }
  w.Raw("],");
  WriteStrings(w, "allocatedClaims", dra.allocated_claims);
  w.Raw(",").Key("allocatedNode").String(dra.allocated_node).Raw(",");
  WriteStrings(w, "missing", dra.missing);
  w.Raw(",").Key("charged").Raw("[");
  bool first = true;
  for (const auto& [resource, amount] : dra.charged.entries()) {
    w.Raw(first ? "{" : ",{").Key("resource").String(resource).Raw(",");
    w.Key("amount").Int(amount).Raw("}");
    first = false;
  }
  w.Raw("],");
  WriteStrings(w, "uncharged", dra.uncharged);
  if (!dra.held.empty()) w.Raw(",").Key("held").String(dra.held);
  w.Raw(",").Key("members").Raw("[");
  for (size_t i = 0; i < dra.members.size(); ++i) {
    if (i > 0) w.Raw(",");
    WriteDraMember(w, dra.members[i]);
  }
  w.Raw("]}");
}

void WriteStart(JsonWriter& w, const ExplainAnswer& answer) {
  if (!answer.start) return;
  const ForecastStart& start = *answer.start;
  w.Raw(",").Key("start").Raw("{");
  w.Key("forecastAt").String(Rfc3339(answer.forecast_at_ms));
  if (start.expected_start_ms) {
    w.Raw(",").Key("expected").String(Rfc3339(*start.expected_start_ms));
  }
  if (start.latest_start_ms) {
    w.Raw(",").Key("latest").String(Rfc3339(*start.latest_start_ms));
  }
  if (!start.expected_start_ms) {
    w.Raw(",").Key("unknownReason").String(start.why_unknown);
  }
  w.Raw("}");
}

// The dry run in one sentence, naming victims of the workload's own
// namespace only (the caller may have rights there alone).
std::string DryRunSummary(const PreemptionPreview& p, std::string_view ns,
                          std::string_view cluster_queue) {
  using Verdict = PreemptionPreview::Verdict;
  switch (p.verdict) {
    case Verdict::kNotAllowed:
      return absl::StrCat("no: ClusterQueue ", Sv(cluster_queue),
                          " never preempts (its preemption policy)");
    case Verdict::kNoCandidates:
      return "no: nothing running may be preempted for it (its policy "
             "allows no victim among the workloads that hold what it needs)";
    case Verdict::kCannotFit:
      return "no: it would not fit even with every candidate evicted";
    case Verdict::kBlockedByBudget:
      return absl::StrCat("not now: ", p.reason);
    case Verdict::kFitsWithout:
      return "not needed: it fits without evicting anyone";
    case Verdict::kWouldEvict:
      break;
  }
  std::vector<std::string> named;
  std::map<std::string, int> others;  // by ClusterQueue
  for (const PreemptionPreview::Victim& v : p.victims) {
    if (v.namespace_name == ns) {
      named.push_back(absl::StrCat(v.key, " (priority ", v.priority, ")"));
    } else {
      ++others[v.cluster_queue];
    }
  }
  for (const auto& [queue, count] : others) {
    named.push_back(absl::StrCat(count, " of another namespace (ClusterQueue ",
                                 queue, ")"));
  }
  return absl::StrCat("yes: evicting ", p.victims.size(),
                      p.victims.size() == 1 ? " workload" : " workloads",
                      " admits it: ", absl::StrJoin(named, ", "));
}

void WritePreemptionDryRun(JsonWriter& w, const PreemptionPreview& p,
                           std::string_view ns,
                           std::string_view cluster_queue) {
  w.Raw(",").Key("preemptionDryRun").Raw("{");
  w.Key("verdict").String(PreemptionVerdictName(p.verdict));
  w.Raw(",").Key("summary").String(DryRunSummary(p, ns, cluster_queue));
  w.Raw(",").Key("victims").Raw("[");
  for (size_t i = 0; i < p.victims.size(); ++i) {
    const PreemptionPreview::Victim& v = p.victims[i];
    w.Raw(i > 0 ? ",{" : "{");
    if (v.namespace_name == ns) {
      w.Key("namespace").String(v.namespace_name).Raw(",");
      w.Key("name").String(v.key.substr(v.namespace_name.size() + 1)).Raw(",");
      w.Key("reason").String(v.reason).Raw(",");
    }
    w.Key("clusterQueue").String(v.cluster_queue);
    w.Raw(",").Key("priority").Int(v.priority).Raw("}");
  }
  w.Raw("]}");
}

void WriteAhead(JsonWriter& w, const std::vector<AheadWorkload>& ahead) {
  w.Raw(",").Key("ahead").Raw("[");
  for (size_t i = 0; i < ahead.size(); ++i) {
    const AheadWorkload& a = ahead[i];
    w.Raw(i > 0 ? ",{" : "{");
    if (!a.namespace_name.empty()) {
      w.Key("namespace").String(a.namespace_name).Raw(",");
      w.Key("name").String(a.name).Raw(",");
    }
    w.Key("positionInClusterQueue")
        .Int(static_cast<int64_t>(a.position_in_cluster_queue));
    w.Raw(",").Key("reasonCode").String(ReasonCodeName(a.code));
    if (a.expected_start_ms) {
      w.Raw(",").Key("expectedStart").String(Rfc3339(*a.expected_start_ms));
    }
    w.Raw("}");
  }
  w.Raw("]");
}

void WritePositions(JsonWriter& w, const WorkloadExplanation& e) {
  w.Key("positionInClusterQueue")
      .Int(static_cast<int64_t>(e.position_in_cluster_queue));
  w.Raw(",").Key("pendingInClusterQueue");
  w.Int(static_cast<int64_t>(e.pending_in_cluster_queue)).Raw(",");
  w.Key("positionInLocalQueue")
      .Int(static_cast<int64_t>(e.position_in_local_queue));
  w.Raw(",").Key("pendingInLocalQueue");
  w.Int(static_cast<int64_t>(e.pending_in_local_queue));
}

}  // namespace

std::string EncodeClusterQueueStatus(const ClusterQueueView& queue) {
  JsonWriter w;
  WriteClusterQueueStatus(w, queue);
  return w.Take();
}

std::string EncodeLocalQueueStatus(const LocalQueueView& queue) {
  JsonWriter w;
  WriteLocalQueueStatus(w, queue);
  return w.Take();
}

std::string EncodeClusterQueueList(
    const std::vector<ClusterQueueView>& queues) {
  return ListOf("ClusterQueueList", queues,
                [](JsonWriter& w, const ClusterQueueView& q) {
                  w.Raw("{");
                  WriteTypeMeta(w, "ClusterQueue");
                  w.Raw(",").Key("metadata").Raw("{").Key("name");
                  w.String(q.name).Raw("},").Key("status");
                  WriteClusterQueueStatus(w, q);
                  w.Raw("}");
                });
}

std::string EncodeCohortList(const std::vector<CohortView>& cohorts) {
  return ListOf("CohortList", cohorts, [](JsonWriter& w, const CohortView& c) {
    w.Raw("{");
    WriteTypeMeta(w, "Cohort");
    w.Raw(",").Key("metadata").Raw("{").Key("name").String(c.name);
    w.Raw("},").Key("status").Raw("{").Key("parent").String(c.parent);
    w.Raw(",");
    WriteFlavorsUsage(w, c.quota);
    w.Raw("}}");
  });
}

std::string EncodeLocalQueueList(
    const std::vector<const LocalQueueView*>& queues) {
  return ListOf("LocalQueueList", queues,
                [](JsonWriter& w, const LocalQueueView* q) {
                  w.Raw("{");
                  WriteTypeMeta(w, "LocalQueue");
                  w.Raw(",").Key("metadata").Raw("{").Key("name");
                  w.String(q->name).Raw(",").Key("namespace");
                  w.String(q->namespace_name).Raw("},").Key("status");
                  WriteLocalQueueStatus(w, *q);
                  w.Raw("}");
                });
}

std::string EncodeWorkloadExplanation(const ExplainAnswer& answer) {
  const WorkloadExplanation& e = answer.explanation;
  JsonWriter w;
  w.Raw("{");
  WriteTypeMeta(w, "WorkloadExplanation");
  w.Raw(",").Key("metadata").Raw("{").Key("name").String(answer.name);
  w.Raw(",").Key("namespace").String(e.namespace_name).Raw("},");
  w.Key("state").String(StateName(e.state)).Raw(",");
  w.Key("localQueue").String(e.local_queue).Raw(",");
  w.Key("clusterQueue").String(e.cluster_queue).Raw(",");
  w.Key("cohort").String(e.cohort).Raw(",");
  WritePositions(w, e);
  w.Raw(",").Key("reasonCode").String(ReasonCodeName(e.code)).Raw(",");
  w.Key("message").String(e.message).Raw(",");
  w.Key("members").Int(e.members).Raw(",").Key("minMember").Int(e.min_member);
  w.Raw(",").Key("quota").Raw("[");
  for (size_t i = 0; i < e.quota.size(); ++i) {
    if (i > 0) w.Raw(",");
    WriteQuotaLevel(w, e.quota[i]);
  }
  w.Raw("],").Key("placement").Raw("[");
  for (size_t i = 0; i < e.placement.size(); ++i) {
    if (i > 0) w.Raw(",");
    WriteNodeGroup(w, e.placement[i]);
  }
  w.Raw("],").Key("preemption").String(e.preemption);
  if (e.preemption_preview) {
    WritePreemptionDryRun(w, *e.preemption_preview, e.namespace_name,
                          e.cluster_queue);
  }
  if (e.dra) WriteDra(w, *e.dra);
  WriteStart(w, answer);
  WriteAhead(w, answer.ahead);
  w.Raw("}");
  return w.Take();
}

}  // namespace gpusched
