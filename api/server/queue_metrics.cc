#include "api/server/queue_metrics.h"

#include <cstdlib>
#include <initializer_list>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "api/server/metrics.h"
#include "scheduler/base/strings.h"

namespace gpusched {

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

using Label = std::pair<std::string_view, std::string_view>;

// `name{k="v",...} value`, the values escaped.
void Sample(std::string& out, std::string_view name,
            std::initializer_list<Label> labels, std::string_view value) {
  out.append(name);
  char separator = '{';
  for (const auto& [key, label_value] : labels) {
    out += separator;
    out.append(key);
    out.append("=\"");
    out.append(EscapeLabelValue(label_value));
    out += '"';
    separator = ',';
  }
  if (labels.size() > 0) out += '}';
  out += ' ';
  out.append(value);
  out += '\n';
}

void RenderPending(const QueueView& view, std::string& out) {
  AppendMetricHeader(out, "gpusched_pending_workloads", "gauge",
                     "Pending workloads by ClusterQueue and status (active: "
                     "not found unadmittable yet; inadmissible: cannot be "
                     "admitted now).");
  for (const ClusterQueueView& cq : view.cluster_queues) {
    for (PendingStatus status :
         {PendingStatus::kActive, PendingStatus::kInadmissible}) {
      Sample(
          out, "gpusched_pending_workloads",
          {{"cluster_queue", cq.name}, {"status", PendingStatusName(status)}},
          absl::StrCat(cq.PendingWith(status)));
    }
  }
  AppendMetricHeader(out, "gpusched_local_queue_pending_workloads", "gauge",
                     "Pending workloads by LocalQueue.");
  for (const LocalQueueView& lq : view.local_queues) {
    Sample(out, "gpusched_local_queue_pending_workloads",
           {{"namespace", lq.namespace_name}, {"local_queue", lq.name}},
           absl::StrCat(lq.pending));
  }
  AppendMetricHeader(out, "gpusched_admitted_active_workloads", "gauge",
                     "Admitted workloads that hold quota, by ClusterQueue.");
  for (const ClusterQueueView& cq : view.cluster_queues) {
    Sample(out, "gpusched_admitted_active_workloads",
           {{"cluster_queue", cq.name}}, absl::StrCat(cq.admitted.size()));
  }
}

// One gauge of a quota line; nullopt leaves the line out (no limit set).
struct QuotaGauge {
  std::string_view suffix;
  std::string_view help;
  std::optional<int64_t> (*value)(const QuotaUsage&);
};

// Usage and reservation are the same number here: Kueue's reservation is
// the quota of workloads that hold a reservation, its usage that of those
// admitted (their admission checks passed too). gpusched has no admission
// checks, so a reservation is an admission. Usage by bound members only
// cannot be told apart either: a workload is charged whole (a Volcano
// gang's minResources may exceed its pods), not per member.
constexpr QuotaGauge kQuotaGauges[] = {
    {"nominal_quota", "Nominal quota.",
     [](const QuotaUsage& q) { return std::optional(q.nominal); }},
    {"resource_reservation", "Quota held by admitted workloads.",
     [](const QuotaUsage& q) { return std::optional(q.used); }},
    {"resource_usage",
     "Quota used by admitted workloads (equal to the reservation: gpusched "
     "has no admission checks).",
     [](const QuotaUsage& q) { return std::optional(q.used); }},
    {"borrowed", "Quota used beyond nominal, taken from the cohort.",
     [](const QuotaUsage& q) { return std::optional(q.borrowed); }},
    {"lent", "Unused nominal quota the cohort's borrowers use now.",
     [](const QuotaUsage& q) { return std::optional(q.lent); }},
    {"borrowing_limit", "Most quota that may be borrowed (when limited).",
     [](const QuotaUsage& q) { return q.borrowing_limit; }},
    {"lending_limit", "Most nominal quota that may be lent (when limited).",
     [](const QuotaUsage& q) { return q.lending_limit; }},
};

// A quota amount in the resource's base unit, as Kueue exports it: the
// quota tree counts CPU in millicores, Prometheus users read cores.
std::string QuotaAmount(std::string_view resource, int64_t amount) {
  if (resource != "cpu") return absl::StrCat(amount);
  const int64_t cores = amount / 1000, milli = amount % 1000;
  if (milli == 0) return absl::StrCat(cores);
  return absl::StrFormat("%s%d.%03d", amount < 0 ? "-" : "", std::abs(cores),
                         std::abs(milli));
}

// gpusched_<owner_kind>_<suffix>{<owner_kind>,flavor,resource} for each
// owner (ClusterQueues or cohorts) that has quota lines.
template <typename Owner>
void RenderQuota(const std::vector<Owner>& owners, std::string_view owner_kind,
                 std::string& out) {
  for (const QuotaGauge& gauge : kQuotaGauges) {
    const std::string name =
        absl::StrCat("gpusched_", Sv(owner_kind), "_", Sv(gauge.suffix));
    AppendMetricHeader(out, name, "gauge",
                       absl::StrCat(Sv(gauge.help), " By ", Sv(owner_kind),
                                    ", flavor and resource."));
    for (const Owner& owner : owners) {
      for (const QuotaUsage& q : owner.quota) {
        const std::optional<int64_t> value = gauge.value(q);
        if (!value) continue;
        Sample(out, name,
               {{owner_kind, owner.name},
                {"flavor", q.fr.flavor},
                {"resource", q.fr.resource}},
               QuotaAmount(q.fr.resource, *value));
      }
    }
  }
}

void RenderReasonCounter(const std::map<QueueReason, uint64_t>& counts,
                         std::string_view name, std::string_view queue_label,
                         std::string_view help, std::string& out) {
  AppendMetricHeader(out, name, "counter", help);
  for (const auto& [key, n] : counts) {
    Sample(out, name, {{queue_label, key.first}, {"reason", key.second}},
           absl::StrCat(n));
  }
}

void RenderWait(const std::map<std::string, WaitHistogram>& wait,
                std::string& out) {
  constexpr std::string_view kName = "gpusched_admission_wait_time_seconds";
  AppendMetricHeader(out, kName, "histogram",
                     "Time from pending (queued, or requeued after an "
                     "eviction) to admitted, by ClusterQueue.");
  const std::string bucket = absl::StrCat(Sv(kName), "_bucket");
  for (const auto& [cq, h] : wait) {
    for (size_t i = 0; i < h.buckets.size(); ++i) {
      Sample(out, bucket,
             {{"cluster_queue", cq},
              {"le", absl::StrFormat("%g", kAdmissionWaitBuckets[i])}},
             absl::StrCat(h.buckets[i]));
    }
    Sample(out, bucket, {{"cluster_queue", cq}, {"le", "+Inf"}},
           absl::StrCat(h.count));
    Sample(out, absl::StrCat(Sv(kName), "_sum"), {{"cluster_queue", cq}},
           absl::StrFormat("%.3f", h.sum_seconds));
    Sample(out, absl::StrCat(Sv(kName), "_count"), {{"cluster_queue", cq}},
           absl::StrCat(h.count));
  }
}

void RenderCounts(const QueueEventCounts& counts, std::string& out) {
  AppendMetricHeader(out, "gpusched_admitted_workloads_total", "counter",
                     "Workloads admitted, by ClusterQueue.");
  for (const auto& [cq, n] : counts.admitted) {
    Sample(out, "gpusched_admitted_workloads_total", {{"cluster_queue", cq}},
           absl::StrCat(n));
  }
  RenderReasonCounter(counts.evicted, "gpusched_evicted_workloads_total",
                      "cluster_queue",
                      "Admitted workloads evicted, by their ClusterQueue and "
                      "reason (Preempted, PodsReadyTimeout, Evicted).",
                      out);
  RenderReasonCounter(counts.preempted, "gpusched_preempted_workloads_total",
                      "preempting_cluster_queue",
                      "Workloads preempted, by the preemptor's ClusterQueue "
                      "and Kueue's preemption reason.",
                      out);
  RenderWait(counts.wait, out);
}

// Every queue of the view gets its counter series at 0 before anything
// happened, so rate() and increase() see the first event as an increase
// and a dashboard shows 0, not "no data". Queues gone from the policy keep
// theirs: a counter does not vanish while the process lives.
QueueEventCounts WithZeros(const QueueView& view, QueueEventCounts counts) {
  for (const ClusterQueueView& cq : view.cluster_queues) {
    counts.admitted.try_emplace(cq.name, 0);
    counts.wait.try_emplace(cq.name);
    for (std::string_view reason : kEvictionReasons) {
      counts.evicted.try_emplace({cq.name, std::string(reason)}, 0);
    }
    for (std::string_view reason : kPreemptionReasons) {
      counts.preempted.try_emplace({cq.name, std::string(reason)}, 0);
    }
  }
  return counts;
}

}  // namespace

