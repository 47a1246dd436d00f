// Kueue's own objects as gpusched's policy (--policy-source=kueue): the
// cluster's kueue.x-k8s.io ResourceFlavors, ClusterQueues, LocalQueues,
// Cohorts, WorkloadPriorityClasses, AdmissionChecks and
// ProvisioningRequestConfigs, each listed and watched at v1beta2
// on its own thread (list_watch.h). v1beta2 is Kueue's storage version, so
// reading it needs no conversion webhook: it keeps working once Kueue's
// manager is gone, which is the point of switching.
//
// The watch keeps every object as the API server last showed it, as YAML
// text, and hands out the whole set as policy documents (PolicyText) once
// every kind has been listed; the caller parses them with the same loader
// and validation as a policy file, so an object the file would refuse is
// refused with the same words, named "clusterqueues/team-a". A cluster
// without Kueue's CRDs (or a role that may not read them) is said once and
// read as one without objects of that kind.
#ifndef GPUSCHED_API_KUBE_KUEUE_OBJECTS_H_
#define GPUSCHED_API_KUBE_KUEUE_OBJECTS_H_

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "api/kube/kube_client.h"
#include "api/kube/list_watch.h"
#include "policies/policy_loader.h"

namespace gpusched::kube {

struct KueueObjectsOptions {
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{10000};
  std::chrono::milliseconds absent_poll{30000};
  int list_page_size = 500;
  // Called after every change, from a watch thread; must return quickly.
  std::function<void()> on_change;
};

// A LocalQueue's status.fairSharing.admissionFairSharingStatus
// .consumedResources: resource -> amount in Kueue's units (cpu in cores).
using AfsConsumed = std::map<std::string, double>;

// Every Kueue object of the kinds gpusched reads, as policy documents.
struct KueueObjectsSnapshot {
  uint64_t version = 0;               // grows with every change
  std::vector<PolicyText> documents;  // by kind, then namespace/name
};

// Thread-safe. The client must outlive the watch.
class KueueObjects {
 public:
  static constexpr size_t kKinds = 8;

  KueueObjects(KubeClient& client, KueueObjectsOptions options);
  ~KueueObjects();  // Stop()
  KueueObjects(const KueueObjects&) = delete;
  KueueObjects& operator=(const KueueObjects&) = delete;

  void Start();
  // Closes the watches and joins their threads; idempotent.
  void Stop();

  // True once every kind has been listed (or found absent) once.
  bool listed() const;
  // Waits until listed() or `timeout`; returns listed().
  bool WaitListed(std::chrono::milliseconds timeout) const;
  // The objects when they changed since `seen` (a snapshot's version) and
  // every kind is listed; nullopt otherwise.
  std::optional<KueueObjectsSnapshot> SnapshotIfNewer(uint64_t seen) const;

  // The Admission Fair Sharing usage each LocalQueue's status holds now,
  // by "namespace/name" (the documents leave status out, so that a status
  // write is no change of policy; this is the one part of it read back).
  std::map<std::string, AfsConsumed> AfsUsages() const;

  // Called by the kinds' sinks, from their threads.
  void ReplaceKind(size_t kind, std::map<std::string, std::string> objects);
  void PutAfsUsage(const std::string& key, std::optional<AfsConsumed> usage);
  void PutObject(size_t kind, const std::string& key, std::string text);
  void RemoveObject(size_t kind, const std::string& key);

 private:
  void Changed();  // mu_ held on entry; released by the caller

  KubeClient& client_;
  const KueueObjectsOptions options_;
  std::array<std::unique_ptr<ListWatchSink>, kKinds> sinks_;
  std::array<ListWatchOptions, kKinds> watches_;
  std::array<std::jthread, kKinds> threads_;

  mutable std::mutex mu_;
  mutable std::condition_variable listed_cv_;
  // Per kind: "namespace/name" (cluster-scoped: "name") -> YAML text.
  std::array<std::map<std::string, std::string>, kKinds> objects_;
  std::array<bool, kKinds> listed_{};
  std::map<std::string, AfsConsumed> afs_usages_;  // LocalQueues
  uint64_t version_ = 0;
};

}  // namespace gpusched::kube

#endif  // GPUSCHED_API_KUBE_KUEUE_OBJECTS_H_
