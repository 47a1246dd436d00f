// Live mode before the first complete list of nodes and pods: the model
// knows nothing yet, so every verb must answer with an error that makes
// kube-scheduler back off and retry, never with a verdict about a node.
#include <string>

#include "absl/status/status.h"
#include "api/server/extender_api.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace gpusched {
namespace {

using ::testing::HasSubstr;

constexpr char kFilterBody[] =
    R"({"Pod":{"metadata":{"name":"p","namespace":"ns","uid":"u1"},)"
    R"("spec":{"containers":[{"name":"c","resources":{"limits":)"
    R"({"nvidia.com/gpu":"1"}}}]}},"NodeNames":["n1","n2"]})";

class NotSyncedTest : public ::testing::Test {
 protected:
  http::Response Post(std::string_view verb, std::string body) {
    http::Request request{
        .method = "POST", .target = std::string(verb), .body = std::move(body)};
    if (verb == "/filter") return api_.Filter(request);
    if (verb == "/prioritize") return api_.Prioritize(request);
    if (verb == "/preempt") return api_.Preempt(request);
    return api_.Bind(request);
  }

  ExtenderService service_;
  Metrics metrics_;
  ExtenderApi api_{service_, metrics_, {.wait_for_sync = true}};
};

TEST_F(NotSyncedTest, FilterAnswersErrorNotVerdicts) {
  http::Response response = Post("/filter", kFilterBody);
  ASSERT_EQ(response.status, 200);
  nlohmann::json body = nlohmann::json::parse(response.body);
  EXPECT_THAT(body["Error"].get<std::string>(),
              HasSubstr("has not finished its first list"));
  EXPECT_TRUE(body["FailedAndUnresolvableNodes"].empty());
  EXPECT_TRUE(body["NodeNames"].is_null());
}

TEST_F(NotSyncedTest, BindAnswersError) {
  http::Response response =
      Post("/bind", R"({"PodName":"p","PodNamespace":"ns","PodUID":"u1",)"
                    R"("Node":"n1"})");
  ASSERT_EQ(response.status, 200);
  EXPECT_THAT(nlohmann::json::parse(response.body)["Error"].get<std::string>(),
              HasSubstr("has not finished its first list"));
}

TEST_F(NotSyncedTest, PrioritizeAndPreemptAreUnavailable) {
  EXPECT_EQ(Post("/prioritize", kFilterBody).status, 503);
  EXPECT_EQ(Post("/preempt", R"({"Pod":{},"NodeNameToMetaVictims":{}})").status,
            503);
  EXPECT_EQ(api_.Ready(http::Request{}).status, 503);
}

// Issue K §4: right after a restart the queueing core has not published a
// pass, and its victim guard knows no pod: it would let kube-scheduler's
// preemption split a gang or take a queue's guaranteed quota. Until the
// first pass, preempt answers an error and kube-scheduler tries again.
TEST(PreemptBeforeFirstPassTest, AnswersAnErrorUntilTheCoreHasDecided) {
  ExtenderService service;
  Metrics metrics;
  bool decided = false;
  ExtenderApi api(service, metrics,
                  {.core_decided = [&decided] { return decided; }});
  const http::Request request{
      .method = "POST",
      .target = "/preempt",
      .body = R"({"Pod":{"metadata":{"name":"p","namespace":"ns","uid":"u"}},)"
              R"("NodeNameToMetaVictims":{}})"};
  http::Response response = api.Preempt(request);
  EXPECT_EQ(response.status, 503);
  EXPECT_THAT(response.body, HasSubstr("has not decided its first pass"));
  decided = true;
  EXPECT_EQ(api.Preempt(request).status, 200);
}

TEST_F(NotSyncedTest, OnceSyncedFilterJudgesNodes) {
  api_.SetReady(true);
  http::Response response = Post("/filter", kFilterBody);
  nlohmann::json body = nlohmann::json::parse(response.body);
  EXPECT_EQ(body["Error"], "");
  // The model is empty, so both nodes are unknown: a (retryable) verdict,
  // not an error.
  EXPECT_EQ(body["FailedNodes"].size(), 2u);
  EXPECT_EQ(api_.Ready(http::Request{}).status, 200);
}

// One of two replicas: which one decides shows in /metrics, so an operator
// (and the two-replica e2e test) can tell them apart; a single replica has
// no such gauge.
TEST_F(NotSyncedTest, StandbyGaugeFollowsTheReplicasRole) {
  api_.SetReady(true);
  EXPECT_THAT(api_.MetricsText(http::Request{}).body,
              ::testing::Not(HasSubstr("gpusched_standby")));
  api_.SetStandby(true);
  EXPECT_THAT(api_.MetricsText(http::Request{}).body,
              HasSubstr("\ngpusched_standby 1\n"));
  nlohmann::json filter =
      nlohmann::json::parse(Post("/filter", kFilterBody).body);
  EXPECT_THAT(filter["Error"].get<std::string>(), HasSubstr("standing by"));
  api_.SetStandby(false);
  EXPECT_THAT(api_.MetricsText(http::Request{}).body,
              HasSubstr("\ngpusched_standby 0\n"));
}

}  // namespace
}  // namespace gpusched