void AppendQueueMetrics(const QueueView& view, const QueueEventCounts& counts,
                        std::string& out) {
  RenderPending(view, out);
  RenderQuota(view.cluster_queues, "cluster_queue", out);
  RenderQuota(view.cohorts, "cohort", out);
  RenderCounts(WithZeros(view, counts), out);
}

void AppendGpuRatios(const std::vector<GpuModelUsage>& usage,
                     std::string& out) {
  AppendMetricHeader(out, "gpusched_gpu_allocation_ratio", "gauge",
                     "Share of healthy whole GPUs allocated, by GPU model.");
  for (const GpuModelUsage& u : usage) {
    Sample(out, "gpusched_gpu_allocation_ratio", {{"gpu_model", u.model}},
           absl::StrFormat("%.6f", u.AllocationRatio()));
  }
  AppendMetricHeader(out, "gpusched_gpu_fragmentation_ratio", "gauge",
                     "Share of free GPU capacity the typical task shapes "
                     "cannot use (FGD's fragment measure), by GPU model.");
  for (const GpuModelUsage& u : usage) {
    Sample(out, "gpusched_gpu_fragmentation_ratio", {{"gpu_model", u.model}},
           absl::StrFormat("%.6f", u.FragmentationRatio()));
  }
}

}  // namespace gpusched
