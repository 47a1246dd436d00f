// Scenario errors name the file, the line, the event index and the field.
// Each case is a scenario after a common header and the message it must
// give in full.

#include <string>
#include <string_view>

#include "api/codec/scenario_yaml.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpusched {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string TestDir() {
  return std::string(GPUSCHED_SOURCE_DIR) + "/tests/testdata/scenarios-codec";
}

// Lines 1-5; a case's text starts at line 6.
constexpr std::string_view kHeader = R"(apiVersion: gpusched.io/v1alpha1
kind: Scenario
nodes:
- metadata: {name: n1}
  status: {allocatable: {nvidia.com/gpu: "8"}}
)";

std::string ErrorOf(std::string_view text) {
  absl::StatusOr<Scenario> s = ParseScenarioText(text, "s.yaml", TestDir());
  if (s.ok()) return "(parsed)";
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(s.status().message());
}

struct ErrorCase {
  std::string_view name;
  std::string_view body;  // after kHeader
  std::string_view message;
};

class ScenarioErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ScenarioErrorTest, NamesLineAndField) {
  EXPECT_EQ(ErrorOf(std::string(kHeader) + std::string(GetParam().body)),
            GetParam().message);
}

constexpr ErrorCase kEventErrors[] = {
    {"MissingAt", "events:\n- finish: [a/b]\n",
     "s.yaml: line 7: events[0].at: required"},
    {"DurationWithoutUnit",
     "events:\n- at: 0s\n  nodeUp: [n1]\n- at: 90\n  nodeUp: [n1]\n",
     "s.yaml: line 9: events[1].at: invalid value \"90\": must be a duration "
     "such as 300s, 5m, 1h30m or 250ms (missing unit)"},
    {"NegativeDuration", "events:\n- at: -5s\n  nodeUp: [n1]\n",
     "s.yaml: line 7: events[0].at: invalid value \"-5s\": must be "
     "non-negative"},
    {"NullDuration", "events:\n- at:\n  nodeUp: [n1]\n",
     "s.yaml: line 7: events[0].at: expected duration (such as 90s), got "
     "null"},
    {"UnknownEventKey", "events:\n- at: 0s\n  finsh: [a/b]\n",
     "s.yaml: line 8: events[0].finsh: unknown field; expected one of at, "
     "create, finish, delete, nodeDown, nodeUp, admissionCheck"},
    {"DuplicateEventKey", "events:\n- at: 0s\n  nodeUp: [n1]\n  at: 1s\n",
     "s.yaml: line 9: events[0].at: duplicate field"},
    {"NothingToDo", "events:\n- at: 0s\n",
     "s.yaml: line 7: events[0]: nothing to do: expected at least one of "
     "create, finish, delete, nodeDown, nodeUp, admissionCheck"},
    {"CheckStateUnknown",
     "events:\n- at: 0s\n  admissionCheck:\n  - {workload: a/b, check: c, "
     "state: Done}\n",
     "s.yaml: line 9: events[0].admissionCheck[0].state: unsupported value "
     "\"Done\": expected Pending, Ready, Retry or Rejected"},
    {"CheckWithoutWorkload",
     "events:\n- at: 0s\n  admissionCheck:\n  - {check: c, state: Ready}\n",
     "s.yaml: line 9: events[0].admissionCheck[0].workload: required"},
    {"CheckOfWorkloadNotCreated",
     "events:\n- at: 0s\n  admissionCheck:\n  - {workload: a/b, check: c, "
     "state: Ready}\n",
     "s.yaml: line 9: events[0].admissionCheck[0].workload: no Pod or "
     "PodGroup \"a/b\" is created by any event"},
    {"EventNotObject", "events:\n- 0s\n",
     "s.yaml: line 7: events[0]: expected object, got string"},
    {"EventsNotList", "events: {at: 0s}\n",
     "s.yaml: line 6: events: expected array of events, got object"},
    {"FinishNotNamespaced",
     "events:\n- at: 0s\n  nodeUp: [n1]\n- at: 1s\n  nodeUp: [n1]\n"
     "- at: 2s\n  finish: [\"job-1\"]\n",
     "s.yaml: line 12: events[2].finish[0]: must be \"namespace/name\", got "
     "\"job-1\""},
    {"DeleteEmptyName", "events:\n- at: 0s\n  delete: [\"ns/\"]\n",
     "s.yaml: line 8: events[0].delete[0]: must be \"namespace/name\", got "
     "\"ns/\""},
    {"FinishNotList", "events:\n- at: 0s\n  finish: a/b\n",
     "s.yaml: line 8: events[0].finish: expected array of strings, got "
     "string"},
    {"FinishItemNotString", "events:\n- at: 0s\n  finish: [[a/b]]\n",
     "s.yaml: line 8: events[0].finish[0]: expected string, got array"},
    {"FinishUnknownWorkload", "events:\n- at: 0s\n  finish: [team-a/ghost]\n",
     "s.yaml: line 8: events[0].finish[0]: no Pod or PodGroup "
     "\"team-a/ghost\" is created by any event"},
    {"NodeDownUnknownNode", "events:\n- at: 0s\n  nodeDown: [n1, n9]\n",
     "s.yaml: line 8: events[0].nodeDown[1]: unknown node \"n9\""},
    {"CreateUnsupportedKind",
     "events:\n- at: 0s\n  create:\n  - kind: Deployment\n",
     "s.yaml: line 9: events[0].create[0].kind: unsupported kind "
     "\"Deployment\": expected Pod or PodGroup"},
    {"CreateMissingKind",
     "events:\n- at: 0s\n  create:\n  - metadata: {name: p}\n",
     "s.yaml: line 9: events[0].create[0].kind: required: Pod or PodGroup"},
    {"CreateNotObject", "events:\n- at: 0s\n  create: [p1]\n",
     "s.yaml: line 8: events[0].create[0]: expected object (a Pod or "
     "PodGroup), got string"},
    {"CreatePodWithoutName",
     "events:\n- at: 0s\n  create:\n  - kind: Pod\n    metadata: {}\n",
     "s.yaml: line 9: events[0].create[0].metadata.name: required"},
    {"CreatePodBadQuantity",
     "events:\n- at: 0s\n  create:\n  - kind: Pod\n    metadata: {name: p}\n"
     "    spec:\n      containers:\n      - resources:\n"
     "          requests: {nvidia.com/gpu: two}\n",
     "s.yaml: line 14: events[0].create[0].spec.containers[0].resources."
     "requests[\"nvidia.com/gpu\"]: invalid quantity \"two\": expected a "
     "digit at character 1"},
    {"CreatePodBadRuntime",
     "events:\n- at: 0s\n  create:\n  - kind: Pod\n"
     "    metadata: {name: p, annotations: {simulation.gpusched.io/runtime: "
     "soon}}\n",
     "s.yaml: line 10: events[0].create[0].metadata.annotations[\"simulation."
     "gpusched.io/runtime\"]: must be a non-negative duration such as 20s or "
     "1m30s"},
    {"CreatePodGroupUnknownApi",
     "events:\n- at: 0s\n  create:\n  - kind: PodGroup\n"
     "    apiVersion: example.com/v1\n    metadata: {name: g}\n",
     "s.yaml: line 10: events[0].create[0].apiVersion: unsupported PodGroup "
     "API \"example.com/v1\": expected scheduling.volcano.sh/v1beta1, "
     "scheduling.x-k8s.io/v1alpha1 or scheduling.k8s.io/v1beta1"},
    {"CreatePodGroupMinMemberZero",
     "events:\n- at: 0s\n  create:\n  - kind: PodGroup\n"
     "    apiVersion: scheduling.volcano.sh/v1beta1\n    metadata: {name: g}\n"
     "    spec: {minMember: 0}\n",
     "s.yaml: line 12: events[0].create[0].spec.minMember: must be at least "
     "1, got 0"},
};

