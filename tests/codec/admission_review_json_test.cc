// AdmissionReview JSON: what a review says of a pod CREATE, the gate patch
// and the response, byte for byte as the webhook has always answered.
#include "api/codec/admission_review_json.h"

#include <gtest/gtest.h>

#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace gpusched {
namespace {

constexpr std::string_view kGate = "gpusched.io/admission";

std::string Review(std::string_view request) {
  return absl::StrCat(
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":)",
      absl::string_view(request.data(), request.size()), "}");
}

TEST(AdmissionReviewJsonTest, ReadsAPodCreate) {
  absl::StatusOr<AdmissionReviewRequest> review = DecodeAdmissionReview(
      Review(R"({"uid":"r1","operation":"CREATE","namespace":"ml",
                 "kind":{"group":"","version":"v1","kind":"Pod"},
                 "object":{"metadata":{"generateName":"job-",
                                       "labels":{"q":"a","n":1}},
                           "spec":{"schedulerName":"gpusched",
                                   "schedulingGates":[{"name":"x"}]}}})"),
      1 << 20, kGate);
  ASSERT_TRUE(review.ok()) << review.status();
  EXPECT_EQ(review->uid, "r1");
  EXPECT_TRUE(review->pod_create);
  EXPECT_EQ(review->scheduler_name, "gpusched");
  EXPECT_EQ(review->pod_for_logs, "ml/job-*");
  EXPECT_EQ(review->pod.meta.labels.size(), 1u);  // the number is skipped
  EXPECT_EQ(review->gates, GateListing::kWithoutGate);
}

TEST(AdmissionReviewJsonTest, OtherOperationsAreNotReadFurther) {
  absl::StatusOr<AdmissionReviewRequest> review = DecodeAdmissionReview(
      Review(R"({"uid":"r1","operation":"UPDATE","kind":{"kind":"Pod"}})"),
      1 << 20, kGate);
  ASSERT_TRUE(review.ok()) << review.status();
  EXPECT_FALSE(review->pod_create);
}

TEST(AdmissionReviewJsonTest, BadReviewsNameTheField) {
  struct Case {
    std::string body;
    std::string message;
  } cases[] = {
      {"[1]", "AdmissionReview body: not a JSON object"},
      {Review(R"({"operation":"CREATE"})"),
       "AdmissionReview request.uid: missing"},
      {Review(R"({"uid":"r","operation":"CREATE","kind":{"kind":"Pod"}})"),
       "AdmissionReview request.object: missing for a Pod CREATE"},
      {Review(R"({"uid":"r","operation":"CREATE","kind":{"kind":"Pod"},
                  "object":{"spec":{"schedulingGates":"x"}}})"),
       "AdmissionReview request.object.spec.schedulingGates: not a list"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(DecodeAdmissionReview(c.body, 1 << 20, kGate).status().message(),
              c.message);
  }
  EXPECT_NE(DecodeAdmissionReview("{x", 1 << 20, kGate)
                .status()
                .message()
                .find("AdmissionReview body: not JSON (malformed JSON at byte"),
            std::string::npos);
}

TEST(AdmissionReviewJsonTest, PatchAndResponseBytes) {
  const std::string create = EncodeAddGatePatch(GateListing::kNoList, kGate);
  EXPECT_EQ(
      create,
      R"([{"op":"add","path":"/spec/schedulingGates","value":[{"name":"gpusched.io/admission"}]}])");
  EXPECT_EQ(
      EncodeAddGatePatch(GateListing::kWithoutGate, kGate),
      R"([{"op":"add","path":"/spec/schedulingGates/-","value":{"name":"gpusched.io/admission"}}])");
  EXPECT_EQ(
      EncodeAdmissionResponse("r1", create),
      absl::StrCat(
          R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",)"
          R"("response":{"allowed":true,"patch":")",
          absl::Base64Escape(create),
          R"(","patchType":"JSONPatch","uid":"r1"}})"));
  EXPECT_EQ(EncodeAdmissionResponse("r2", ""),
            R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",)"
            R"("response":{"allowed":true,"uid":"r2"}})");
}

}  // namespace
}  // namespace gpusched
