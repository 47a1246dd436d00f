// DRA objects of resource.k8s.io/v1 from JSON as NVIDIA's DRA driver
// (kubernetes-sigs/dra-driver-nvidia-gpu, driver gpu.nvidia.com) and
// kube-scheduler write them: slices of a DGX H100 and of an A100 in MIG
// mode, claims, a DeviceClass and a DeviceTaintRule; then what is rejected.

#include "api/codec/dra_json.h"

#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace {

using ::testing::ElementsAre;
using ::testing::Eq;
using ::testing::Optional;
using ::testing::Pair;
using ::testing::SizeIs;
using ::testing::StartsWith;

constexpr int64_t kGi = int64_t{1} << 30;
constexpr int64_t kMi = int64_t{1} << 20;

DraAttribute Str(std::string text) {
  return {.kind = DraAttribute::Kind::kString, .text = std::move(text)};
}
DraAttribute Int(int64_t number) {
  return {.kind = DraAttribute::Kind::kInt, .number = number};
}
DraAttribute Version(std::string text) {
  return {.kind = DraAttribute::Kind::kVersion, .text = std::move(text)};
}

// One H100 of a DGX H100 as the driver publishes it.
std::string H100Device(int i) {
  return absl::StrCat(R"({"name": "gpu-)", i, R"(", "attributes": {
      "type": {"string": "gpu"},
      "productName": {"string": "NVIDIA H100 80GB HBM3"},
      "uuid": {"string": "GPU-4c2b6f0e-9d7a-4e3f-8a1b-00000000000)",
                      i, R"("},
      "index": {"int": )",
                      i, R"(}, "minor": {"int": )", i, R"(},
      "driverVersion": {"version": "570.124.6"},
      "cudaComputeCapability": {"version": "9.0.0"},
      "resource.kubernetes.io/pcieRoot": {"string": "pci0000:)",
                      i < 4 ? "1a" : "9a", R"("}},
    "capacity": {"memory": {"value": "80Gi"}}})");
}

std::string DgxH100Slice() {
  std::vector<std::string> devices;
  for (int i = 0; i < 8; ++i) devices.push_back(H100Device(i));
  return absl::StrCat(R"({"apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceSlice",
    "metadata": {"name": "dgx-h100-01-gpu.nvidia.com-5wqnx",
                 "resourceVersion": "48213"},
    "spec": {"driver": "gpu.nvidia.com", "nodeName": "dgx-h100-01",
             "pool": {"name": "dgx-h100-01", "generation": 3,
                      "resourceSliceCount": 1},
             "devices": [)",
                      absl::StrJoin(devices, ","), "]}}");
}

TEST(DraJsonTest, DgxH100SliceQualifiesNamesWithTheDriver) {
  absl::StatusOr<ResourceSlice> slice = ResourceSliceFromJson(DgxH100Slice());
  ASSERT_TRUE(slice.ok()) << slice.status();
  EXPECT_EQ(slice->driver, "gpu.nvidia.com");
  EXPECT_EQ(slice->pool, "dgx-h100-01");
  EXPECT_EQ(slice->pool_generation, 3);
  EXPECT_EQ(slice->pool_slice_count, 1);
  EXPECT_EQ(slice->node_name, "dgx-h100-01");
  ASSERT_THAT(slice->devices, SizeIs(8));
  const DraDevice& gpu = slice->devices[5];
  EXPECT_EQ(gpu.name, "gpu-5");
  EXPECT_THAT(
      gpu.attributes,
      ElementsAre(
          Pair("gpu.nvidia.com/cudaComputeCapability", Version("9.0.0")),
          Pair("gpu.nvidia.com/driverVersion", Version("570.124.6")),
          Pair("gpu.nvidia.com/index", Int(5)),
          Pair("gpu.nvidia.com/minor", Int(5)),
          Pair("gpu.nvidia.com/productName", Str("NVIDIA H100 80GB HBM3")),
          Pair("gpu.nvidia.com/type", Str("gpu")),
          Pair("gpu.nvidia.com/uuid",
               Str("GPU-4c2b6f0e-9d7a-4e3f-8a1b-000000000005")),
          // Already qualified: kept as written.
          Pair("resource.kubernetes.io/pcieRoot", Str("pci0000:9a"))));
  // 80Gi in milli-units: 80 * 2^30 * 1000.
  EXPECT_THAT(gpu.capacity,
              ElementsAre(Pair("gpu.nvidia.com/memory", 80 * kGi * 1000)));
  EXPECT_TRUE(gpu.consumes_counters.empty());
}

// An A100 80GB in MIG mode: its partitions draw on the GPU's counters.
constexpr std::string_view kA100MigSlice = R"({
  "metadata": {"name": "a100-node-gpu.nvidia.com-k7d2x"},
  "spec": {
    "pool": {"name": "a100-node", "generation": 1, "resourceSliceCount": 1},
    "nodeName": "a100-node",
    "sharedCounters": [{"name": "gpu-0-counter-set", "counters": {
      "memory": {"value": "80Gi"}, "multiprocessors": {"value": "98"}}}],
    "devices": [
      {"name": "gpu-0-mig-1g.10gb-0",
       "attributes": {"type": {"string": "mig"},
                      "profile": {"string": "1g.10gb"},
                      "parentUUID": {"string": "GPU-9e1c7d54-3b0a-4f6e-b2c8-6a5d4e3f2a10"},
                      "parentIndex": {"int": 0}},
       "capacity": {"memory": {"value": "9728Mi"}},
       "consumesCounters": [{"counterSet": "gpu-0-counter-set", "counters": {
         "memory": {"value": "9728Mi"}, "multiprocessors": {"value": 14}}}]},
      {"name": "gpu-0-mig-1g.10gb-1",
       "attributes": {"type": {"string": "mig"},
                      "profile": {"string": "1g.10gb"}},
       "taints": [{"key": "gpu.nvidia.com/unhealthy", "value": "xid-79",
                   "effect": "NoExecute",
                   "timeAdded": "2025-06-01T10:00:00Z"}]}],
    "driver": "gpu.nvidia.com"}})";