INSTANTIATE_TEST_SUITE_P(Events, ScenarioErrorTest,
                         ::testing::ValuesIn(kEventErrors),
                         [](const auto& info) {
                           return std::string(info.param.name);
                         });

constexpr ErrorCase kTopErrors[] = {
    {"UnknownTopLevelKey", "evnts: []\n",
     "s.yaml: line 6: evnts: unknown field; expected one of apiVersion, "
     "kind, metadata, nodes, policy, until, events, requeuePreempted"},
    {"DuplicateTopLevelKey", "until: 1s\nuntil: 2s\n",
     "s.yaml: line 7: until: duplicate field"},
    {"BadUntil", "until: soon\n",
     "s.yaml: line 6: until: invalid value \"soon\": must be a duration such "
     "as 300s, 5m, 1h30m or 250ms (expected a number)"},
    {"RequeueNotBool", "requeuePreempted: maybe\n",
     "s.yaml: line 6: requeuePreempted: expected boolean, got string"},
    {"PolicyNotListOrPath", "policy: {kind: ClusterQueue}\n",
     "s.yaml: line 6: policy: expected path or array of policy documents, "
     "got object"},
    {"PolicyItemNotObject", "policy: [queues.yaml]\n",
     "s.yaml: line 6: policy[0]: expected object (a policy document), got "
     "string"},
};

