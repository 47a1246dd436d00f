// Where `gpusched serve` takes its quota policy from, and when it changes:
//
// - a file (--policy FILE, a ConfigMap mounted as one), reloaded when its
//   modification time changes; its errors fail the start;
// - the cluster's Kueue objects (--policy-source=kueue; kube/kueue_objects.h),
//   watched; an optional --policy file is merged in (gpusched's own
//   SchedulerConfig, which Kueue has no object for). The cluster's objects
//   are not ours to refuse: one with errors, and one that names it, is
//   left out (set_aside(), logged; its status says it is inactive) and the
//   others make the policy, as Kueue leaves such a ClusterQueue inactive.
//   Errors in the file fail the whole (at start: an empty policy, every
//   queued pod waits, until it is fixed).
//
// Either way a new version is parsed and validated whole before it
// replaces the old one; the caller keeps the old one on errors.
#ifndef GPUSCHED_API_SERVER_POLICY_SOURCE_H_
#define GPUSCHED_API_SERVER_POLICY_SOURCE_H_

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "api/kube/kube_client.h"
#include "api/kube/kueue_objects.h"
#include "policies/policy_error.h"
#include "queueing/policy.h"

namespace gpusched {

struct PolicySourceOptions {
  std::string file;                    // --policy; may be empty with kueue
  bool kueue = false;                  // --policy-source=kueue
  kube::KubeClient* client = nullptr;  // with kueue; outlives the source
  // How long Open waits for every kind of Kueue object to be listed.
  std::chrono::milliseconds first_list_wait{30000};
  // Watch settings, for tests.
  kube::KueueObjectsOptions watch;
};

class PolicySource {
 public:
  // Opens the file or starts the watch (and waits for its first lists).
  static absl::StatusOr<std::unique_ptr<PolicySource>> Open(
      PolicySourceOptions options);
  ~PolicySource();

  // The policy to start with (see the file comment for errors).
  absl::StatusOr<Policy> First();
  // A new version when a source changed since the last call: its policy or
  // its errors. nullopt when nothing changed.
  std::optional<PolicyResult> Changed();
  // The Kueue objects left out of the policy last loaded.
  const std::vector<SetAsideDocument>& set_aside() const { return set_aside_; }
  // "file policy.yaml", "Kueue objects", "Kueue objects and file p.yaml".
  std::string Describe() const;
  void Stop();

 private:
  explicit PolicySource(PolicySourceOptions options);
  PolicyResult Load();  // every source as it is now
  bool FileChanged();
  bool TakeObjects();

  PolicySourceOptions options_;
  std::unique_ptr<kube::KueueObjects> objects_;
  uint64_t objects_seen_ = 0;
  std::vector<PolicyText> documents_;  // the Kueue objects last taken
  std::vector<SetAsideDocument> set_aside_;
  std::filesystem::file_time_type file_mtime_;
};

}  // namespace gpusched

#endif  // GPUSCHED_API_SERVER_POLICY_SOURCE_H_