// The driver stands after the devices here; their names are still qualified.
TEST(DraJsonTest, MigSliceReadsSharedAndConsumedCounters) {
  absl::StatusOr<ResourceSlice> slice = ResourceSliceFromJson(kA100MigSlice);
  ASSERT_TRUE(slice.ok()) << slice.status();
  EXPECT_EQ(slice->driver, "gpu.nvidia.com");
  ASSERT_THAT(slice->shared_counters, SizeIs(1));
  EXPECT_EQ(slice->shared_counters[0].name, "gpu-0-counter-set");
  // Counter names are not qualified.
  EXPECT_THAT(slice->shared_counters[0].counters,
              ElementsAre(Pair("memory", 80 * kGi * 1000),
                          Pair("multiprocessors", 98'000)));
  ASSERT_THAT(slice->devices, SizeIs(2));
  const DraDevice& mig = slice->devices[0];
  EXPECT_EQ(mig.attributes.at("gpu.nvidia.com/profile"), Str("1g.10gb"));
  EXPECT_EQ(mig.attributes.at("gpu.nvidia.com/parentIndex"), Int(0));
  EXPECT_EQ(mig.capacity.at("gpu.nvidia.com/memory"), 9728 * kMi * 1000);
  ASSERT_THAT(mig.consumes_counters, SizeIs(1));
  EXPECT_EQ(mig.consumes_counters[0].counter_set, "gpu-0-counter-set");
  EXPECT_THAT(mig.consumes_counters[0].counters,
              ElementsAre(Pair("memory", 9728 * kMi * 1000),
                          Pair("multiprocessors", 14'000)));  // a number
  EXPECT_THAT(slice->devices[1].taints,
              ElementsAre(DeviceTaint{.key = "gpu.nvidia.com/unhealthy",
                                      .value = "xid-79",
                                      .effect = "NoExecute"}));
}

TEST(DraJsonTest, ListValuedAndEmptyAttributesAreSkipped) {
  absl::StatusOr<ResourceSlice> slice = ResourceSliceFromJson(R"({"spec": {
    "driver": "gpu.nvidia.com", "devices": [{"name": "gpu-0", "attributes": {
      "linkIds": {"ints": [0, 1]}, "names": {"strings": ["a"]},
      "flags": {"bools": [true]}, "versions": {"versions": ["1.0.0"]},
      "empty": {}, "gone": null, "nvlink": {"bool": true}}}]}})");
  ASSERT_TRUE(slice.ok()) << slice.status();
  EXPECT_THAT(slice->devices[0].attributes,
              ElementsAre(Pair("gpu.nvidia.com/nvlink",
                               DraAttribute{.kind = DraAttribute::Kind::kBool,
                                            .flag = true})));
}

TEST(DraJsonTest, NullMeansAbsent) {
  absl::StatusOr<ResourceSlice> slice = ResourceSliceFromJson(R"({
    "metadata": null, "spec": {"driver": "d", "pool": null,
    "nodeName": null, "sharedCounters": null, "devices": [{"name": "d",
    "attributes": null, "capacity": {"memory": null},
    "consumesCounters": null, "taints": null}]}})");
  ASSERT_TRUE(slice.ok()) << slice.status();
  EXPECT_EQ(slice->pool_slice_count, 1);  // default
  EXPECT_EQ(slice->meta.name, "");
  ASSERT_THAT(slice->devices, SizeIs(1));
  EXPECT_TRUE(slice->devices[0].capacity.empty());
  absl::StatusOr<ResourceClaim> claim = ResourceClaimFromJson(
      R"({"spec": null, "status": {"allocation": null, "reservedFor": null}})");
  ASSERT_TRUE(claim.ok()) << claim.status();
  EXPECT_FALSE(claim->allocated);
}

// A pod's claim made by the resourceclaim controller from a template, then
// allocated by kube-scheduler on one node and reserved for the pod.
constexpr std::string_view kAllocatedClaim = R"({
  "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
  "metadata": {"name": "trainer-0-gpus-x2v8q", "namespace": "ml",
               "uid": "5f1e2d3c-0000-4000-8000-000000000001",
               "annotations": {"resource.kubernetes.io/pod-claim-name": "gpus"}},
  "spec": {"devices": {
    "requests": [{"name": "gpus", "exactly": {
      "deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount",
      "count": 2,
      "selectors": [{"cel": {"expression":
        "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'"}}],
      "tolerations": [{"key": "gpu.nvidia.com/unhealthy", "operator": "Exists",
                       "effect": "NoSchedule"}]}}],
    "constraints": [{"requests": ["gpus"],
                     "matchAttribute": "resource.kubernetes.io/pcieRoot"}],
    "config": [{"opaque": {"driver": "gpu.nvidia.com", "parameters": {}}}]}},
  "status": {
    "allocation": {
      "devices": {"results": [
        {"request": "gpus", "driver": "gpu.nvidia.com", "pool": "dgx-h100-01",
         "device": "gpu-0"},
        {"request": "gpus", "driver": "gpu.nvidia.com", "pool": "dgx-h100-01",
         "device": "gpu-1", "adminAccess": false}]},
      "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["dgx-h100-01"]}]}]},
      "allocationTimestamp": "2025-06-01T10:00:00Z"},
    "reservedFor": [{"resource": "pods", "name": "trainer-0",
                     "uid": "9a8b7c6d-0000-4000-8000-000000000002"}]}})";

TEST(DraJsonTest, AllocatedClaimFromTemplate) {
  absl::StatusOr<ResourceClaim> claim = ResourceClaimFromJson(kAllocatedClaim);
  ASSERT_TRUE(claim.ok()) << claim.status();
  EXPECT_EQ(DraKey(claim->meta), "ml/trainer-0-gpus-x2v8q");
  ASSERT_THAT(claim->spec.requests, SizeIs(1));
  const DraDeviceRequest& request = claim->spec.requests[0];
  EXPECT_EQ(request.name, "gpus");
  EXPECT_FALSE(request.first_available);
  ASSERT_THAT(request.alternatives, SizeIs(1));
  const DraRequestAlternative& exactly = request.alternatives[0];
  EXPECT_EQ(exactly.name, "gpus");
  EXPECT_EQ(exactly.device_class, "gpu.nvidia.com");
  EXPECT_EQ(exactly.mode, DraRequestAlternative::Mode::kExactCount);
  EXPECT_EQ(exactly.count, 2);
  EXPECT_THAT(exactly.selectors,
              ElementsAre("device.attributes['gpu.nvidia.com'].productName == "
                          "'NVIDIA H100 80GB HBM3'"));
  ASSERT_THAT(exactly.tolerations, SizeIs(1));
  EXPECT_EQ(exactly.tolerations[0].op, "Exists");
  EXPECT_EQ(exactly.tolerations[0].effect, "NoSchedule");
  ASSERT_THAT(claim->spec.constraints, SizeIs(1));
  EXPECT_THAT(claim->spec.constraints[0].requests, ElementsAre("gpus"));
  EXPECT_EQ(claim->spec.constraints[0].match_attribute,
            "resource.kubernetes.io/pcieRoot");
  EXPECT_TRUE(claim->allocated);
  EXPECT_THAT(claim->allocation,
              ElementsAre(DraAllocatedDevice{"gpus", "gpu.nvidia.com",
                                             "dgx-h100-01", "gpu-0", false},
                          DraAllocatedDevice{"gpus", "gpu.nvidia.com",
                                             "dgx-h100-01", "gpu-1", false}));
  EXPECT_EQ(claim->allocated_node, "dgx-h100-01");
  EXPECT_THAT(claim->reserved_for_uids,
              ElementsAre("9a8b7c6d-0000-4000-8000-000000000002"));
}

TEST(DraJsonTest, FirstAvailableNamesEachSubrequestUnderItsRequest) {
  absl::StatusOr<ResourceClaim> claim = ResourceClaimFromJson(R"({
    "metadata": {"name": "inference", "namespace": "serve"},
    "spec": {"devices": {"requests": [{"name": "gpu", "firstAvailable": [
      {"name": "mig", "deviceClassName": "mig.nvidia.com",
       "selectors": [{"cel": {"expression":
         "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"}}]},
      {"name": "whole", "deviceClassName": "gpu.nvidia.com",
       "allocationMode": "All", "adminAccess": true}]}]}}})");
  ASSERT_TRUE(claim.ok()) << claim.status();
  ASSERT_THAT(claim->spec.requests, SizeIs(1));
  const DraDeviceRequest& request = claim->spec.requests[0];
  EXPECT_TRUE(request.first_available);
  ASSERT_THAT(request.alternatives, SizeIs(2));
  EXPECT_EQ(request.alternatives[0].name, "gpu/mig");
  EXPECT_EQ(request.alternatives[0].device_class, "mig.nvidia.com");
  EXPECT_EQ(request.alternatives[0].count, 1);  // default
  EXPECT_THAT(request.alternatives[0].selectors, SizeIs(1));
  EXPECT_EQ(request.alternatives[1].name, "gpu/whole");
  EXPECT_EQ(request.alternatives[1].mode, DraRequestAlternative::Mode::kAll);
  // A subrequest has no adminAccess upstream: not read.
  EXPECT_FALSE(request.alternatives[1].admin_access);
  EXPECT_FALSE(claim->allocated);
  EXPECT_EQ(claim->allocated_node, "");
}

