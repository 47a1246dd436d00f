#include "scheduler/cluster_model.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "scheduler/gpu_fit.h"
#include "scheduler/pod_view.h"

namespace gpusched {

namespace {

// Process-wide, like NodeState's generations, so that no two models ever
// share a NodeVersion they did not copy from each other.
uint64_t NextBoundMark() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

std::string PodUid(const Pod& pod) {
  return pod.meta.uid.empty() ? pod.Key() : pod.meta.uid;
}

std::string ClusterModel::UpsertNode(Node node) {
  std::string name = node.meta.name;
  Touch(name);
  auto it = nodes_.find(name);
  if (it == nodes_.end()) {
    ++node_set_generation_;
    nodes_.emplace(std::move(name),
                   std::make_unique<NodeState>(std::move(node)));
    return {};
  }
  // Callers keep node lists filtered by labels per generation.
  if (it->second->node().meta.labels != node.meta.labels) {
    ++node_set_generation_;
  }
  return it->second->ReplaceNode(std::move(node));
}

bool ClusterModel::RemoveNode(std::string_view name) {
  return RemoveNode(name, nullptr);
}

bool ClusterModel::RemoveNode(std::string_view name,
                              std::vector<DetachedPod>* detached) {
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return false;
  Touch(name);
  ++node_set_generation_;
  for (const auto& [key, allocation] : it->second->pods()) {
    auto placed = pods_by_uid_.find(allocation.uid);
    if (detached != nullptr && placed != pods_by_uid_.end()) {
      detached->push_back({allocation, placed->second.bound});
    }
    guessed_.erase(allocation.uid);
    pods_by_uid_.erase(allocation.uid);
  }
  bound_marks_.erase(name);
  nodes_.erase(it);
  return true;
}

absl::Status ClusterModel::Attach(std::string_view node_name,
                                  const DetachedPod& pod) {
  NodeState* node = MutableNode(node_name);
  if (node == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("node ", Sv(node_name), " not known to gpusched"));
  }
  if (pods_by_uid_.contains(pod.allocation.uid)) {
    return absl::AlreadyExistsError(
        absl::StrCat("pod ", pod.allocation.pod_key, " is already placed"));
  }
  if (absl::Status s = node->AddPod(pod.allocation); !s.ok()) return s;
  pods_by_uid_.emplace(
      pod.allocation.uid,
      PlacedPod{pod.allocation.pod_key, std::string(node_name), pod.bound});
  NoteChanged(pod.allocation.uid, pod.allocation.pod_key, false);
  return absl::OkStatus();
}

NodeState* ClusterModel::MutableNode(std::string_view name) {
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return nullptr;
  Touch(name);
  return it->second.get();
}

const NodeState* ClusterModel::FindNode(std::string_view name) const {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : it->second.get();
}

const PlacedPod* ClusterModel::FindPodByUid(std::string_view uid) const {
  auto it = pods_by_uid_.find(uid);
  return it == pods_by_uid_.end() ? nullptr : &it->second;
}

std::vector<const NodeState*> ClusterModel::SortedNodes() const {
  std::vector<const NodeState*> sorted;
  sorted.reserve(nodes_.size());
  for (const auto& [name, node] : nodes_) sorted.push_back(node.get());
  std::sort(sorted.begin(), sorted.end(),
            [](const NodeState* a, const NodeState* b) {
              return a->name() < b->name();
            });
  return sorted;
}

absl::Status ClusterModel::Place(const Pod& pod, std::string_view node_name,
                                 GpuAssignment assignment, bool bound) {
  NodeState* node = MutableNode(node_name);
  if (node == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("node ", Sv(node_name), " not known to gpusched"));
  }
  std::string uid = PodUid(pod);
  if (pods_by_uid_.contains(uid)) {
    return absl::AlreadyExistsError(
        absl::StrCat("pod ", pod.Key(), " (uid ", uid, ") is already placed"));
  }
  PodAllocation allocation{.pod_key = pod.Key(),
                           .uid = uid,
                           .requests = EffectiveRequests(pod),
                           .gpus = std::move(assignment),
                           .priority = pod.priority.value_or(0)};
  if (absl::Status status = node->AddPod(std::move(allocation)); !status.ok()) {
    return status;
  }
  NoteChanged(uid, pod.Key(), false);
  pods_by_uid_.emplace(std::move(uid),
                       PlacedPod{pod.Key(), std::string(node_name), bound});
  return absl::OkStatus();
}

namespace {

// What a running pod's gpusched.io/gpu-ids annotation says it holds, or
// nullopt when it has none or it does not match the request's shape.
std::optional<GpuAssignment> RecordedAssignment(const Pod& pod,
                                                const GpuRequest& request,
                                                const GpuInventory& gpus) {
  auto annotation = pod.meta.annotations.find(kGpuIdsAnnotation);
  if (annotation == pod.meta.annotations.end()) return std::nullopt;
  absl::StatusOr<std::vector<int>> ids = ParseGpuIds(annotation->second);
  const size_t expected = request.milli > 0 ? 1 : request.gpus;
  if (!ids.ok() || ids->size() != expected) return std::nullopt;
  int milli = request.milli > 0    ? request.milli
              : gpus.time_shared() ? gpus.replica_milli()
                                   : kMilliPerGpu;
  return GpuAssignment{
      .gpu_ids = *ids, .milli_per_gpu = milli, .mig = request.mig};
}

}  // namespace