INSTANTIATE_TEST_SUITE_P(TopLevel, ScenarioErrorTest,
                         ::testing::ValuesIn(kTopErrors), [](const auto& info) {
                           return std::string(info.param.name);
                         });

TEST(ScenarioErrorsTest, WrongApiVersion) {
  EXPECT_EQ(ErrorOf("apiVersion: v1\nkind: Scenario\nnodes: [{metadata: "
                    "{name: n}}]\n"),
            "s.yaml: line 1: apiVersion: must be gpusched.io/v1alpha1");
}

TEST(ScenarioErrorsTest, MissingKind) {
  EXPECT_EQ(ErrorOf("apiVersion: gpusched.io/v1alpha1\nnodes: []\n"),
            "s.yaml: line 1: kind: required: Scenario");
}

TEST(ScenarioErrorsTest, MissingNodes) {
  EXPECT_EQ(ErrorOf("apiVersion: gpusched.io/v1alpha1\nkind: Scenario\n"),
            "s.yaml: line 1: nodes: required");
}

TEST(ScenarioErrorsTest, EmptyNodeList) {
  EXPECT_EQ(ErrorOf("apiVersion: gpusched.io/v1alpha1\nkind: Scenario\n"
                    "nodes: []\n"),
            "s.yaml: line 3: nodes: no Node objects: a scenario needs a "
            "cluster");
}

TEST(ScenarioErrorsTest, InlineNodeOfAnotherKind) {
  EXPECT_EQ(ErrorOf("apiVersion: gpusched.io/v1alpha1\nkind: Scenario\n"
                    "nodes:\n- kind: Pod\n  metadata: {name: p}\n"),
            "s.yaml: line 4: nodes[0].kind: must be Node");
}

TEST(ScenarioErrorsTest, DuplicateInlineNode) {
  EXPECT_EQ(ErrorOf(std::string(kHeader) + "- metadata: {name: n1}\n"),
            "s.yaml: line 6: nodes[1].metadata.name: duplicate node \"n1\"");
}

TEST(ScenarioErrorsTest, NodesFileWithPods) {
  EXPECT_EQ(ErrorOf("apiVersion: gpusched.io/v1alpha1\nkind: Scenario\n"
                    "nodes: nodes-with-pod.yaml\n"),
            "s.yaml: line 3: nodes: " + TestDir() +
                "/nodes-with-pod.yaml: holds Pod team-a/already-running; a "
                "scenario's pods belong in events[].create");
}

TEST(ScenarioErrorsTest, MissingNodesFile) {
  EXPECT_EQ(ErrorOf("apiVersion: gpusched.io/v1alpha1\nkind: Scenario\n"
                    "nodes: nowhere.yaml\n"),
            "s.yaml: line 3: nodes: " + TestDir() +
                "/nowhere.yaml: cannot open: No such file or directory");
}

TEST(ScenarioErrorsTest, MissingScenarioFile) {
  absl::StatusOr<Scenario> s = ParseScenarioFile(TestDir() + "/absent.yaml");
  EXPECT_EQ(s.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(s.status().message()),
              HasSubstr("absent.yaml: cannot open"));
}

TEST(ScenarioErrorsTest, MalformedYaml) {
  EXPECT_THAT(ErrorOf("apiVersion: [\n"),
              StartsWith("s.yaml: line 2: malformed YAML: "));
}