TEST(DraJsonTest, ExactlyReadsAdminAccessAndDefaultsCount) {
  absl::StatusOr<ResourceClaim> claim = ResourceClaimFromJson(R"({"spec": {
    "devices": {"requests": [
      {"name": "a", "exactly": {"deviceClassName": "c", "adminAccess": true}},
      {"name": "b", "exactly": {"deviceClassName": "c", "count": 0,
                                "allocationMode": ""}}],
    "constraints": [{"distinctAttribute": "gpu.nvidia.com/uuid"}]}}})");
  ASSERT_TRUE(claim.ok()) << claim.status();
  EXPECT_TRUE(claim->spec.requests[0].alternatives[0].admin_access);
  EXPECT_EQ(claim->spec.requests[0].alternatives[0].count, 1);
  EXPECT_EQ(claim->spec.requests[1].alternatives[0].count, 1);  // 0: unset
  EXPECT_EQ(claim->spec.requests[1].alternatives[0].mode,
            DraRequestAlternative::Mode::kExactCount);
  EXPECT_TRUE(claim->spec.constraints[0].requests.empty());  // all requests
  EXPECT_EQ(claim->spec.constraints[0].distinct_attribute,
            "gpu.nvidia.com/uuid");
}

struct NodeSelectorCase {
  std::string terms;  // the nodeSelectorTerms array
  std::string node;
};