absl::Status ClusterModel::AddRunningPod(const Pod& pod, std::string* warning) {
  const NodeState* node = FindNode(pod.node_name);
  if (node == nullptr) {
    return absl::NotFoundError(absl::StrCat("pod ", pod.Key(), " runs on node ",
                                            pod.node_name,
                                            ", not known to gpusched"));
  }
  // Served by DRA: it holds what its claims were allocated (NodeState
  // takes them over from the claims), whatever was planned or recorded.
  if (node->gpus().HasClaimedBy(PodUid(pod))) {
    return Place(pod, pod.node_name, GpuAssignment{});
  }
  // A running pod holds what it was given: its recorded devices win over
  // what the allocator would choose now (MIG reconfiguration, islands).
  PodView view = PodView::Of(pod);
  std::optional<GpuAssignment> recorded =
      RecordedAssignment(pod, view.gpu, node->gpus());
  if (recorded) {
    std::optional<absl::Status> placed =
        PlaceAsRecorded(pod, *recorded, warning);
    if (placed.has_value()) return *placed;
  }
  return PlaceAsPlanned(pod, view, *node, warning);
}

std::optional<absl::Status> ClusterModel::PlaceAsRecorded(
    const Pod& pod, const GpuAssignment& recorded, std::string* warning) {
  absl::Status placed = Place(pod, pod.node_name, recorded);
  if (placed.ok() || !absl::IsFailedPrecondition(placed)) return placed;
  // Devices the allocator only guessed for another pod yield to a
  // record: the record is what that pod was given.
  std::vector<Pod> moved;
  if (!MoveGuessedPodsOff(pod.node_name, recorded.gpu_ids, &moved)) {
    return std::nullopt;
  }
  placed = Place(pod, pod.node_name, recorded);
  for (const Pod& other : moved) (void)AddRunningPod(other, warning);
  if (placed.ok()) return placed;
  return std::nullopt;
}

absl::Status ClusterModel::PlaceAsPlanned(const Pod& pod, const PodView& view,
                                          const NodeState& node,
                                          std::string* warning) {
  GpuPlan plan = PlanGpus(view.gpu, node.gpus());
  auto note = [&](std::string text) {
    if (warning != nullptr) *warning = std::move(text);
  };
  if (plan.verdict.fits()) {
    if (pod.meta.annotations.contains(kGpuIdsAnnotation)) {
      note(absl::StrCat("pod ", pod.Key(), ": ", kGpuIdsAnnotation, "=\"",
                        pod.meta.annotations.find(kGpuIdsAnnotation)->second,
                        "\" does not match free GPUs; using ",
                        FormatGpuIds(plan.assignment.gpu_ids)));
    }
    const bool holds_gpus = !plan.assignment.gpu_ids.empty();
    absl::Status placed = Place(pod, pod.node_name, std::move(plan.assignment));
    if (placed.ok() && holds_gpus) {
      guessed_.insert_or_assign(PodUid(pod), pod);
    }
    return placed;
  }
  // The pod runs whatever the model thinks: record it and count its MIG
  // instances where the pools allow, so they are not handed out again.
  note(absl::StrCat(
      "pod ", pod.Key(), " runs on ", pod.node_name,
      " but its GPUs do not fit the model: ", plan.verdict.reason()));
  GpuAssignment mig_only{.mig = view.gpu.mig};
  if (Place(pod, pod.node_name, mig_only).ok()) return absl::OkStatus();
  return Place(pod, pod.node_name, GpuAssignment{});
}

bool ClusterModel::MarkBound(std::string_view uid) {
  auto it = pods_by_uid_.find(uid);
  if (it == pods_by_uid_.end()) return false;
  if (it->second.bound) return true;
  it->second.bound = true;
  Touch(it->second.node);
  bound_marks_.insert_or_assign(it->second.node, NextBoundMark());
  NoteChanged(uid, it->second.pod_key, false);
  return true;
}

// Takes off `node` every guessed pod holding one of `gpu_ids`; true if any
// was moved (the caller places them again after its own pod).
bool ClusterModel::MoveGuessedPodsOff(std::string_view node_name,
                                      const std::vector<int>& gpu_ids,
                                      std::vector<Pod>* moved) {
  const NodeState* node = FindNode(node_name);
  std::vector<std::string> uids;
  for (const auto& [key, allocation] : node->pods()) {
    if (!guessed_.contains(allocation.uid)) continue;
    for (int id : allocation.gpus.gpu_ids) {
      if (std::find(gpu_ids.begin(), gpu_ids.end(), id) != gpu_ids.end()) {
        uids.push_back(allocation.uid);
        break;
      }
    }
  }
  for (const std::string& uid : uids) {
    moved->push_back(guessed_.find(uid)->second);
    RemovePod(uid);
  }
  return !uids.empty();
}

bool ClusterModel::RemovePod(std::string_view uid) {
  guessed_.erase(uid);
  auto it = pods_by_uid_.find(uid);
  if (it == pods_by_uid_.end()) return false;
  if (NodeState* node = MutableNode(it->second.node)) {
    node->RemovePod(it->second.pod_key);
  }
  NoteChanged(uid, it->second.pod_key, it->second.bound);
  pods_by_uid_.erase(it);
  return true;
}

}  // namespace gpusched