TEST(ScenarioErrorsTest, TwoDocuments) {
  EXPECT_EQ(ErrorOf(std::string(kHeader) + "---\nkind: Scenario\n"),
            "s.yaml: expected one YAML document (a Scenario), found 2");
}

TEST(ScenarioErrorsTest, PolicyFileErrorsNameThePolicyFile) {
  const std::string message =
      ErrorOf(std::string(kHeader) + "policy: bad-policy.yaml\n");
  EXPECT_THAT(message, StartsWith(TestDir() + "/bad-policy.yaml:17: "));
  EXPECT_THAT(message, HasSubstr("nominalQuota: Invalid value \"-1\""));
}

// Inline documents keep the scenario's own line numbers.
TEST(ScenarioErrorsTest, InlinePolicyErrorsNameScenarioLines) {
  const std::string message = ErrorOf(std::string(kHeader) + R"(policy:
- apiVersion: kueue.x-k8s.io/v1beta1
  kind: ResourceFlavor
  metadata: {name: h100}
- apiVersion: kueue.x-k8s.io/v1beta1
  kind: ClusterQueue
  metadata: {name: team-a}
  spec:
    resourceGroups:
    - coveredResources: [nvidia.com/gpu]
      flavors:
      - name: h100
        resources:
        - name: nvidia.com/gpu
          nominalQuota: -1
events: []
)");
  // nominalQuota is on line 20: 5 header lines + 15.
  EXPECT_THAT(message, StartsWith("s.yaml:20: ClusterQueue \"team-a\": "));
  EXPECT_THAT(message, HasSubstr("nominalQuota: Invalid value \"-1\""));
}

// A comment on the next item's dash does not stop the cut.
TEST(ScenarioErrorsTest, InlinePolicyLinesSurviveCommentsOnDashes) {
  const std::string message = ErrorOf(std::string(kHeader) + R"(policy:
- apiVersion: kueue.x-k8s.io/v1beta1
  kind: ResourceFlavor
  metadata:
    name: Not_A_Name
- # the queue
  apiVersion: kueue.x-k8s.io/v1beta1
  kind: LocalQueue
  metadata: {name: q, namespace: ns}
  spec: {clusterQueue: missing}
)");
  EXPECT_EQ(message,
            "s.yaml:10: ResourceFlavor \"Not_A_Name\": metadata.name: Invalid "
            "value \"Not_A_Name\": a lowercase RFC 1123 subdomain must "
            "consist of lower case alphanumeric characters, '-' or '.', and "
            "must start and end with an alphanumeric character (e.g. "
            "'team-a')\n"
            "s.yaml:15: LocalQueue \"ns/q\": spec.clusterQueue: Not found "
            "\"missing\": no ClusterQueue of that name");
}

// A document that cannot be cut out of the text as is (here an item of a
// JSON array, whose line ends in the ',' before the next item) is
// re-emitted; its errors then point at the line where it starts.
TEST(ScenarioErrorsTest, InlinePolicyFallbackNamesDocumentLine) {
  const std::string message = ErrorOf(std::string(kHeader) + R"(policy: [
  {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor",
   "metadata": {"name": "h100"}},
  {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor",
   "metadata": {"name": "Not_A_Name"}}
]
)");
  EXPECT_THAT(message, StartsWith("s.yaml:9: ResourceFlavor \"Not_A_Name\""));
}

// Aliases are refused before yaml-cpp reads the text: each one repeats its
// anchor's whole value for the readers that walk the tree, exponentially
// when they nest.
TEST(ScenarioErrorsTest, AliasesAreRefusedWithTheirLine) {
  const std::string message = ErrorOf(std::string(kHeader) + R"(policy:
- apiVersion: kueue.x-k8s.io/v1beta1
  kind: ResourceFlavor
  metadata: {name: h100}
  spec:
    nodeLabels: &labels {gpu: h100}
- apiVersion: kueue.x-k8s.io/v1beta1
  kind: ResourceFlavor
  metadata: {name: h200}
  spec:
    nodeLabels: *labels
)");
  EXPECT_EQ(message,
            "s.yaml: line 16, column 17: YAML aliases (*name) are not "
            "accepted: each one repeats its anchor's whole value");
}

}  // namespace
}  // namespace gpusched
