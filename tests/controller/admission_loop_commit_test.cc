// A pass plans on the loop's replica of the extender's model, without the
// extender's lock, and commits what it changed afterwards: a bind outside
// the queues that takes the devices it planned on in between must leave no
// device assigned twice and no gang half published.
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "api/controller/admission_loop.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "queueing/invariants.h"
#include "tests/queueing/builders.h"

namespace gpusched {
namespace {

// A pod outside every queue: kube-scheduler's, bound through our /bind.
Pod Unqueued(const std::string& name, int gpus) {
  Pod pod;
  pod.meta.name = name;
  pod.meta.namespace_name = "default";
  pod.meta.uid = "uid-" + name;
  pod.containers.push_back(
      Container{.name = "main", .requests = {{"nvidia.com/gpu", gpus}}});
  return pod;
}

class AdmissionLoopCommitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Once armed, the first pass that planned the gang's first member
    // finds `intruder_` bound before it commits (the gang's pods may
    // arrive in one pass or two).
    auto loop = AdmissionLoop::Create(
        TwoTeams(),
        {.clock = [this] { return now_.load(); },
         .before_commit =
             [this](const ClusterModel& planned) {
               if (planned.FindPodByUid("team-a-ring-0") != nullptr &&
                   armed_.exchange(false)) {
                 BindIntruder();
               }
             }});
    ASSERT_TRUE(loop.ok()) << loop.status();
    loop_ = *std::move(loop);
    service_ = std::make_unique<ExtenderService>(ServiceOptions{
        .gate = loop_.get(), .clock = [this] { return now_.load(); }});
    service_->UpsertNodes({Dgx("dgx-0")});
    loop_->Start(*service_, &sink_);
  }
  void TearDown() override { loop_->Stop(); }

  void BindIntruder() {
    const std::vector<std::string> nodes = {"dgx-0"};
    ASSERT_THAT(service_->Filter(intruder_, nodes).passed,
                ::testing::ElementsAre("dgx-0"));
    BindOutcome bound = service_->Bind({.pod_name = intruder_.meta.name,
                                        .pod_namespace = "default",
                                        .pod_uid = intruder_.meta.uid,
                                        .node = "dgx-0"});
    EXPECT_EQ(bound.error, "");
  }
  bool InService(const Pod& pod) {
    return service_->Read([&](const ClusterModel& model) {
      return model.FindPodByUid(PodUid(pod)) != nullptr;
    });
  }
  std::vector<std::string> DeviceFaults() {
    return service_->Read(
        [](const ClusterModel& model) { return DeviceViolations(model); });
  }
  // Gang "ring" of two members of `gpus` each, raced by the intruder's
  // bind: returns once the pass the race may have asked for ran too.
  std::vector<Pod> AddRacedGang(int gpus) {
    std::vector<Pod> ring = {GangPod("team-a", "ring", 0, gpus, 2),
                             GangPod("team-a", "ring", 1, gpus, 2)};
    armed_ = true;
    for (const Pod& pod : ring) loop_->PodUpserted(pod);
    loop_->WaitIdle();
    loop_->WaitIdle();
    return ring;
  }
  size_t Admissions() {
    size_t admitted = 0;
    for (const QueueDecision& d : sink_.Take()) {
      admitted += std::holds_alternative<AdmitMember>(d) ? 1 : 0;
    }
    return admitted;
  }

  std::atomic<int64_t> now_{1000};
  std::atomic<bool> armed_{false};
  const Pod intruder_ = Unqueued("intruder", 2);
  RecordingSink sink_;
  std::unique_ptr<AdmissionLoop> loop_;
  std::unique_ptr<ExtenderService> service_;
};

TEST_F(AdmissionLoopCommitTest, GangWhoseDevicesABindTookIsWithdrawnWhole) {
  const std::vector<Pod> ring = AddRacedGang(4);
  const Pod& ring0 = ring[0];
  const Pod& ring1 = ring[1];

  EXPECT_EQ(loop_->refused_commits(), 1u);
  EXPECT_EQ(Admissions(), 0u);  // nothing of the gang was told
  EXPECT_TRUE(InService(intruder_));
  EXPECT_FALSE(InService(ring0));
  EXPECT_FALSE(InService(ring1));
  EXPECT_THAT(DeviceFaults(), ::testing::IsEmpty());
  EXPECT_EQ(loop_->Check(ring0).assigned_node, "");
  EXPECT_EQ(loop_->Check(ring1).assigned_node, "");
  loop_->ReadEngine([&](const QueueingEngine& engine) {
    const Workload* w = engine.FindWorkloadOfPod(ring0.Key());
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(w->state, Workload::State::kPending);
    EXPECT_TRUE(w->placements.empty());
    EXPECT_EQ(engine.quota().Usage("team-a", {"h100", "nvidia.com/gpu"}), 0);
  });

  // The devices come back: planned again on a fresh replica, admitted whole.
  service_->RemovePod(PodUid(intruder_));
  loop_->WaitIdle();
  EXPECT_EQ(Admissions(), 2u);
  EXPECT_TRUE(InService(ring0));
  EXPECT_TRUE(InService(ring1));
  EXPECT_THAT(DeviceFaults(), ::testing::IsEmpty());
  EXPECT_EQ(loop_->Check(ring0).assigned_node, "dgx-0");
}

// A bind that leaves room enough: whether or not it took devices the pass
// planned on, the gang ends admitted whole, around the bound pod.
TEST_F(AdmissionLoopCommitTest, GangEndsAdmittedAroundABindThatLeftRoom) {
  const std::vector<Pod> ring = AddRacedGang(2);
  const Pod& ring0 = ring[0];
  const Pod& ring1 = ring[1];

  EXPECT_LE(loop_->refused_commits(), 1u);
  EXPECT_EQ(Admissions(), 2u);
  EXPECT_TRUE(InService(intruder_));
  EXPECT_TRUE(InService(ring0));
  EXPECT_TRUE(InService(ring1));
  EXPECT_THAT(DeviceFaults(), ::testing::IsEmpty());
}

}  // namespace
}  // namespace gpusched
