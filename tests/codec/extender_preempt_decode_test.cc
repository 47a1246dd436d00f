// DecodePreemptionArgs on victim maps kube-scheduler would not send but a
// client could: each is read without touching memory it does not own.
#include <string>
#include <vector>

#include "api/codec/extender_json.h"
#include "gtest/gtest.h"

namespace gpusched {
namespace {

constexpr char kPod[] = R"("Pod":{"metadata":{"name":"p","namespace":"ns"}})";

// Found by tests/fuzz/extender_fuzz: a node's victims without "Pods" read a
// simdjson element that points at no document (a null dereference; UBSan
// reported it, a release build could crash).
TEST(ExtenderPreemptDecodeTest, VictimsWithoutPodsNameNoVictims) {
  for (const char* victims : {R"({"NumPDBViolations":0})", R"({})",
                              R"({"pods":null})", R"({"Pods":null})"}) {
    const std::string body = std::string("{") + kPod +
                             R"(,"NodeNameToMetaVictims":{"n1":)" + victims +
                             "}}";
    absl::StatusOr<PreemptionArgs> args = DecodePreemptionArgs(body);
    ASSERT_TRUE(args.ok()) << body << ": " << args.status();
    ASSERT_EQ(args->candidates.size(), 1u) << body;
    EXPECT_EQ(args->candidates[0].node, "n1");
    EXPECT_TRUE(args->candidates[0].victim_uids.empty()) << body;
  }
}

TEST(ExtenderPreemptDecodeTest, PodsKeyIsMatchedInAnyCase) {
  const std::string body = std::string("{") + kPod +
                           R"(,"NodeNameToMetaVictims":{"n1":{"pods":[)"
                           R"({"UID":"u1"}]}}})";
  absl::StatusOr<PreemptionArgs> args = DecodePreemptionArgs(body);
  ASSERT_TRUE(args.ok()) << args.status();
  ASSERT_EQ(args->candidates.size(), 1u);
  EXPECT_EQ(args->candidates[0].victim_uids, std::vector<std::string>{"u1"});
}

}  // namespace
}  // namespace gpusched
