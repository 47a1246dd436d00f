// `gpusched validate` and `gpusched simulate` as an admin runs them: exit
// codes and what they print.
#include <cstdio>

#include "tests/integration/harness.h"
#include "tests/integration/subprocess.h"

namespace gpusched::testing {
namespace {

using std::chrono::milliseconds;

std::string WriteTemp(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "/" + name;
  FILE* f = fopen(path.c_str(), "w");
  fputs(text.c_str(), f);
  fclose(f);
  return path;
}

TEST(CliProcessTest, ValidateAcceptsTheDeployExampleAndPrintsASummary) {
  Subprocess validate(
      {GPUSCHED_BINARY, "validate",
       std::string(GPUSCHED_SOURCE_DIR) + "/deploy/examples/policy.yaml"});
  EXPECT_EQ(validate.Wait(milliseconds(10000)), 0) << validate.stdout_text();
  EXPECT_NE(validate.stdout_text().find("team-a"), std::string::npos);
}

TEST(CliProcessTest, ValidateReportsEveryErrorWithFileAndLineAndExitsOne) {
  std::string path = WriteTemp("bad-policy.yaml",
                               "apiVersion: kueue.x-k8s.io/v1beta1\n"
                               "kind: LocalQueue\n"
                               "metadata: {name: q, namespace: a}\n"
                               "spec: {clusterQueue: missing}\n");
  Subprocess validate({GPUSCHED_BINARY, "validate", path});
  EXPECT_EQ(validate.Wait(milliseconds(10000)), 1);
  EXPECT_NE(validate.stdout_text().find("bad-policy.yaml:"), std::string::npos)
      << validate.stdout_text();
  EXPECT_NE(validate.stdout_text().find("missing"), std::string::npos);
}

TEST(CliProcessTest, ValidateWithoutFilesIsAUsageError) {
  Subprocess validate({GPUSCHED_BINARY, "validate"});
  EXPECT_EQ(validate.Wait(milliseconds(10000)), 2);
}

// --leader-lease names kube-scheduler's Lease as NAMESPACE/NAME and only
// makes sense against a cluster: both mistakes are usage errors that say so.
TEST(CliProcessTest, ServeRejectsAMalformedOrStandaloneLeaderLease) {
  Subprocess malformed({GPUSCHED_BINARY, "serve", "--kubeconfig",
                        "/nonexistent", "--leader-lease", "gpusched"});
  EXPECT_EQ(malformed.Wait(milliseconds(10000)), 2);
  EXPECT_NE(malformed.stdout_text().find("want NAMESPACE/NAME"),
            std::string::npos)
      << malformed.stdout_text();
  Subprocess standalone(
      {GPUSCHED_BINARY, "serve", "--leader-lease", "gpusched-system/gpusched"});
  EXPECT_EQ(standalone.Wait(milliseconds(10000)), 2);
  EXPECT_NE(standalone.stdout_text().find("--leader-lease needs --kubeconfig"),
            std::string::npos)
      << standalone.stdout_text();
}

TEST(CliProcessTest, SimulateComparesTheDeployExampleByteForByte) {
  Subprocess simulate(
      {GPUSCHED_BINARY, "simulate",
       std::string(GPUSCHED_SOURCE_DIR) + "/deploy/examples/scenario.yaml",
       "--compare",
       std::string(GPUSCHED_SOURCE_DIR) +
           "/tests/scenarios/deploy-example.expected.json"});
  EXPECT_EQ(simulate.Wait(milliseconds(20000)), 0) << simulate.stdout_text();
}

TEST(CliProcessTest, SimulateComparesWithAReportItWroteItself) {
  const std::string scenario =
      std::string(GPUSCHED_SOURCE_DIR) + "/deploy/examples/scenario.yaml";
  const std::string report = ::testing::TempDir() + "/own-report.json";
  Subprocess write({GPUSCHED_BINARY, "simulate", scenario, "--output", report});
  ASSERT_EQ(write.Wait(milliseconds(20000)), 0) << write.stdout_text();
  // The file carries wallSeconds; a second run takes longer or shorter.
  Subprocess compare(
      {GPUSCHED_BINARY, "simulate", scenario, "--compare", report});
  EXPECT_EQ(compare.Wait(milliseconds(20000)), 0) << compare.stdout_text();
}

TEST(CliProcessTest, SimulateNamesTheEventAndFieldOfABadScenario) {
  std::string nodes =
      WriteTemp("n.yaml",
                "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n"
                "  kind: Node\n  metadata: {name: n0}\n");
  std::string scenario =
      WriteTemp("s.yaml",
                "apiVersion: gpusched.io/v1alpha1\nkind: Scenario\n"
                "nodes: n.yaml\nevents:\n- at: 0s\n  finish: [job-1]\n");
  Subprocess simulate({GPUSCHED_BINARY, "simulate", scenario});
  EXPECT_EQ(simulate.Wait(milliseconds(10000)), 1);
  EXPECT_NE(simulate.stdout_text().find("events[0].finish[0]"),
            std::string::npos)
      << simulate.stdout_text();
}

}  // namespace
}  // namespace gpusched::testing
