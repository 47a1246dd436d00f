// A queueing engine over a model of DGX nodes, for the tests that drive the
// engine directly and read what it decided.
#ifndef GPUSCHED_TESTS_QUEUEING_ENGINE_FIXTURE_H_
#define GPUSCHED_TESTS_QUEUEING_ENGINE_FIXTURE_H_

#include <memory>
#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "queueing/engine.h"
#include "tests/queueing/builders.h"

namespace gpusched {

class EngineFixture : public ::testing::Test {
 protected:
  void Start(Policy policy, int nodes = 2) {
    for (int i = 0; i < nodes; ++i) {
      model_.UpsertNode(Dgx("dgx-" + std::to_string(i)));
    }
    auto engine = QueueingEngine::Create(std::move(policy), &model_);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = *std::move(engine);
  }
  // A Kueue pod group of `pods` members with `gpus` GPUs each.
  void SubmitGang(const std::string& ns, const std::string& group, int pods,
                  int gpus, int64_t now, int32_t priority = 0) {
    for (int i = 0; i < pods; ++i) {
      engine_->AddPod(GangPod(ns, group, i, gpus, pods, priority), now);
    }
  }

  ClusterModel model_;
  std::unique_ptr<QueueingEngine> engine_;
};

}  // namespace gpusched

#endif  // GPUSCHED_TESTS_QUEUEING_ENGINE_FIXTURE_H_
