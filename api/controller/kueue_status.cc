#include "api/controller/kueue_status.h"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "scheduler/base/strings.h"
#include "spdlog/spdlog.h"

namespace gpusched {
namespace {

constexpr char kApi[] = "/apis/kueue.x-k8s.io/v1beta2/";

// FrAmounts-like usage into Kueue's flavor list, flavors and resources in
// the quota's order (FlavorResource order: by flavor, then resource).
std::vector<KueueFlavorUsage> UsageOf(const std::vector<QuotaUsage>& quota) {
  std::vector<KueueFlavorUsage> out;
  for (const QuotaUsage& q : quota) {
    if (out.empty() || out.back().flavor != q.fr.flavor) {
      out.push_back({.flavor = q.fr.flavor});
    }
    out.back().resources.push_back(
        {.resource = q.fr.resource, .total = q.used, .borrowed = q.borrowed});
  }
  return out;
}

// Adds the quota reserved for admission checks by the pending workloads
// (`local_queue` "": all of them) to `lines`.
void AddReserved(const ClusterQueueView& queue, const LocalQueueView* local,
                 std::map<FlavorResource, int64_t>& lines) {
  for (const PendingWorkload& w : queue.pending) {
    if (local != nullptr && (w.local_queue != local->name ||
                             w.namespace_name != local->namespace_name)) {
      continue;
    }
    for (const auto& [fr, amount] : w.reserved) lines[fr] += amount;
  }
}

// Kueue's flavorsReservation of a ClusterQueue: admitted usage and the
// quota reserved for checks, borrowed what goes past nominal.
std::vector<KueueFlavorUsage> ReservationOf(const ClusterQueueView& queue) {
  std::map<FlavorResource, int64_t> reserved;
  AddReserved(queue, nullptr, reserved);
  std::vector<QuotaUsage> quota = queue.quota;
  for (QuotaUsage& q : quota) {
    auto it = reserved.find(q.fr);
    if (it == reserved.end()) continue;
    q.used += it->second;
    q.borrowed = std::max<int64_t>(0, q.used - q.nominal);
  }
  return UsageOf(quota);
}

// A LocalQueue's share: what its admitted workloads were charged, and,
// `with_reserved`, what its workloads reserved for their checks.
std::vector<KueueFlavorUsage> UsageOf(const ClusterQueueView& queue,
                                      const LocalQueueView& local,
                                      bool with_reserved) {
  std::map<FlavorResource, int64_t> charged;
  for (const QuotaUsage& q : queue.quota) charged[q.fr] = 0;
  for (const AdmittedWorkload& w : queue.admitted) {
    if (w.local_queue != local.name ||
        w.namespace_name != local.namespace_name) {
      continue;
    }
    for (const auto& [fr, amount] : w.charged) charged[fr] += amount;
  }
  if (with_reserved) AddReserved(queue, &local, charged);
  std::vector<QuotaUsage> quota;
  for (const auto& [fr, amount] : charged) {
    quota.push_back({.fr = fr, .used = amount});
  }
  return UsageOf(quota);
}

// Kueue counts a workload holding quota for its admission checks as
// reserving, not pending.
int32_t ReservingOf(const ClusterQueueView& queue) {
  return static_cast<int32_t>(std::count_if(
      queue.pending.begin(), queue.pending.end(),
      [](const PendingWorkload& w) { return !w.reserved.empty(); }));
}

KueueQueueStatus ClusterQueueStatus(
    const ClusterQueueView& queue,
    std::chrono::system_clock::time_point since) {
  const auto admitted = static_cast<int32_t>(queue.admitted.size());
  const int32_t reserved = ReservingOf(queue);
  return KueueQueueStatus{
      .pending = static_cast<int32_t>(queue.pending.size()) - reserved,
      .reserving = admitted + reserved,
      .admitted = admitted,
      .usage = UsageOf(queue.quota),
      .reservation = ReservationOf(queue),
      .weighted_share = queue.weighted_share,
      .condition = {.active = true,
                    .reason = "Ready",
                    .message = "Can admit new workloads",
                    .last_transition = since}};
}

KueueQueueStatus LocalQueueStatus(const LocalQueueView& local,
                                  const ClusterQueueView* queue,
                                  std::chrono::system_clock::time_point since) {
  KueueQueueStatus status{
      .pending = static_cast<int32_t>(local.pending - local.reserving),
      .reserving = static_cast<int32_t>(local.admitted + local.reserving),
      .admitted = static_cast<int32_t>(local.admitted),
      .condition = {.active = true,
                    .reason = "Ready",
                    .message = "Can submit new workloads to localQueue",
                    .last_transition = since}};
  if (queue != nullptr) {
    status.usage = UsageOf(*queue, local, /*with_reserved=*/false);
    status.reservation = UsageOf(*queue, local, /*with_reserved=*/true);
  }
  // The engine's clock is the wall clock, in ms since the epoch.
  if (const std::optional<AfsQueueUsage>& afs = local.admission_fair_sharing) {
    status.admission_fair_sharing =
        KueueAfsStatus{.consumed = afs->consumed,
                       .last_update = std::chrono::system_clock::time_point(
                           std::chrono::milliseconds(afs->last_update_ms))};
  }
  return status;
}

constexpr std::string_view kClusterQueues = "clusterqueues/";
constexpr std::string_view kLocalQueues = "localqueues/";

bool Says(const std::string& message, std::string_view words) {
  return message.find(words) != std::string::npos;
}

// A ClusterQueue left out: Kueue's FlavorNotFound when a flavor is
// missing, else Unknown with gpusched's error.
KueueActiveCondition InactiveClusterQueue(
    const SetAsideDocument& doc, std::chrono::system_clock::time_point since) {
  return {.active = false,
          .reason = Says(doc.message, "no ResourceFlavor of that name")
                        ? "FlavorNotFound"
                        : "Unknown",
          .message = absl::StrCat("Can't admit new workloads: ", doc.message),
          .last_transition = since};
}

// A LocalQueue left out: its ClusterQueue is missing or left out
// (Kueue's two reasons and message), or it has errors of its own.
KueueActiveCondition InactiveLocalQueue(
    const SetAsideDocument& doc, const std::set<std::string>& aside_queues,
    std::chrono::system_clock::time_point since) {
  if (!Says(doc.message, "no ClusterQueue of that name")) {
    return {.active = false,
            .reason = "Unknown",
            .message = doc.message,
            .last_transition = since};
  }
  const size_t quote = doc.message.find("Not found \"");
  std::string queue;
  if (quote != std::string::npos) {
    const size_t from = quote + 11;
    queue = doc.message.substr(from, doc.message.find('"', from) - from);
  }
  return {.active = false,
          .reason = aside_queues.contains(queue) ? "ClusterQueueIsInactive"
                                                 : "ClusterQueueDoesNotExist",
          .message = "Can't submit new workloads to clusterQueue",
          .last_transition = since};
}

void AddSetAside(const std::vector<SetAsideDocument>& set_aside,
                 std::chrono::system_clock::time_point since,
                 KueueStatuses& out) {
  std::set<std::string> aside_queues;
  for (const SetAsideDocument& doc : set_aside) {
    if (doc.name.starts_with(kClusterQueues)) {
      aside_queues.insert(doc.name.substr(kClusterQueues.size()));
    }
  }
  for (const SetAsideDocument& doc : set_aside) {
    if (doc.name.starts_with(kClusterQueues)) {
      out.cluster_queues[doc.name.substr(kClusterQueues.size())] = {
          .condition = InactiveClusterQueue(doc, since)};
    } else if (doc.name.starts_with(kLocalQueues)) {
      out.local_queues[doc.name.substr(kLocalQueues.size())] = {
          .condition = InactiveLocalQueue(doc, aside_queues, since)};
    }
  }
}

}  // namespace

KueueStatuses KueueStatusesOf(const QueueView& view,
                              std::chrono::system_clock::time_point since,
                              const std::vector<SetAsideDocument>& set_aside) {
  KueueStatuses out;
  AddSetAside(set_aside, since, out);
  for (const ClusterQueueView& queue : view.cluster_queues) {
    out.cluster_queues[queue.name] = ClusterQueueStatus(queue, since);
  }
  for (const LocalQueueView& local : view.local_queues) {
    out.local_queues[absl::StrCat(local.namespace_name, "/", local.name)] =
        LocalQueueStatus(local, view.FindClusterQueue(local.cluster_queue),
                         since);
  }
  return out;
}

void KueueStatusPublisher::Publish(
    const QueueView& view, const std::vector<SetAsideDocument>& set_aside) {
  if (since_ == std::chrono::system_clock::time_point{}) {
    since_ = std::chrono::time_point_cast<std::chrono::seconds>(
        std::chrono::system_clock::now());
  }
  const KueueStatuses now = KueueStatusesOf(view, since_, set_aside);
  for (const auto& [name, status] : now.cluster_queues) {
    auto last = written_.cluster_queues.find(name);
    if (last != written_.cluster_queues.end() && last->second == status) {
      continue;
    }
    if (Write(absl::StrCat(kApi, "clusterqueues/", name, "/status"), status,
              false)) {
      written_.cluster_queues[name] = status;
    }
  }
  for (const auto& [key, status] : now.local_queues) {
    auto last = written_.local_queues.find(key);
    if (last != written_.local_queues.end() && last->second == status) {
      continue;
    }
    const size_t slash = key.find('/');
    const std::string path =
        absl::StrCat(kApi, "namespaces/", key.substr(0, slash), "/localqueues/",
                     key.substr(slash + 1), "/status");
    if (Write(path, status, true)) written_.local_queues[key] = status;
  }
}

void KueueStatusPublisher::Forget() { written_ = {}; }

// True when written, or when the queue is gone (nothing to write to).
bool KueueStatusPublisher::Write(const std::string& path,
                                 const KueueQueueStatus& status, bool local) {
  absl::StatusOr<std::string> answer =
      client_.Patch(path, EncodeKueueStatusPatch(status, local));
  if (answer.ok()) return true;
  std::optional<kube::HttpFailure> failure =
      kube::HttpFailureOf(answer.status());
  if (failure.has_value() && failure->code == 404) return true;
  spdlog::warn("kueue status: writing {} failed, trying again: {}", path,
               Message(answer.status()));
  return false;
}

}  // namespace gpusched