TEST(DraJsonTest, AllocatedNodeOnlyWhenTheSelectorNamesOneNode) {
  const std::vector<NodeSelectorCase> cases = {
      {R"([{"matchFields": [{"key": "metadata.name", "operator": "In",
                              "values": ["n1"]}]}])",
       "n1"},
      {R"([{"matchFields": [{"key": "metadata.name", "operator": "In",
                              "values": ["n1", "n2"]}]}])",
       ""},
      {R"([{"matchFields": [{"key": "metadata.name", "operator": "NotIn",
                              "values": ["n1"]}]}])",
       ""},
      {R"([{"matchExpressions": [{"key": "rack", "operator": "In",
                                   "values": ["r1"]}]}])",
       ""},
      {R"([{"matchFields": [{"key": "metadata.name", "operator": "In",
                              "values": ["n1"]}]},
          {"matchFields": [{"key": "metadata.name", "operator": "In",
                              "values": ["n2"]}]}])",
       ""},
      {"[]", ""},
  };
  for (const NodeSelectorCase& c : cases) {
    absl::StatusOr<ResourceClaim> claim = ResourceClaimFromJson(
        absl::StrCat(R"({"status": {"allocation": {"nodeSelector":
                        {"nodeSelectorTerms": )",
                     c.terms, "}}}}"));
    ASSERT_TRUE(claim.ok()) << claim.status() << c.terms;
    EXPECT_TRUE(claim->allocated);
    EXPECT_EQ(claim->allocated_node, c.node) << c.terms;
  }
}

