#include "queueing/pending_classes.h"

#include "absl/strings/str_cat.h"

namespace gpusched {

bool QueueOrder(const Workload* a, const Workload* b) {
  if (a->priority != b->priority) return a->priority > b->priority;
  if (a->created_ms != b->created_ms) return a->created_ms < b->created_ms;
  return a->key < b->key;
}

void PendingClasses::Reset(std::map<std::string, Workload>& workloads) {
  ids_.clear();
  demand_.clear();
  queue_.clear();
  placement_.clear();
  failure_.clear();
  pending_.clear();
  for (auto& [key, w] : workloads) {
    w.signature_id = -1;
    w.indexed_signature = -1;
  }
}

int PendingClasses::SignatureId(Workload& w, const QuotaFlavors& flavors) {
  if (w.signature_id >= 0) return w.signature_id;
  std::string signature = AdmissionSignature(w);
  // Admission Fair Sharing orders a ClusterQueue's workloads by LocalQueue:
  // a class then holds one LocalQueue's.
  if (const ClusterQueue* cq = flavors.ClusterQueueNamed(w.cluster_queue);
      cq != nullptr && cq->admission_mode == AdmissionMode::kUsageBased) {
    absl::StrAppend(&signature, "\nlocal queue ", w.namespace_name, "/",
                    w.local_queue);
  }
  auto [it, inserted] =
      ids_.try_emplace(std::move(signature), static_cast<int>(ids_.size()));
  if (inserted) {
    demand_.push_back(flavors.FirstFlavorDemand(w));
    queue_.push_back(w.cluster_queue);
    placement_.push_back(PlacementSignature(w));
  }
  w.signature_id = it->second;
  return w.signature_id;
}

void PendingClasses::Reindex(Workload& w, const QuotaFlavors& flavors) {
  if (w.indexed_signature >= 0) {
    auto cls = pending_.find(w.indexed_signature);
    if (cls != pending_.end()) {
      cls->second.erase({-w.indexed_priority, w.indexed_created_ms, w.key});
      if (cls->second.empty()) pending_.erase(cls);
    }
    w.indexed_signature = -1;
  }
  if (w.state != Workload::State::kPending || w.cluster_queue.empty() ||
      w.pods.empty()) {
    return;
  }
  w.signature_id = -1;  // whatever changed may change the signature
  const int signature = SignatureId(w, flavors);
  w.indexed_signature = signature;
  w.indexed_priority = w.priority;
  w.indexed_created_ms = w.created_ms;
  pending_[signature][{-w.priority, w.created_ms, w.key}] = &w;
}

const WaitReason* PendingClasses::SharedFailure(const Workload& w) const {
  if (w.state == Workload::State::kPending && w.indexed_signature >= 0) {
    auto failure = failure_.find(w.indexed_signature);
    if (failure != failure_.end() && failure->second.first > w.attempt_stamp) {
      return &failure->second.second;
    }
  }
  return nullptr;
}

Workload* PendingClasses::ReadyFrom(
    int signature, const OrderKey* after,
    const std::function<bool(const Workload&)>& ready) const {
  auto cls = pending_.find(signature);
  if (cls == pending_.end()) return nullptr;
  auto it =
      after == nullptr ? cls->second.begin() : cls->second.upper_bound(*after);
  for (; it != cls->second.end(); ++it) {
    if (ready(*it->second)) return it->second;
  }
  return nullptr;
}

std::vector<int> PendingClasses::Signatures() const {
  std::vector<int> signatures;
  signatures.reserve(pending_.size());
  for (const auto& [signature, members] : pending_) {
    signatures.push_back(signature);
  }
  return signatures;
}

void PendingClasses::RecordFailure(int signature, Workload& w, WaitReason why) {
  failure_[signature] = {attempts_, std::move(why)};
  w.attempt_stamp = attempts_;
}

}  // namespace gpusched
