// The admission loop tests' fixture: a loop on its own thread over a
// service of `nodes` DGX nodes, on a clock the test moves, its decisions
// recorded.
#ifndef GPUSCHED_TESTS_CONTROLLER_ADMISSION_LOOP_FIXTURE_H_
#define GPUSCHED_TESTS_CONTROLLER_ADMISSION_LOOP_FIXTURE_H_

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "api/controller/admission_loop.h"
#include "gtest/gtest.h"
#include "tests/queueing/builders.h"

namespace gpusched {

class AdmissionLoopTest : public ::testing::Test {
 protected:
  void Start(Policy policy, int nodes = 1, int64_t max_idle_ms = 1000,
             int64_t min_pass_interval_ms = 10) {
    auto loop = AdmissionLoop::Create(
        std::move(policy), {.clock = [this] { return now_.load(); },
                            .max_idle_ms = max_idle_ms,
                            .min_pass_interval_ms = min_pass_interval_ms});
    ASSERT_TRUE(loop.ok()) << loop.status();
    loop_ = *std::move(loop);
    service_ = std::make_unique<ExtenderService>(ServiceOptions{
        .gate = loop_.get(), .clock = [this] { return now_.load(); }});
    std::vector<Node> all;
    for (int i = 0; i < nodes; ++i)
      all.push_back(Dgx("dgx-" + std::to_string(i)));
    service_->UpsertNodes(std::move(all));
    loop_->Start(*service_, &sink_);
  }
  void TearDown() override {
    if (loop_ != nullptr) loop_->Stop();
  }
  void Add(Pod pod) {
    loop_->PodUpserted(std::move(pod));
    loop_->WaitIdle();
  }
  // Passes with nothing new: what a pass told must not be told again.
  void MorePasses() {
    for (int i = 0; i < 3; ++i) loop_->WaitIdle();
  }
  // Two timers time a workload out (with TwoTeams): team-a's gang
  // "unbound", admitted and not bound in 300 s, is rolled back; team-b's
  // gang "short", a member short, backs off having held nothing.
  void TimeOutTwoGangs() {
    for (int i = 0; i < 2; ++i) Add(GangPod("team-a", "unbound", i, 1, 2));
    Add(GangPod("team-b", "short", 0, 1, /*count=*/3));
    now_ += 301'000;
    loop_->WaitIdle();
    MorePasses();
  }

  std::atomic<int64_t> now_{1000};
  RecordingSink sink_;
  std::unique_ptr<AdmissionLoop> loop_;
  std::unique_ptr<ExtenderService> service_;
};

}  // namespace gpusched

#endif  // GPUSCHED_TESTS_CONTROLLER_ADMISSION_LOOP_FIXTURE_H_
