#include "api/codec/trace_csv.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpusched {
namespace {

using ::testing::HasSubstr;

TEST(ParseTraceNodes, ReadsTheOpenbColumns) {
  const auto nodes = ParseTraceNodes(
      "sn,cpu_milli,memory_mib,gpu,model\n"
      "openb-node-0000,64000,262144,2,P100\r\n"
      "openb-node-0001,96000,393216,8,G2\n",
      "nodes.csv");
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_EQ((*nodes)[0].name, "openb-node-0000");
  EXPECT_EQ((*nodes)[0].cpu_milli, 64000);
  EXPECT_EQ((*nodes)[0].memory_mib, 262144);
  EXPECT_EQ((*nodes)[0].gpus, 2);
  EXPECT_EQ((*nodes)[1].model, "G2");
}

TEST(ParseTraceNodes, FindsColumnsByNameInAnyOrderAndWithoutModel) {
  const auto nodes = ParseTraceNodes(
      "gpu,name,extra,memory_mib,cpu_milli\n4,n1,x,1024,8000\n", "n.csv");
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  EXPECT_EQ((*nodes)[0].name, "n1");
  EXPECT_EQ((*nodes)[0].gpus, 4);
  EXPECT_EQ((*nodes)[0].model, "");
}

TEST(ParseTraceNodes, SkipsAByteOrderMark) {
  const auto nodes = ParseTraceNodes(
      "\xEF\xBB\xBFsn,cpu_milli,memory_mib,gpu\na,1,1,1\n", "n.csv");
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  EXPECT_EQ((*nodes)[0].name, "a");
}

TEST(ParseTraceNodes, RejectsARepeatedNode) {
  const auto nodes = ParseTraceNodes(
      "sn,cpu_milli,memory_mib,gpu\na,1,1,1\na,1,1,1\n", "n.csv");
  ASSERT_FALSE(nodes.ok());
  EXPECT_THAT(nodes.status().message(), HasSubstr("n.csv:3: node \"a\""));
}

TEST(ParseTracePods, ReadsTheDefaultPodList) {
  const auto pods = ParseTracePods(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
      "creation_time,deletion_time,scheduled_time\n"
      "openb-pod-0001,6000,12288,1,460,,LS,Running,427061,12902960,427061\n"
      "openb-pod-0002,88000,262144,8,1000,V100M16|V100M32,BE,Running,1,2,3\n",
      "pods.csv");
  ASSERT_TRUE(pods.ok()) << pods.status();
  ASSERT_EQ(pods->size(), 2u);
  EXPECT_TRUE((*pods)[0].IsShare());
  EXPECT_EQ((*pods)[0].GpuMilliRequest(), 460);
  EXPECT_TRUE((*pods)[0].gpu_spec.empty());
  EXPECT_EQ((*pods)[1].GpuMilliRequest(), 8000);
  EXPECT_EQ((*pods)[1].gpu_spec,
            (std::vector<std::string>{"V100M16", "V100M32"}));
}

TEST(ParseTracePods, AcceptsOnlyTheFiveCoreColumns) {
  const auto pods = ParseTracePods(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1000,512,0,0\n\n",
      "pods.csv");
  ASSERT_TRUE(pods.ok()) << pods.status();
  EXPECT_EQ(pods->size(), 1u);
}

struct BadCase {
  std::string text;
  std::string message;
};

class ParseTracePodsErrors : public ::testing::TestWithParam<BadCase> {};

TEST_P(ParseTracePodsErrors, NameTheFileLineAndColumn) {
  const auto pods = ParseTracePods(GetParam().text, "pods.csv");
  ASSERT_FALSE(pods.ok());
  EXPECT_EQ(pods.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(pods.status().message(), HasSubstr(GetParam().message));
}

constexpr char kCsvHeader[] = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n";

INSTANTIATE_TEST_SUITE_P(
    Cases, ParseTracePodsErrors,
    ::testing::Values(
        BadCase{"name,cpu_milli,memory_mib,num_gpu\n",
                "pods.csv:1: the header has no column \"gpu_milli\""},
        BadCase{"", "pods.csv: empty"},
        BadCase{std::string(kCsvHeader) + "p,1,1,1,500\np,1,1\n",
                "pods.csv:3: 3 fields, but the header has 5"},
        BadCase{std::string(kCsvHeader) + "p,1.5,1,1,500\n",
                "pods.csv:2: column cpu_milli: \"1.5\" is not an integer"},
        BadCase{std::string(kCsvHeader) + "p,1,-4,1,500\n",
                "pods.csv:2: column memory_mib: -4 is out of range"},
        BadCase{std::string(kCsvHeader) + "p,1,1,65,1000\n",
                "pods.csv:2: column num_gpu: 65 is out of range"},
        BadCase{std::string(kCsvHeader) + "p,1,1,2,500\n",
                "pods.csv:2: column gpu_milli: 500 with num_gpu 2"},
        BadCase{std::string(kCsvHeader) + "p,1,1,0,300\n",
                "pods.csv:2: column gpu_milli: 300 with num_gpu 0"},
        BadCase{std::string(kCsvHeader) + ",1,1,0,0\n",
                "pods.csv:2: column name: empty"},
        BadCase{"name,name,cpu_milli\n", "column \"name\" appears twice"}));

TEST(ReadTrace, NamesAMissingFile) {
  const auto trace = ReadTrace("/nonexistent/nodes.csv", "/nonexistent/p");
  ASSERT_FALSE(trace.ok());
  EXPECT_THAT(trace.status().message(), HasSubstr("/nonexistent/nodes.csv"));
}

TEST(ReadTrace, ReadsTheCheckedInSample) {
  const std::string dir =
      std::string(GPUSCHED_SOURCE_DIR) + "/tests/testdata/alibaba-sample/";
  const auto trace = ReadTrace(dir + "openb_node_list_gpu_node.csv",
                               dir + "openb_pod_list_default.csv");
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ(trace->nodes.size(), 40u);
  EXPECT_EQ(trace->pods.size(), 149u);
}

}  // namespace
}  // namespace gpusched
