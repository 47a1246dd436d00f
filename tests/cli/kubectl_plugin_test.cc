// `kubectl gpusched` end to end, in process: a kubeconfig whose user logs
// in with an exec credential plugin (a /bin/sh script printing an
// ExecCredential), the kube tests' fake API server checking that token and
// answering the contract's JSON, and the plugin's stdout, stderr and exit
// status.
#include "api/cli/kubectl_plugin.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "scheduler/base/strings.h"
#include "tests/cli/contract_samples.h"
#include "tests/kube/exec_plugin_util.h"
#include "tests/kube/fake_apiserver.h"

namespace gpusched::cli {
namespace {

using ::gpusched::kube::testing::FakeApiServer;
using ::gpusched::kube::testing::Json;
using ::gpusched::kube::testing::PluginDir;
using ::gpusched::kube::testing::PrintCredential;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr std::string_view kApi = "/apis/visibility.gpusched.io/v1alpha1";

std::string ApiPath(std::string_view rest) {
  return absl::StrCat(Sv(kApi), Sv(rest));
}

Json StatusObject(int code, std::string_view reason, std::string_view message) {
  return {{"kind", "Status"},   {"apiVersion", "v1"}, {"status", "Failure"},
          {"message", message}, {"reason", reason},   {"code", code}};
}

struct PluginRun {
  int exit = -1;
  std::string out;
  std::string err;
};

// A fake API server serving the visibility API's discovery, and a
// kubeconfig for it whose context's namespace is team-a and whose user's
// token comes from an exec plugin.
class KubectlPluginTest : public ::testing::Test {
 protected:
  KubectlPluginTest() {
    server_.SetReply(kApi, 200,
                     {{"kind", "APIResourceList"},
                      {"groupVersion", "visibility.gpusched.io/v1alpha1"}});
    const std::string plugin =
        dir_.Script("login", PrintCredential(R"({"token":"test-token"})"));
    kubeconfig_ = dir_.path() + "/config";
    std::ofstream(kubeconfig_) << absl::StrCat(
        "apiVersion: v1\nkind: Config\n"
        "clusters:\n- name: fake\n  cluster:\n    server: http://127.0.0.1:",
        server_.port(),
        "\nusers:\n- name: alice\n  user:\n    exec:\n"
        "      apiVersion: client.authentication.k8s.io/v1\n"
        "      command: ",
        plugin,
        "\n      interactiveMode: Never\n"
        "contexts:\n- name: fake\n  context:\n    cluster: fake\n"
        "    user: alice\n    namespace: team-a\n"
        "current-context: fake\n");
  }

  // Answers `path` below the API with canned JSON.
  void Serve(std::string_view path, std::string_view json, int code = 200) {
    server_.SetReply(ApiPath(path), code, Json::parse(json));
  }

  PluginRun Plugin(std::vector<std::string> args) {
    args.push_back("--kubeconfig=" + kubeconfig_);
    std::ostringstream out, err;
    KubectlPluginOptions options{
        .environment = {.home = dir_.path()},
        .now = [] { return testing::kNow; },
        .out = &out,
        .err = &err,
    };
    options.client.request_timeout = std::chrono::seconds(5);
    PluginRun run;
    run.exit = RunKubectlPlugin(args, options);
    run.out = out.str();
    run.err = err.str();
    return run;
  }

