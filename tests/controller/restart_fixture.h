// The restart tests' fixture: an admission loop over a service, fed as
// the cluster sync feeds it after a restart.
#ifndef GPUSCHED_TESTS_CONTROLLER_RESTART_FIXTURE_H_
#define GPUSCHED_TESTS_CONTROLLER_RESTART_FIXTURE_H_

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "api/controller/admission_loop.h"
#include "gtest/gtest.h"
#include "tests/queueing/builders.h"

namespace gpusched {

inline const FlavorResource kH100Gpus{"h100", "nvidia.com/gpu"};

// team-a may use its nominal 8 GPUs and not one more.
inline Policy TeamAWithoutCohort() {
  Policy policy = TwoTeams();
  policy.cluster_queues[0].cohort.clear();
  return policy;
}

inline Pod Succeeded(Pod pod) {
  pod.phase = PodPhase::kSucceeded;
  return pod;
}

// A loop over a service with `nodes` DGX nodes (dgx-0, dgx-1, ...), on a
// clock the test moves; with await_lists it waits for every source's list,
// as a live server's does.
class RestartFixture : public ::testing::Test {
 protected:
  void Start(Policy policy, int nodes, bool await_lists = false,
             bool keep_requeue_state = false) {
    auto loop = AdmissionLoop::Create(
        std::move(policy), {.clock = [this] { return now_.load(); },
                            .await_lists = await_lists,
                            .keep_requeue_state = keep_requeue_state});
    ASSERT_TRUE(loop.ok()) << loop.status();
    loop_ = *std::move(loop);
    service_ = std::make_unique<ExtenderService>(ServiceOptions{
        .gate = loop_.get(), .clock = [this] { return now_.load(); }});
    std::vector<Node> all;
    for (int i = 0; i < nodes; ++i) {
      all.push_back(Dgx("dgx-" + std::to_string(i)));
    }
    service_->UpsertNodes(std::move(all));
    loop_->Start(*service_, &sink_);
  }
  void TearDown() override {
    if (loop_ != nullptr) loop_->Stop();
  }

  // What the cluster sync does with a pod list: bound pods into the model
  // first, then the whole list to the loop.
  void List(const std::vector<Pod>& pods) {
    ListPods(pods);
    loop_->WaitIdle();
  }
  void ListPods(const std::vector<Pod>& pods) {
    std::vector<Pod> bound;
    for (const Pod& pod : pods) {
      if (!pod.node_name.empty()) bound.push_back(pod);
    }
    service_->AddRunningPods(bound);
    loop_->PodsListed(pods);
  }
  // The other sources' lists: the nodes the model has, no PodGroups, the
  // DRA objects.
  void ListNodesAndGroups() {
    loop_->NodesListed();
    ListGroupsAndDra();
  }
  void ListGroupsAndDra() {
    loop_->PodGroupsListed(PodGroup::Flavor::kVolcano, {});
    loop_->PodGroupsListed(PodGroup::Flavor::kCoscheduling, {});
    loop_->PodGroupsListed(PodGroup::Flavor::kNative, {});
    loop_->DraListed();
  }
  // team-a's nominal 8 GPUs all taken by two pods of 4 running on dgx-0
  // before the restart, and a pending pod of 4 in the same queue.
  struct FullQueue {
    Pod old0, old1, fresh;
  };
  FullQueue StartWithTeamAFull() {
    Start(TeamAWithoutCohort(), 2);
    return {
        .old0 = BoundTo(QueuedPod("team-a", "old-0", 4), "dgx-0", "0,1,2,3"),
        .old1 = BoundTo(QueuedPod("team-a", "old-1", 4), "dgx-0", "4,5,6,7"),
        .fresh = QueuedPod("team-a", "fresh", 4)};
  }
  // ... and with a pod that finished.
  void Finish(const Pod& pod) {
    service_->RemovePod(PodUid(pod));
    loop_->PodUpserted(Succeeded(pod));
    loop_->WaitIdle();
  }
  int64_t Usage(const std::string& cq, const FlavorResource& fr = kH100Gpus) {
    return loop_->ReadEngine([&](const QueueingEngine& engine) {
      return engine.quota().Usage(cq, fr);
    });
  }
  Workload::State StateOf(const std::string& workload) {
    return loop_->ReadEngine([&](const QueueingEngine& engine) {
      return engine.workloads().at(workload).state;
    });
  }
  std::vector<AdmitMember> Admissions(const std::vector<QueueDecision>& all) {
    std::vector<AdmitMember> out;
    for (const QueueDecision& d : all) {
      if (const auto* admit = std::get_if<AdmitMember>(&d)) {
        out.push_back(*admit);
      }
    }
    return out;
  }

  std::atomic<int64_t> now_{1000};
  RecordingSink sink_;
  std::unique_ptr<AdmissionLoop> loop_;
  std::unique_ptr<ExtenderService> service_;
};

}  // namespace gpusched

#endif  // GPUSCHED_TESTS_CONTROLLER_RESTART_FIXTURE_H_
