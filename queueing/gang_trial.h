// Trials on the shared model. Admission tries placements, and preemption
// takes workloads off to see whether a preemptor would fit without them;
// both must leave the ClusterModel and the quota exactly as they found
// them on every way out (a failure half-way, an early return) unless the
// caller commits. The two classes here undo themselves when dropped.
#ifndef GPUSCHED_QUEUEING_GANG_TRIAL_H_
#define GPUSCHED_QUEUEING_GANG_TRIAL_H_

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "queueing/quota_tree.h"
#include "queueing/workload.h"
#include "scheduler/cluster_model.h"

namespace gpusched {

// A fit found for a workload: every member placed in the model, its quota
// not yet charged. Dropping it takes the members off the model again;
// Commit hands them over to the workload's admission.
class PlacementTrial {
 public:
  PlacementTrial(ClusterModel* model, const Workload& workload,
                 std::map<std::string, Placement> placements, FrAmounts charged,
                 std::string flavors);
  PlacementTrial(PlacementTrial&& other) noexcept;
  PlacementTrial& operator=(PlacementTrial&& other) noexcept;
  PlacementTrial(const PlacementTrial&) = delete;
  PlacementTrial& operator=(const PlacementTrial&) = delete;
  ~PlacementTrial() { Undo(); }

  // What the admission takes: the placements stay in the model.
  struct Committed {
    FrAmounts charged;
    std::map<std::string, Placement> placements;
    std::string flavors;  // "h100" or "h100,a100-mig", for messages
  };
  Committed Commit() &&;

  const std::map<std::string, Placement>& placements() const {
    return committed_.placements;
  }
  const FrAmounts& charged() const { return committed_.charged; }

 private:
  void Undo();

  ClusterModel* model_;
  std::vector<std::string> uids_;  // of the placed members; empty once done
  Committed committed_;
};

// What an admitted workload held, so it can be put back exactly.
struct HeldPlacement {
  std::map<std::string, Placement> placements;
  FrAmounts charged;
};

// Takes an admitted workload's pods off their nodes and its quota back.
HeldPlacement TakeOff(ClusterModel& model, QuotaTree& quota, Workload& w);
// Puts back what TakeOff took: the same nodes and devices, the same charge.
void PutBack(ClusterModel& model, QuotaTree& quota, Workload& w,
             HeldPlacement held);

// Admitted workloads taken off for a preemption trial. Whatever is still
// off when the trial is dropped is put back, last taken first.
class VictimTrial {
 public:
  VictimTrial(ClusterModel* model, QuotaTree* quota)
      : model_(model), quota_(quota) {}
  VictimTrial(const VictimTrial&) = delete;
  VictimTrial& operator=(const VictimTrial&) = delete;
  ~VictimTrial() { PutBackAll(/*last_first=*/true); }

  // Takes `w` off; returns its index in the trial.
  size_t TakeOff(Workload& w);
  // Puts entry `i` back, or takes it off again.
  void PutBack(size_t i);
  void TakeOffAgain(size_t i);
  bool is_off(size_t i) const { return taken_[i].second.has_value(); }
  Workload& workload(size_t i) const { return *taken_[i].first; }
  size_t size() const { return taken_.size(); }
  void PutBackAll(bool last_first);

 private:
  ClusterModel* model_;
  QuotaTree* quota_;
  std::vector<std::pair<Workload*, std::optional<HeldPlacement>>> taken_;
};

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_GANG_TRIAL_H_