  FakeApiServer server_;  // accepts "Bearer test-token" only
  PluginDir dir_;
  std::string kubeconfig_;
};

TEST_F(KubectlPluginTest, QueueListsTheContextNamespacesQueuesWithThePlugin) {
  Serve("/namespaces/team-a/localqueues", testing::kLocalQueues);
  Serve("/namespaces/team-a/localqueues/training/pendingworkloads",
        testing::kTrainingPending);
  Serve("/namespaces/team-a/localqueues/inference/pendingworkloads",
        testing::kInferencePending);
  PluginRun run = Plugin({"queue"});
  EXPECT_EQ(run.exit, 0) << run.err;
  EXPECT_EQ(run.err, "");
  EXPECT_EQ(run.out, R"(
NAME           LOCALQUEUE   POSITION   PRIORITY   REASON             EXPECTED START   AGE
llm-pretrain   training     0          100        WaitingForQuota    in 12m           25m
batch-embed    inference    1          50         WaitingForQuota    in 45m           4h
finetune-7b    training     2          10         InsufficientGPUs   unknown          45s
)" + 1);
  EXPECT_EQ(server_.Count("DENIED"), 0);
  EXPECT_EQ(dir_.Runs(), 1);  // one login, its token cached for every call
}

TEST_F(KubectlPluginTest, NamespaceFlagOverridesTheContexts) {
  Serve("/namespaces/ml/localqueues/training/pendingworkloads",
        testing::kTrainingPending);
  PluginRun run = Plugin({"queue", "training", "-n", "ml"});
  EXPECT_EQ(run.exit, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("llm-pretrain   training     0"));
}

TEST_F(KubectlPluginTest, StatusPrintsQueuesThenCohorts) {
  Serve("/clusterqueues", testing::kClusterQueues);
  Serve("/cohorts", testing::kCohorts);
  PluginRun run = Plugin({"status"});
  EXPECT_EQ(run.exit, 0) << run.err;
  EXPECT_THAT(run.out, StartsWith("CLUSTERQUEUE   COHORT     FLAVOR   "));
  EXPECT_THAT(run.out, HasSubstr("\n\nCOHORT     PARENT   FLAVOR"));
}

TEST_F(KubectlPluginTest, ExplainPrintsWhyItWaits) {
  Serve("/namespaces/team-a/workloads/finetune-7b/explain",
        testing::kExplainPending);
  PluginRun run = Plugin({"explain", "pod/finetune-7b"});
  EXPECT_EQ(run.exit, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("Expected start:   in 45m"));
}

TEST_F(KubectlPluginTest, ExplainOfAnAdmittedWorkloadIsNoError) {
  Serve("/namespaces/team-a/workloads/serve-api/explain",
        testing::kExplainAdmitted);
  PluginRun run = Plugin({"explain", "podgroup/serve-api"});
  EXPECT_EQ(run.exit, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("State:            Admitted\n"));
}

TEST_F(KubectlPluginTest, OutputJsonIsTheServersAnswerIndented) {
  Serve("/namespaces/team-a/localqueues/training/pendingworkloads",
        testing::kTrainingPending);
  PluginRun run = Plugin({"queue", "training", "-o", "json"});
  EXPECT_EQ(run.exit, 0) << run.err;
  // The fake writes keys sorted (nlohmann::json); they print in its order.
  EXPECT_THAT(run.out, StartsWith("{\n    \"apiVersion\": \"visibility."
                                  "gpusched.io/v1alpha1\",\n    \"items\": [\n"
                                  "        {\n            \"expectedStart\": "
                                  "\"2026-11-28T02:12:00Z\",\n"));
  EXPECT_THAT(run.out, HasSubstr("\"positionInClusterQueue\": 2,"));
  EXPECT_THAT(run.out, HasSubstr("\"startUnknownReason\": \"needs 16 GPUs"));
}

TEST_F(KubectlPluginTest, OutputYamlOfStatusIsAListOfQueuesAndCohorts) {
  Serve("/clusterqueues", testing::kClusterQueues);
  Serve("/cohorts", testing::kCohorts);
  PluginRun run = Plugin({"status", "-oyaml"});
  EXPECT_EQ(run.exit, 0) << run.err;
  EXPECT_THAT(run.out, StartsWith("apiVersion: v1\nkind: List\nitems:\n"
                                  "- apiVersion: visibility.gpusched.io/"
                                  "v1alpha1\n  kind: ClusterQueue\n"
                                  "  metadata:\n    name: gpu\n"));
  EXPECT_THAT(run.out, HasSubstr("    cohort: research\n"));
  EXPECT_THAT(run.out, HasSubstr("    cohort: \"\"\n"));  // quoted, not null
  EXPECT_THAT(run.out, HasSubstr("\n- kind: Cohort\n  metadata:\n"
                                 "    name: research\n"));
}

TEST_F(KubectlPluginTest, NotGpuschedsWorkloadIsTheServersNotFound) {
  Serve("/namespaces/team-a/workloads/web/explain",
        StatusObject(404, "NotFound",
                     "pod \"web\" is not gpusched's to queue: it has no "
                     "queue label and no PodGroup")
            .dump(),
        404);
  PluginRun run = Plugin({"explain", "web"});
  EXPECT_EQ(run.exit, 1);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err,
            "Error from server (NotFound): pod \"web\" is not gpusched's to "
            "queue: it has no queue label and no PodGroup\n");
  EXPECT_EQ(server_.Count(absl::StrCat("GET ", Sv(kApi))), 1);  // discovery
}

TEST_F(KubectlPluginTest, WithoutTheApiItSaysItIsNotInstalled) {
  server_.SetReply(kApi, 404,
                   StatusObject(404, "NotFound",
                                "the server could not find the requested "
                                "resource"));
  PluginRun run = Plugin({"status"});  // the fake has no such path: 404
  EXPECT_EQ(run.exit, 1);
  EXPECT_THAT(run.err, StartsWith("error: gpusched's visibility API "
                                  "(visibility.gpusched.io/v1alpha1) is not "
                                  "installed in this cluster.\nCheck with: "
                                  "kubectl get apiservice "
                                  "v1alpha1.visibility.gpusched.io\n"));
}

TEST_F(KubectlPluginTest, ForbiddenSaysWhichRoleToAskFor) {
  Serve("/namespaces/team-a/localqueues",
        StatusObject(403, "Forbidden",
                     "localqueues.visibility.gpusched.io is forbidden: User "
                     "\"alice\" cannot list resource \"localqueues\"")
            .dump(),
        403);
  PluginRun run = Plugin({"queue"});
  EXPECT_EQ(run.exit, 1);
  EXPECT_THAT(run.err, StartsWith("Error from server (Forbidden): "
                                  "localqueues.visibility.gpusched.io is "
                                  "forbidden: User \"alice\""));
  EXPECT_THAT(run.err, HasSubstr("bind the ClusterRole "
                                 "gpusched-visibility-viewer"));
  EXPECT_EQ(server_.Count(absl::StrCat("GET ", Sv(kApi))), 0);  // not needed
}

TEST_F(KubectlPluginTest, StandbyAsksToRetry) {
  Serve("/clusterqueues",
        StatusObject(503, "ServiceUnavailable",
                     "gpusched is on standby: another replica leads")
            .dump(),
        503);
  PluginRun run = Plugin({"status"});
  EXPECT_EQ(run.exit, 1);
  EXPECT_THAT(run.err, HasSubstr("Retry in a few seconds."));
}

TEST_F(KubectlPluginTest, UnavailableApiServiceSaysNotReady) {
  server_.SetReply(
      kApi, 503,
      StatusObject(503, "ServiceUnavailable", "service unavailable"));
  Serve("/clusterqueues",
        StatusObject(503, "ServiceUnavailable", "service unavailable").dump(),
        503);
  PluginRun run = Plugin({"status"});
  EXPECT_EQ(run.exit, 1);
  EXPECT_THAT(run.err, StartsWith("error: gpusched's visibility API is "
                                  "installed but not ready"));
}

TEST_F(KubectlPluginTest, ARefusedLoginSaysToLogInAgain) {
  dir_.Script("login", PrintCredential(R"({"token":"expired"})"));
  PluginRun run = Plugin({"status"});
  EXPECT_EQ(run.exit, 1);
  EXPECT_THAT(run.err, StartsWith("Error from server (Unauthorized): "));
  EXPECT_THAT(run.err, HasSubstr("log in again"));
}

TEST_F(KubectlPluginTest, ABadFlagPointsToTheHelp) {
  PluginRun run = Plugin({"queue", "--watch"});
  EXPECT_EQ(run.exit, 1);
  EXPECT_EQ(run.err,
            "error: unknown flag: --watch\n"
            "See 'kubectl gpusched --help' for usage.\n");
}

}  // namespace
}  // namespace gpusched::cli
