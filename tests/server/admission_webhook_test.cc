#include "api/server/admission_webhook.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "absl/strings/escaping.h"

namespace gpusched {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

// An AdmissionReview as kube-apiserver sends it for a pod CREATE.
Json Review(Json pod_spec, std::string operation = "CREATE") {
  return {
      {"apiVersion", "admission.k8s.io/v1"},
      {"kind", "AdmissionReview"},
      {"request",
       {{"uid", "705ab4f5-6393-11e8-b7cc-42010a800002"},
        {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
        {"resource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
        {"namespace", "team-a"},
        {"name", "train-0"},
        {"operation", operation},
        {"object",
         {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", "train-0"}, {"namespace", "team-a"}}},
          {"spec", std::move(pod_spec)}}},
        {"oldObject", nullptr}}}};
}

Json GpuschedPodSpec() {
  return {{"schedulerName", "gpusched"},
          {"containers", {{{"name", "main"}, {"image", "pause"}}}}};
}

http::Response Post(const Json& review) {
  AdmissionWebhook webhook({});
  return webhook.Handle({.method = "POST",
                         .target = std::string(kMutatePodsPath),
                         .body = review.dump()});
}

// The response's patch applied to the reviewed pod, as the API server does.
Json PatchedPod(const Json& review, const Json& response) {
  std::string patch;
  EXPECT_TRUE(absl::Base64Unescape(
      response["response"]["patch"].get<std::string>(), &patch));
  return review["request"]["object"].patch(Json::parse(patch));
}

TEST(AdmissionWebhookTest, GatesNewPodOfGpuschedWithoutGates) {
  Json review = Review(GpuschedPodSpec());
  http::Response http = Post(review);
  ASSERT_EQ(http.status, 200) << http.body;
  Json response = Json::parse(http.body);
  EXPECT_EQ(response["apiVersion"], "admission.k8s.io/v1");
  EXPECT_EQ(response["kind"], "AdmissionReview");
  EXPECT_EQ(response["response"]["uid"], review["request"]["uid"]);
  EXPECT_EQ(response["response"]["allowed"], true);
  EXPECT_EQ(response["response"]["patchType"], "JSONPatch");
  Json pod = PatchedPod(review, response);
  EXPECT_EQ(pod["spec"]["schedulingGates"],
            Json::parse(R"([{"name":"gpusched.io/admission"}])"));
}

TEST(AdmissionWebhookTest, AppendsGateToOtherGates) {
  Json spec = GpuschedPodSpec();
  spec["schedulingGates"] = {{{"name", "example.com/other"}}};
  Json review = Review(spec);
  Json response = Json::parse(Post(review).body);
  Json pod = PatchedPod(review, response);
  EXPECT_EQ(pod["spec"]["schedulingGates"],
            Json::parse(R"([{"name":"example.com/other"},
                            {"name":"gpusched.io/admission"}])"));
}

TEST(AdmissionWebhookTest, NullGateListIsCreated) {
  Json spec = GpuschedPodSpec();
  spec["schedulingGates"] = nullptr;
  Json review = Review(spec);
  Json pod = PatchedPod(review, Json::parse(Post(review).body));
  EXPECT_EQ(pod["spec"]["schedulingGates"].size(), 1u);
}

TEST(AdmissionWebhookTest, GateAlreadyThereIsNotAddedTwice) {
  Json spec = GpuschedPodSpec();
  spec["schedulingGates"] = {{{"name", "gpusched.io/admission"}}};
  http::Response http = Post(Review(spec));
  ASSERT_EQ(http.status, 200) << http.body;
  Json response = Json::parse(http.body)["response"];
  EXPECT_EQ(response["allowed"], true);
  EXPECT_FALSE(response.contains("patch"));
  EXPECT_FALSE(response.contains("patchType"));
}

// Allowed as they are: another scheduler, or not a pod CREATE.
TEST(AdmissionWebhookTest, OtherPodsAndOperationsPassUnpatched) {
  Json other = GpuschedPodSpec();
  other["schedulerName"] = "default-scheduler";
  Json binding = Review(GpuschedPodSpec());
  binding["request"]["subResource"] = "binding";
  Json deployment = Review(GpuschedPodSpec());
  deployment["request"]["kind"] = {
      {"group", "apps"}, {"version", "v1"}, {"kind", "Deployment"}};
  for (const Json& review :
       {Review(other), Review(GpuschedPodSpec(), "UPDATE"),
        Review(GpuschedPodSpec(), "DELETE"), binding, deployment}) {
    http::Response http = Post(review);
    ASSERT_EQ(http.status, 200) << http.body;
    Json response = Json::parse(http.body)["response"];
    EXPECT_EQ(response["uid"], review["request"]["uid"]);
    EXPECT_EQ(response["allowed"], true);
    EXPECT_FALSE(response.contains("patch")) << review.dump();
  }
}

TEST(AdmissionWebhookTest, ConfiguredSchedulerNameIsGated) {
  Json spec = GpuschedPodSpec();
  spec["schedulerName"] = "gpu-batch";
  absl::StatusOr<AdmissionDecision> mine =
      DecidePodGating(Review(spec).dump(), {.scheduler_name = "gpu-batch"});
  ASSERT_TRUE(mine.ok()) << mine.status();
  EXPECT_EQ(mine->gating, PodGating::kGate);
  EXPECT_EQ(mine->pod, "team-a/train-0");
  absl::StatusOr<AdmissionDecision> theirs = DecidePodGating(
      Review(GpuschedPodSpec()).dump(), {.scheduler_name = "gpu-batch"});
  ASSERT_TRUE(theirs.ok()) << theirs.status();
  EXPECT_EQ(theirs->gating, PodGating::kNotOurs);
}

// Only pods the queueing core holds wait at the gate: a pod of our
// scheduler with no queue and no gang has nothing to be admitted to, and
// nobody would lift its gate.
TEST(AdmissionWebhookTest, OnlyPodsTheQueueingCoreManagesAreGated) {
  std::vector<std::string> asked;
  const AdmissionWebhookOptions options{.manages = [&asked](const Pod& pod) {
    asked.push_back(pod.meta.namespace_name + "/" + pod.meta.name);
    return pod.meta.labels.contains("kueue.x-k8s.io/queue-name");
  }};
  Json plain = Review(GpuschedPodSpec());
  Json queued = Review(GpuschedPodSpec());
  queued["request"]["object"]["metadata"]["labels"] = {
      {"kueue.x-k8s.io/queue-name", "team-a"}, {"odd", 7}};
  absl::StatusOr<AdmissionDecision> plain_decision =
      DecidePodGating(plain.dump(), options);
  ASSERT_TRUE(plain_decision.ok()) << plain_decision.status();
  EXPECT_EQ(plain_decision->gating, PodGating::kNotManaged);
  absl::StatusOr<AdmissionDecision> queued_decision =
      DecidePodGating(queued.dump(), options);
  ASSERT_TRUE(queued_decision.ok()) << queued_decision.status();
  EXPECT_EQ(queued_decision->gating, PodGating::kGate);
  EXPECT_EQ(asked,
            (std::vector<std::string>{"team-a/train-0", "team-a/train-0"}));
  // Another scheduler's pod, not adopted, is not even looked at.
  Json other = GpuschedPodSpec();
  other["schedulerName"] = "volcano";
  ASSERT_TRUE(DecidePodGating(Review(other).dump(), options).ok());
  EXPECT_EQ(asked.size(), 2u);
}

AdmissionWebhookOptions ManagesQueuedPods() {
  return {.manages = [](const Pod& pod) {
    return pod.meta.labels.contains("kueue.x-k8s.io/queue-name");
  }};
}

Json DefaultSchedulerReview(bool queued) {
  Json spec = GpuschedPodSpec();
  spec["schedulerName"] = "default-scheduler";
  Json review = Review(spec);
  if (queued) {
    review["request"]["object"]["metadata"]["labels"] = {
        {"kueue.x-k8s.io/queue-name", "team-a"}};
  }
  return review;
}

// A Job's pod for the default scheduler in a queue (as under Kueue) would
// be bound at once, past its quota: it is moved to gpusched and gated.
TEST(AdmissionWebhookTest, QueuedPodOfTheDefaultSchedulerIsMovedAndGated) {
  Json review = DefaultSchedulerReview(/*queued=*/true);
  absl::StatusOr<AdmissionDecision> decision =
      DecidePodGating(review.dump(), ManagesQueuedPods());
  ASSERT_TRUE(decision.ok()) << decision.status();
  EXPECT_EQ(decision->gating, PodGating::kAdopt);
  Json pod = PatchedPod(review, Json::parse(AdmissionResponseJson(*decision)));
  EXPECT_EQ(pod["spec"]["schedulerName"], "gpusched");
  EXPECT_EQ(pod["spec"]["schedulingGates"],
            Json::parse(R"([{"name":"gpusched.io/admission"}])"));
}

TEST(AdmissionWebhookTest, AdoptedPodAlreadyGatedGetsOnlyItsScheduler) {
  Json review = DefaultSchedulerReview(/*queued=*/true);
  review["request"]["object"]["spec"]["schedulingGates"] = {
      {{"name", "gpusched.io/admission"}}};
  absl::StatusOr<AdmissionDecision> decision =
      DecidePodGating(review.dump(), ManagesQueuedPods());
  ASSERT_TRUE(decision.ok()) << decision.status();
  Json pod = PatchedPod(review, Json::parse(AdmissionResponseJson(*decision)));
  EXPECT_EQ(pod["spec"]["schedulerName"], "gpusched");
  EXPECT_EQ(pod["spec"]["schedulingGates"].size(), 1u);
}

// Unqueued pods of the default scheduler, and every pod of a scheduler not
// adopted, pass as they are; so does everything when nothing is adopted,
// while a Kueue manager is active (its pods are its own), or when the
// webhook cannot tell what the queueing core holds.
TEST(AdmissionWebhookTest, OnlyQueuedPodsOfAdoptedSchedulersAreMoved) {
  const AdmissionWebhookOptions manages = ManagesQueuedPods();
  EXPECT_EQ(
      DecidePodGating(DefaultSchedulerReview(false).dump(), manages)->gating,
      PodGating::kNotOurs);
  AdmissionWebhookOptions none = ManagesQueuedPods();
  none.adopted_schedulers.clear();
  EXPECT_EQ(DecidePodGating(DefaultSchedulerReview(true).dump(), none)->gating,
            PodGating::kNotOurs);
  EXPECT_EQ(DecidePodGating(DefaultSchedulerReview(true).dump(), {})->gating,
            PodGating::kNotOurs);
  AdmissionWebhookOptions kueue_active = ManagesQueuedPods();
  kueue_active.adopting = [] { return false; };
  EXPECT_EQ(DecidePodGating(DefaultSchedulerReview(true).dump(), kueue_active)
                ->gating,
            PodGating::kNotOurs);
  http::Response unpatched = Post(DefaultSchedulerReview(true));
  EXPECT_FALSE(Json::parse(unpatched.body)["response"].contains("patch"));
}

TEST(AdmissionWebhookTest, BadReviewsGet400NamingTheField) {
  Json no_uid = Review(GpuschedPodSpec());
  no_uid["request"].erase("uid");
  Json wrong_kind = Review(GpuschedPodSpec());
  wrong_kind["kind"] = "TokenReview";
  Json old_version = Review(GpuschedPodSpec());
  old_version["apiVersion"] = "admission.k8s.io/v1beta1";
  Json no_request = Review(GpuschedPodSpec());
  no_request.erase("request");
  Json bad_gates = GpuschedPodSpec();
  bad_gates["schedulingGates"] = "gpusched.io/admission";
  Json no_object = Review(GpuschedPodSpec());
  no_object["request"].erase("object");
  struct Case {
    std::string body;
    std::string field;
  } cases[] = {
      {"{not json", "body: not JSON"},
      {"[1,2]", "body: not a JSON object"},
      {"", "body: not JSON"},
      {no_uid.dump(), "request.uid: missing"},
      {wrong_kind.dump(), "apiVersion/kind"},
      {old_version.dump(), "apiVersion/kind"},
      {no_request.dump(), "request: missing"},
      {Review(bad_gates).dump(), "request.object.spec.schedulingGates"},
      {no_object.dump(), "request.object: missing"},
      // A number too large for a double (found by
      // tests/fuzz/admission_review_fuzz when the reader threw on it).
      {R"({"apiVersion": 1e999, "kind": "AdmissionReview"})",
       "body: not JSON (malformed JSON"},
  };
  AdmissionWebhook webhook({});
  for (const Case& c : cases) {
    http::Response http = webhook.Handle({.method = "POST", .body = c.body});
    EXPECT_EQ(http.status, 400) << c.body;
    EXPECT_THAT(http.body, HasSubstr(c.field)) << c.body;
  }
}

TEST(AdmissionWebhookTest, BodyOverTheLimitGets400) {
  AdmissionWebhook webhook({.body_limit_bytes = 64});
  std::string body = Review(GpuschedPodSpec()).dump();
  http::Response http = webhook.Handle({.method = "POST", .body = body});
  EXPECT_EQ(http.status, 400);
  EXPECT_THAT(http.body, HasSubstr("over the limit of 64"));
}

TEST(AdmissionWebhookTest, RegisteredForPostOnMutatePods) {
  http::Router router;
  AdmissionWebhook({}).Register(router);
  http::Response post =
      router.Handle({.method = "POST",
                     .target = "/mutate-pods",
                     .body = Review(GpuschedPodSpec()).dump()});
  EXPECT_EQ(post.status, 200) << post.body;
  EXPECT_EQ(router.Handle({.method = "GET", .target = "/mutate-pods"}).status,
            405);
}

TEST(WebhookFlagsTest, DefaultsNameTheDeployedObjects) {
  absl::StatusOr<WebhookServerOptions> options =
      WebhookServerOptionsFrom({.listen = "0.0.0.0:9443"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->listener.certs.secret_namespace, "gpusched-system");
  EXPECT_EQ(options->listener.certs.secret_name, "gpusched-webhook-tls");
  EXPECT_EQ(options->listener.certs.webhook_config_name, "gpusched");
  EXPECT_THAT(options->listener.certs.names,
              ::testing::ElementsAre(
                  "gpusched-webhook.gpusched-system.svc",
                  "gpusched-webhook.gpusched-system.svc.cluster.local"));
  EXPECT_EQ(options->review.scheduler_name, "gpusched");
  EXPECT_THAT(options->review.adopted_schedulers,
              ::testing::ElementsAre("default-scheduler"));
}

TEST(WebhookFlagsTest, MalformedFlagsAreErrors) {
  EXPECT_THAT(std::string(WebhookServerOptionsFrom({.secret = "no-namespace"})
                              .status()
                              .message()),
              HasSubstr("--webhook-secret"));
  EXPECT_FALSE(WebhookServerOptionsFrom({.dns_names = " , "}).ok());
  EXPECT_FALSE(WebhookServerOptionsFrom({.config_name = ""}).ok());
}

}  // namespace
}  // namespace gpusched