TEST(DraJsonTest, ClaimTemplateReadsSpecSpec) {
  absl::StatusOr<ResourceClaimTemplate> claim_template =
      ResourceClaimTemplateFromJson(R"({
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
    "metadata": {"name": "two-h100", "namespace": "ml"},
    "spec": {"metadata": {"labels": {"team": "llm"}},
             "spec": {"devices": {"requests": [{"name": "gpus", "exactly": {
               "deviceClassName": "gpu.nvidia.com", "count": 2}}]}}}})");
  ASSERT_TRUE(claim_template.ok()) << claim_template.status();
  EXPECT_EQ(DraKey(claim_template->meta), "ml/two-h100");
  EXPECT_TRUE(claim_template->meta.labels.empty());  // the claims' labels
  ASSERT_THAT(claim_template->spec.requests, SizeIs(1));
  EXPECT_EQ(claim_template->spec.requests[0].alternatives[0].count, 2);
}

TEST(DraJsonTest, DeviceClassWithExtendedResourceName) {
  absl::StatusOr<DeviceClass> device_class = DeviceClassFromJson(R"({
    "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
    "metadata": {"name": "gpu.nvidia.com"},
    "spec": {"selectors": [{"cel": {"expression":
      "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}}],
      "extendedResourceName": "nvidia.com/gpu"}})");
  ASSERT_TRUE(device_class.ok()) << device_class.status();
  EXPECT_EQ(DraKey(device_class->meta), "gpu.nvidia.com");
  EXPECT_THAT(device_class->selectors,
              ElementsAre("device.driver == 'gpu.nvidia.com' && "
                          "device.attributes['gpu.nvidia.com'].type == 'gpu'"));
  EXPECT_EQ(device_class->extended_resource_name, "nvidia.com/gpu");
}

TEST(DraJsonTest, DeviceTaintRuleKeepsUnsetSelectorsUnset) {
  absl::StatusOr<DeviceTaintRule> rule = DeviceTaintRuleFromJson(R"({
    "apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule",
    "metadata": {"name": "dgx-h100-01-gpu-3-xid-79"},
    "spec": {"deviceSelector": {"driver": "gpu.nvidia.com",
                                "pool": "dgx-h100-01", "device": null},
             "taint": {"key": "gpu.nvidia.com/xid", "value": "79",
                       "effect": "NoExecute"}},
    "status": {"conditions": []}})");
  ASSERT_TRUE(rule.ok()) << rule.status();
  EXPECT_THAT(rule->driver, Optional(Eq("gpu.nvidia.com")));
  EXPECT_THAT(rule->pool, Optional(Eq("dgx-h100-01")));
  EXPECT_EQ(rule->device, std::nullopt);
  EXPECT_EQ(rule->taint, (DeviceTaint{.key = "gpu.nvidia.com/xid",
                                      .value = "79",
                                      .effect = "NoExecute"}));
}

TEST(DraJsonTest, DecodeUsesTheCallersPath) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  ASSERT_EQ(parser
                .parse(std::string_view(
                    R"({"spec": {"driver": "d", "devices": [{}]}})"))
                .get(root),
            simdjson::SUCCESS);
  absl::StatusOr<ResourceSlice> slice = DecodeResourceSlice(root, "items[3]");
  EXPECT_EQ(slice.status().message(), "items[3].spec.devices[0].name: missing");
}

