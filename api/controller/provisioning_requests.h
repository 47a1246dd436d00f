// gpusched as the kueue.x-k8s.io/provisioning-request admission check
// controller (Kueue v0.19.2 pkg/controller/admissionchecks/provisioning):
// for each workload holding quota reserved on such a check it creates a
// PodTemplate per pod set and an autoscaling.x-k8s.io/v1
// ProvisioningRequest, named as Kueue names them; it watches the requests
// and hands each one's mapped state (CheckVerdictOfRequest) to the
// admission loop; it deletes what it created once the workload is
// requeued (a new attempt gets a new name), finished or gone; and it makes
// a request again when its ProvisioningRequestConfig's class or parameters
// change while its check is not Ready.
//
// Only the deciding replica writes; every replica watches, so a standby's
// engine keeps the checks' states. The requests are owned by the
// workload's pods (gpusched has no Workload object), so the garbage
// collector removes them with the pods too.
#ifndef GPUSCHED_API_CONTROLLER_PROVISIONING_REQUESTS_H_
#define GPUSCHED_API_CONTROLLER_PROVISIONING_REQUESTS_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "api/codec/provisioning_request_json.h"
#include "api/controller/admission_loop.h"
#include "api/kube/kube_client.h"
#include "api/kube/list_watch.h"
#include "queueing/engine.h"

namespace gpusched {

// Pods of a workload with the same requests: one pod set of the request,
// its template copied from `member`'s spec.
struct ProvisioningPodSetView {
  std::string name;    // "main", or "main-<i>" for the i-th other shape
  std::string member;  // a pod's name, in the workload's namespace
  int32_t count = 0;
};

// One ProvisioningRequest the engine's state calls for.
struct ProvisioningCheckView {
  std::string workload;  // "ns/name"
  std::string check;
  bool admitted = false;  // else its quota is reserved
  ProvisioningRequestConfig config;
  ProvisioningRequestSpec request;
  std::vector<ProvisioningPodSetView> pod_sets;
};

// The requests for the workloads that hold quota reserved (or are
// admitted) on a check of kProvisioningRequestController that needs one
// (CheckNeedsRequest): attempt retry_count + 1, owned by the pods.
std::vector<ProvisioningCheckView> ProvisioningChecksOf(
    const QueueingEngine& engine);

struct ProvisioningRequestControllerOptions {
  std::chrono::milliseconds sync_period{1000};
  // Requests are watched only while the policy has a ProvisioningRequest
  // check, whose workloads wait on them: a missing CRD or rule is asked
  // about again this often, so one installed after gpusched is used within
  // seconds (the PodGroup APIs, which a cluster may never have, poll every
  // 30 s).
  std::chrono::milliseconds absent_poll{5000};
};

class ProvisioningRequestController : private kube::ListWatchSink {
 public:
  ProvisioningRequestController(kube::KubeClient& client, AdmissionLoop& loop,
                                ProvisioningRequestControllerOptions options);
  ~ProvisioningRequestController() override;  // Stop()
  void Start();
  void Stop();

 private:
  // A request this controller asked for.
  struct Tracked {
    std::string name;  // the request's, in the workload's namespace
    std::string workload;
    std::string check;
    bool admitted = false;
    ProvisioningRequestConfig config;
    bool created = false;  // by this replica: it deletes it
    std::vector<std::string> templates;
    std::optional<CheckVerdict> told;  // last state handed to the loop
  };
  void Sync(std::stop_token stop);
  void StartWatch();
  int LaterAttemptSeen(const ProvisioningCheckView& view);
  bool OutOfSync(const std::string& key, const Tracked& tracked) const;
  void Forget(const std::string& key, Tracked& tracked);
  void Tell(const std::string& key, Tracked& tracked);
  absl::Status Create(const ProvisioningCheckView& view, std::stop_token stop);
  // Kueue's handleError: what could not be created, and why, becomes the
  // check's message (it stays Pending, and creating is tried again).
  absl::Status Report(const ProvisioningCheckView& view, const char* kind,
                      const std::string& name, absl::Status why);
  void DeleteCreated(const std::string& name, const Tracked& tracked,
                     std::stop_token stop);
  void Observe(simdjson::dom::element request);

  // kube::ListWatchSink, on the watch thread.
  void BeginList() override {}
  void ListItem(simdjson::dom::element item) override { Observe(item); }
  void EndList() override;  // a complete list: the requests are served
  void Event(kube::WatchEventType type, simdjson::dom::element object) override;
  void Absent(const absl::Status& why) override;

  kube::KubeClient& client_;
  AdmissionLoop& loop_;
  ProvisioningRequestControllerOptions options_;
  std::mutex mu_;
  std::map<std::string, Tracked> tracked_;  // by "ns/name"; guarded by mu_
  // The watched requests' conditions by "ns/name" (some not tracked yet:
  // the watch ran ahead of the sync); guarded by mu_.
  std::map<std::string, RequestConditions> conditions_;
  // What each watched request was made with, by "ns/name"; guarded by mu_.
  std::map<std::string, RequestMadeWith> made_with_;
  // The requests are not listed yet, or cannot be (no CRD, no rule, which
  // is said once): nothing is created until a list arrives. Guarded by mu_.
  bool absent_ = true;
  bool said_absent_ = false;
  std::jthread watch_;
  std::jthread sync_;
};

}  // namespace gpusched

#endif  // GPUSCHED_API_CONTROLLER_PROVISIONING_REQUESTS_H_
