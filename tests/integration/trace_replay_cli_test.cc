// `gpusched trace-replay` as a user runs it on a sample of the Alibaba
// trace: the report, its checkpoints, and the errors of bad input.
#include <cstdio>
#include <fstream>
#include <sstream>

#include "nlohmann/json.hpp"
#include "tests/integration/harness.h"
#include "tests/integration/subprocess.h"

namespace gpusched::testing {
namespace {

using std::chrono::milliseconds;

const std::string kSample =
    std::string(GPUSCHED_SOURCE_DIR) + "/tests/testdata/alibaba-sample/";
const std::string kNodes = kSample + "openb_node_list_gpu_node.csv";
const std::string kPods = kSample + "openb_pod_list_default.csv";

std::string WriteTemp(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

std::string ReadAll(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

TEST(TraceReplayCliTest, WritesTheReportWithTheFourCheckpoints) {
  const std::string output = ::testing::TempDir() + "/replay.json";
  Subprocess replay({GPUSCHED_BINARY, "trace-replay", "--nodes", kNodes,
                     "--pods", kPods, "--load", "1.3", "--seed", "3",
                     "--scorer", "default", "--output", output});
  ASSERT_EQ(replay.Wait(milliseconds(20000)), 0) << replay.stdout_text();
  const nlohmann::json report = nlohmann::json::parse(ReadAll(output));
  EXPECT_EQ(report["scorer"], "default");
  EXPECT_EQ(report["seed"], 3);
  EXPECT_EQ(report["gpus"], 224);
  ASSERT_EQ(report["checkpoints"].size(), 4u);
  const double loads[] = {0.8, 0.9, 1.0, 1.3};
  for (int i = 0; i < 4; ++i) {
    EXPECT_DOUBLE_EQ(report["checkpoints"][i]["arrivedLoad"], loads[i]);
    const double ratio = report["checkpoints"][i]["gpuAllocationRatio"];
    EXPECT_GT(ratio, 0.5);
    EXPECT_LE(ratio, 1.0);
  }
  EXPECT_GE(report["failedPods"].get<int>(), 0);
  EXPECT_TRUE(report.contains("multiGpuTopologyScore"));
  EXPECT_GE(report["wallSeconds"].get<double>(), 0);
}

TEST(TraceReplayCliTest, EveryPaperScorerRunsAndTheSameSeedRepeats) {
  for (const char* scorer : {"random", "bestfit", "dotprod", "packing"}) {
    Subprocess first({GPUSCHED_BINARY, "trace-replay", "--nodes", kNodes,
                      "--pods", kPods, "--seed", "5", "--scorer", scorer});
    ASSERT_EQ(first.Wait(milliseconds(20000)), 0) << first.stdout_text();
    Subprocess second({GPUSCHED_BINARY, "trace-replay", "--nodes", kNodes,
                       "--pods", kPods, "--seed", "5", "--scorer", scorer});
    ASSERT_EQ(second.Wait(milliseconds(20000)), 0);
    nlohmann::json a = nlohmann::json::parse(first.stdout_text());
    nlohmann::json b = nlohmann::json::parse(second.stdout_text());
    a.erase("wallSeconds");
    b.erase("wallSeconds");
    EXPECT_EQ(a, b) << scorer;
  }
}

TEST(TraceReplayCliTest, AcceptsAPodListWithOnlyTheFiveCoreColumns) {
  const std::string pods =
      WriteTemp("core-pods.csv",
                "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
                "a,4000,8192,1,500\nb,8000,16384,1,1000\nc,2000,4096,0,0\n");
  Subprocess replay(
      {GPUSCHED_BINARY, "trace-replay", "--nodes", kNodes, "--pods", pods});
  EXPECT_EQ(replay.Wait(milliseconds(20000)), 0) << replay.stdout_text();
}

TEST(TraceReplayCliTest, AMalformedRowIsAnErrorNamingFileLineAndColumn) {
  const std::string pods =
      WriteTemp("bad-pods.csv",
                "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
                "a,4000,8192,1,500\nb,lots,16384,1,1000\n");
  Subprocess replay(
      {GPUSCHED_BINARY, "trace-replay", "--nodes", kNodes, "--pods", pods});
  EXPECT_EQ(replay.Wait(milliseconds(20000)), 1);
  EXPECT_NE(replay.stdout_text().find("bad-pods.csv:3: column cpu_milli"),
            std::string::npos)
      << replay.stdout_text();
}

TEST(TraceReplayCliTest, APodListWithoutGpuPodsFails) {
  const std::string pods = WriteTemp(
      "cpu-pods.csv",
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,4000,8192,0,0\n");
  Subprocess replay(
      {GPUSCHED_BINARY, "trace-replay", "--nodes", kNodes, "--pods", pods});
  EXPECT_EQ(replay.Wait(milliseconds(20000)), 1);
  EXPECT_NE(replay.stdout_text().find("no pod in the list asks for a GPU"),
            std::string::npos)
      << replay.stdout_text();
}

TEST(TraceReplayCliTest, BadFlagsAreUsageErrors) {
  Subprocess no_pods({GPUSCHED_BINARY, "trace-replay", "--nodes", kNodes});
  EXPECT_EQ(no_pods.Wait(milliseconds(10000)), 2);
  Subprocess bad_load({GPUSCHED_BINARY, "trace-replay", "--nodes", kNodes,
                       "--pods", kPods, "--load", "-1"});
  EXPECT_EQ(bad_load.Wait(milliseconds(10000)), 2);
  Subprocess bad_scorer({GPUSCHED_BINARY, "trace-replay", "--nodes", kNodes,
                         "--pods", kPods, "--scorer", "fgd"});
  EXPECT_EQ(bad_scorer.Wait(milliseconds(10000)), 2);
  EXPECT_NE(bad_scorer.stdout_text().find("unknown scorer"), std::string::npos);
}

}  // namespace
}  // namespace gpusched::testing