TEST(DraJsonTest, MalformedJsonIsInvalidArgument) {
  absl::StatusOr<DeviceClass> device_class = DeviceClassFromJson(R"({"a": )");
  EXPECT_EQ(device_class.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(device_class.status().message()),
              StartsWith("malformed JSON"));
}

struct RejectCase {
  std::string_view kind;  // which decoder
  std::string json;
  std::string message;  // the whole message, or its start
};

absl::Status Decode(std::string_view kind, std::string_view json) {
  if (kind == "slice") return ResourceSliceFromJson(json).status();
  if (kind == "class") return DeviceClassFromJson(json).status();
  if (kind == "claim") return ResourceClaimFromJson(json).status();
  if (kind == "template") return ResourceClaimTemplateFromJson(json).status();
  return DeviceTaintRuleFromJson(json).status();
}

std::string Request(std::string_view body) {
  return absl::StrCat(R"({"spec": {"devices": {"requests": [{"name": "r", )",
                      Sv(body), "}]}}}");
}

TEST(DraJsonTest, RejectionsNameTheirPath) {
  const std::vector<RejectCase> cases = {
      {"slice", R"({"spec": {"driver": "d",
          "devices": [{"name": "a"}, {}, {}]}})",
       "ResourceSlice.spec.devices[1].name: missing"},
      {"slice", R"({"spec": {"driver": "d",
          "devices": [{"name": "a"}, {"name": "b"},
          {"name": "c", "capacity": {"memory": {"value": "x"}}}]}})",
       R"(ResourceSlice.spec.devices[2].capacity.memory.value: )"
       R"(invalid quantity "x")"},
      {"slice", R"({"spec": {"driver": "d",
          "devices": [{"name": "a", "capacity":
          {"gpu.nvidia.com/memory": {}}}]}})",
       R"(ResourceSlice.spec.devices[0].capacity["gpu.nvidia.com/memory"])"
       ".value: missing"},
      {"slice", R"({"spec": {"driver": "d",
          "sharedCounters": [{"name": "s", "counters":
          {"memory": {"value": true}}}]}})",
       "ResourceSlice.spec.sharedCounters[0].counters.memory.value: "
       "expected quantity (string or number), got boolean"},
      {"slice", R"({"spec": {"driver": "d",
          "devices": [{"name": "a", "consumesCounters":
          [{"counterSet": "s", "counters": {"memory": {"value": "1Qi"}}}]}]}})",
       R"(ResourceSlice.spec.devices[0].consumesCounters[0].counters.memory)"
       R"(.value: invalid quantity "1Qi")"},
      {"slice", R"({"spec": {"driver": "d",
          "devices": [{"name": "a", "attributes":
          {"index": {"int": "0"}}}]}})",
       "ResourceSlice.spec.devices[0].attributes.index.int: expected "
       "integer, got string"},
      {"slice", R"({"spec": {"driver": "d",
          "devices": [{"name": "a", "attributes":
          {"index": {"int": 0, "string": "0"}}}]}})",
       "ResourceSlice.spec.devices[0].attributes.index: more than one of "
       "string, int, bool and version set"},
      {"slice", R"({"spec": {"driver": "d",
          "devices": {"name": "a"}}})",
       "ResourceSlice.spec.devices: expected array, got object"},
      {"slice", R"({"spec": {"driver": 7}})",
       "ResourceSlice.spec.driver: expected string, got number"},
      {"slice", R"({"spec": {"driver": "d", "pool": {"generation": "1"}}})",
       "ResourceSlice.spec.pool.generation: expected integer, got string"},
      {"slice", R"({"spec": {"devices": []}})",
       "ResourceSlice.spec.driver: missing"},
      {"slice", R"({"spec": {"driver": ""}})",
       "ResourceSlice.spec.driver: missing"},
      {"slice", R"({"spec": {"driver": "d",
          "devices": [{"name": "a",
          "capacity": {"memory": {"value": "-1Gi"}}}]}})",
       "ResourceSlice.spec.devices[0].capacity.memory.value: invalid "
       "quantity \"-1Gi\": must be non-negative"},
      {"slice", R"({"spec": {"driver": "d", "pool": {"name": "p",
          "resourceSliceCount": 0}}})",
       "ResourceSlice.spec.pool.resourceSliceCount: must be at least 1, got 0"},
      {"slice", R"({"spec": []})",
       "ResourceSlice.spec: expected object, got array"},
      {"slice", "[]", "ResourceSlice: expected object, got array"},
      {"claim", Request(R"("exactly": {"count": -1})"),
       "ResourceClaim.spec.devices.requests[0].exactly.count: must not be "
       "negative, got -1"},
      {"claim", Request(R"("exactly": {"allocationMode": "Any"})"),
       "ResourceClaim.spec.devices.requests[0].exactly.allocationMode: "
       "unknown allocation mode \"Any\": expected ExactCount or All"},
      {"claim", Request(R"("firstAvailable": [{"name": "s", "count": -2}])"),
       "ResourceClaim.spec.devices.requests[0].firstAvailable[0].count: "
       "must not be negative, got -2"},
      {"claim", Request(R"("exactly": null, "firstAvailable": [])"),
       "ResourceClaim.spec.devices.requests[0]: one of exactly and "
       "firstAvailable is required"},
      {"claim", Request(R"("exactly": {}, "firstAvailable": [{"name": "s"}])"),
       "ResourceClaim.spec.devices.requests[0]: both exactly and "
       "firstAvailable are set"},
      {"claim", Request(R"("exactly": "gpu")"),
       "ResourceClaim.spec.devices.requests[0].exactly: expected object, "
       "got string"},
      {"claim", Request(R"("exactly": {"selectors": [{}]})"),
       "ResourceClaim.spec.devices.requests[0].exactly.selectors[0].cel: "
       "missing"},
      {"claim", Request(R"("exactly": {"selectors": [{"cel": {}}]})"),
       "ResourceClaim.spec.devices.requests[0].exactly.selectors[0].cel."
       "expression: missing"},
      {"claim", R"({"spec": {"devices": {"requests": [null]}}})",
       "ResourceClaim.spec.devices.requests[0]: expected object, got null"},
      {"claim", R"({"spec": {"devices": {"constraints": [
          {"requests": "r"}]}}})",
       "ResourceClaim.spec.devices.constraints[0].requests: expected array, "
       "got string"},
      {"claim", R"({"status": {"allocation": {"devices": {"results": [
          {"device": 0}]}}}})",
       "ResourceClaim.status.allocation.devices.results[0].device: expected "
       "string, got number"},
      {"claim", R"({"status": {"allocation": {"nodeSelector":
          {"nodeSelectorTerms": {}}}}})",
       "ResourceClaim.status.allocation.nodeSelector.nodeSelectorTerms: "
       "expected array, got object"},
      {"claim", R"({"status": {"reservedFor": [{"uid": 1}]}})",
       "ResourceClaim.status.reservedFor[0].uid: expected string, got number"},
      {"template", R"({"spec": {"spec": {"devices": {"requests": [
          {"name": "r"}]}}}})",
       "ResourceClaimTemplate.spec.spec.devices.requests[0]: one of exactly "
       "and firstAvailable is required"},
      {"class", R"({"spec": {"selectors": [{"cel": {"expression": 1}}]}})",
       "DeviceClass.spec.selectors[0].cel.expression: expected string, got "
       "number"},
      {"class", R"({"spec": {"extendedResourceName": ["nvidia.com/gpu"]}})",
       "DeviceClass.spec.extendedResourceName: expected string, got array"},
      {"rule", R"({"spec": {"deviceSelector": {"device": 3}}})",
       "DeviceTaintRule.spec.deviceSelector.device: expected string, got "
       "number"},
      {"rule", R"({"spec": {"taint": "NoExecute"}})",
       "DeviceTaintRule.spec.taint: expected object, got string"},
  };
  for (const RejectCase& c : cases) {
    const absl::Status status = Decode(c.kind, c.json);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.json;
    EXPECT_THAT(std::string(status.message()), StartsWith(c.message)) << c.json;
  }
}

}  // namespace
}  // namespace gpusched
