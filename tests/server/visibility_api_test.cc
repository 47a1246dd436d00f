// The visibility API's handlers: routing, authentication and authorization
// answers, paging, Table output and Status errors.
#include "api/server/visibility_api.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "absl/strings/str_cat.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

constexpr std::string_view kLocalQueuePath =
    "/apis/visibility.gpusched.io/v1alpha1/namespaces/team-a/localqueues/lq-a/"
    "pendingworkloads";
constexpr std::string_view kClusterQueuePath =
    "/apis/visibility.gpusched.io/v1alpha1/clusterqueues/cq/pendingworkloads";

PendingWorkload Pending(std::string ns, std::string name, std::string lq,
                        size_t in_cq, size_t in_lq) {
  return {.key = ns + "/" + name,
          .namespace_name = ns,
          .name = name,
          .local_queue = lq,
          .cluster_queue = "cq",
          .position_in_cluster_queue = in_cq,
          .position_in_local_queue = in_lq};
}

// cq holds a1, b1, a2 in that order; a1 and a2 come from team-a/lq-a.
std::shared_ptr<const QueueView> ThreeWorkloads() {
  auto view = std::make_shared<QueueView>();
  view->cluster_queues.push_back(
      {.name = "cq",
       .pending = {Pending("team-a", "a1", "lq-a", 0, 0),
                   Pending("team-b", "b1", "lq-b", 1, 0),
                   Pending("team-a", "a2", "lq-a", 2, 1)}});
  view->local_queues = {
      {.namespace_name = "team-a", .name = "lq-a", .cluster_queue = "cq"},
      {.namespace_name = "team-b", .name = "lq-b", .cluster_queue = "cq"}};
  return view;
}

// Alice may read team-a's LocalQueues only; every review is recorded.
class VisibilityApiTest : public ::testing::Test {
 protected:
  VisibilityApi Api() {
    return VisibilityApi(
        {.queues = [this] { return view_; },
         .authenticate =
             [this](const http::Request&) -> absl::StatusOr<RequestUser> {
           if (!authentication_.ok()) return authentication_;
           return RequestUser{.name = user_};
         },
         .authorize = [this](const RequestUser& user,
                             const ResourceAttributes& a)
             -> absl::StatusOr<AccessVerdict> {
           reviews_.push_back(a);
           if (!review_error_.ok()) return review_error_;
           return AccessVerdict{.allowed = user.name == "admin" ||
                                           (user.name == "alice" &&
                                            a.namespace_name == "team-a")};
         },
         .now_ms = [] { return int64_t{61'000}; },
         .forecast = [this] { return forecast_; },
         .explain = [this](const std::string& key)
             -> absl::StatusOr<WorkloadExplanation> {
           explained_.push_back(key);
           if (key != "team-a/a2") return absl::NotFoundError("no " + key);
           return WorkloadExplanation{.key = "team-a/a2",
                                      .namespace_name = "team-a",
                                      .local_queue = "lq-a",
                                      .cluster_queue = "cq",
                                      .position_in_cluster_queue = 2,
                                      .pending_in_cluster_queue = 3};
         },
         .deciding = [this] { return deciding_; },
         .gpu_map = [this] { return gpu_map_; },
         .decisions = [this] { return decisions_; }});
  }
  http::Response Get(std::string_view target, std::string query = "",
                     std::string accept = "") {
    http::Request request{.method = "GET",
                          .target = std::string(target),
                          .query = std::move(query)};
    if (!accept.empty()) request.headers.emplace_back("accept", accept);
    return Api().Handle(request);
  }

  std::shared_ptr<const QueueView> view_ = ThreeWorkloads();
  std::shared_ptr<const StartForecast> forecast_;
  std::shared_ptr<const GpuMap> gpu_map_;
  std::shared_ptr<const RecentDecisions> decisions_;
  std::string user_ = "alice";
  bool deciding_ = true;
  std::vector<std::string> explained_;
  absl::Status authentication_;
  absl::Status review_error_;
  std::vector<ResourceAttributes> reviews_;
};

std::vector<std::string> ItemNames(const http::Response& response) {
  std::vector<std::string> names;
  const Json summary = Json::parse(response.body);
  for (const Json& item : summary["items"]) {
    names.push_back(item["metadata"]["name"]);
  }
  return names;
}

TEST_F(VisibilityApiTest, LocalQueueListsItsWorkloadsWithPositions) {
  http::Response response = Get(kLocalQueuePath);
  ASSERT_EQ(response.status, 200) << response.body;
  Json items = Json::parse(response.body)["items"];
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[1]["metadata"]["name"], "a2");
  EXPECT_EQ(items[1]["positionInClusterQueue"], 2);
  EXPECT_EQ(items[1]["positionInLocalQueue"], 1);
  ASSERT_EQ(reviews_.size(), 1u);
  EXPECT_EQ(reviews_[0], (ResourceAttributes{.verb = "get",
                                             .group = "visibility.gpusched.io",
                                             .version = "v1alpha1",
                                             .resource = "localqueues",
                                             .subresource = "pendingworkloads",
                                             .namespace_name = "team-a",
                                             .name = "lq-a"}));
}

TEST_F(VisibilityApiTest, AnotherNamespaceIsForbidden) {
  http::Response response =
      Get("/apis/visibility.gpusched.io/v1alpha1/namespaces/team-b/localqueues/"
          "lq-b/pendingworkloads");
  EXPECT_EQ(response.status, 403);
  Json status = Json::parse(response.body);
  EXPECT_EQ(status["kind"], "Status");
  EXPECT_EQ(status["reason"], "Forbidden");
  EXPECT_THAT(std::string(status["message"]),
              HasSubstr("User \"alice\" cannot get resource "
                        "\"localqueues/pendingworkloads\""));
}

TEST_F(VisibilityApiTest, ClusterQueueIsReviewedClusterScoped) {
  EXPECT_EQ(Get(kClusterQueuePath).status, 403);
  ASSERT_EQ(reviews_.size(), 1u);
  EXPECT_EQ(reviews_[0].resource, "clusterqueues");
  EXPECT_EQ(reviews_[0].namespace_name, "");
  EXPECT_EQ(reviews_[0].name, "cq");
}

TEST_F(VisibilityApiTest, UnknownQueueIs404AfterTheReview) {
  http::Response response =
      Get("/apis/visibility.gpusched.io/v1alpha1/namespaces/team-a/localqueues/"
          "nope/pendingworkloads");
  EXPECT_EQ(response.status, 404);
  EXPECT_EQ(Json::parse(response.body)["reason"], "NotFound");
  // Reviewed first: whether a queue exists is not told to whom may not see.
  EXPECT_EQ(reviews_.size(), 1u);
}

TEST_F(VisibilityApiTest, LimitAndOffsetPage) {
  EXPECT_EQ(ItemNames(Get(kLocalQueuePath, "limit=1")),
            std::vector<std::string>{"a1"});
  EXPECT_EQ(ItemNames(Get(kLocalQueuePath, "offset=1&limit=5")),
            std::vector<std::string>{"a2"});
  EXPECT_TRUE(ItemNames(Get(kLocalQueuePath, "offset=7")).empty());
}

TEST_F(VisibilityApiTest, BadPagingIs400) {
  for (std::string query : {"limit=0", "limit=x", "offset=-1"}) {
    http::Response response = Get(kLocalQueuePath, query);
    EXPECT_EQ(response.status, 400) << query;
    EXPECT_EQ(Json::parse(response.body)["reason"], "BadRequest");
  }
}

TEST_F(VisibilityApiTest, TableAcceptGetsATable) {
  http::Response response =
      Get(kLocalQueuePath, "",
          "application/json;as=Table;v=v1;g=meta.k8s.io,application/json");
  ASSERT_EQ(response.status, 200);
  Json table = Json::parse(response.body);
  EXPECT_EQ(table["kind"], "Table");
  EXPECT_EQ(table["rows"].size(), 2u);
  EXPECT_EQ(
      Json::parse(Get(kLocalQueuePath, "", "application/json").body)["kind"],
      "PendingWorkloadsSummary");
}

TEST_F(VisibilityApiTest, ParentResourceIsTheQueueWithItsSummary) {
  http::Response response =
      Get("/apis/visibility.gpusched.io/v1alpha1/namespaces/team-a/"
          "localqueues/lq-a");
  ASSERT_EQ(response.status, 200) << response.body;
  Json queue = Json::parse(response.body);
  EXPECT_EQ(queue["kind"], "LocalQueue");
  EXPECT_EQ(queue["pendingWorkloadsSummary"]["items"].size(), 2u);
  EXPECT_EQ(reviews_.at(0).subresource, "");
}

TEST_F(VisibilityApiTest, DiscoveryNeedsAuthenticationOnly) {
  for (std::string_view path : {"/apis", "/apis/visibility.gpusched.io",
                                "/apis/visibility.gpusched.io/v1alpha1"}) {
    EXPECT_EQ(Get(path).status, 200) << path;
  }
  EXPECT_TRUE(reviews_.empty());
}

TEST_F(VisibilityApiTest, UnauthenticatedIs401AndNotReviewed) {
  authentication_ = absl::UnauthenticatedError("no client certificate");
  http::Response response = Get(kLocalQueuePath);
  EXPECT_EQ(response.status, 401);
  EXPECT_EQ(Json::parse(response.body)["message"], "no client certificate");
  EXPECT_EQ(Get("/apis").status, 401);
  EXPECT_TRUE(reviews_.empty());
  authentication_ = absl::UnavailableError("not read yet");
  EXPECT_EQ(Get(kLocalQueuePath).status, 503);
}

TEST_F(VisibilityApiTest, FailedReviewIs500) {
  review_error_ = absl::UnavailableError("SubjectAccessReview: refused");
  http::Response response = Get(kLocalQueuePath);
  EXPECT_EQ(response.status, 500);
  EXPECT_THAT(response.body, HasSubstr("refused"));
}

TEST_F(VisibilityApiTest, MalformedPathsAre404AndOtherMethods405) {
  for (std::string_view path :
       {"/apis/visibility.gpusched.io/v1alpha1/clusterqueues/cq/other",
        "/apis/visibility.gpusched.io/v1alpha1/cohorts/c",
        "/apis/visibility.gpusched.io/v1alpha1/namespaces/team-a/workloads",
        "/apis/visibility.gpusched.io/v1alpha1/namespaces/team-a/workloads/w",
        "/apis/visibility.gpusched.io/v1alpha1/namespaces/team-a/workloads/w/"
        "pendingworkloads",
        "/apis/visibility.gpusched.io/v1alpha1/namespaces/team-a/"
        "localqueues/lq-a/explain",
        "/apis/visibility.gpusched.io/v1alpha1/namespaces/team-a/"
        "clusterqueues/cq",
        "/apis/visibility.gpusched.io/v1alpha1/localqueues/lq-a",
        "/apis/visibility.gpusched.io/v1alpha1/namespaces//localqueues/x",
        "/apis/visibility.gpusched.io/v1alpha1/gpunodes/n1",
        "/apis/visibility.gpusched.io/v1alpha1/namespaces/team-a/gpunodes",
        "/apis/visibility.gpusched.io/v1alpha1/decisions/d",
        "/apis/other.io/v1"}) {
    EXPECT_EQ(Get(path).status, 404) << path;
  }
  EXPECT_TRUE(reviews_.empty());
  http::Request post{.method = "POST", .target = std::string(kLocalQueuePath)};
  EXPECT_EQ(Api().Handle(post).status, 405);
}

TEST_F(VisibilityApiTest, NoQueuesYetIs503) {
  view_ = nullptr;
  EXPECT_EQ(Get(kLocalQueuePath).status, 503);
}

constexpr std::string_view kExplainPath =
    "/apis/visibility.gpusched.io/v1alpha1/namespaces/team-a/workloads/a2/"
    "explain";

TEST_F(VisibilityApiTest, CollectionsAreReviewedAsList) {
  EXPECT_EQ(Get("/apis/visibility.gpusched.io/v1alpha1/clusterqueues").status,
            403);
  ASSERT_EQ(reviews_.size(), 1u);
  EXPECT_EQ(reviews_[0].verb, "list");
  EXPECT_EQ(reviews_[0].name, "");
  http::Response response =
      Get("/apis/visibility.gpusched.io/v1alpha1/namespaces/team-a/"
          "localqueues");
  ASSERT_EQ(response.status, 200) << response.body;
  Json list = Json::parse(response.body);
  EXPECT_EQ(list["kind"], "LocalQueueList");
  ASSERT_EQ(list["items"].size(), 1u);  // team-b's is not listed
  EXPECT_EQ(list["items"][0]["metadata"]["name"], "lq-a");
  EXPECT_EQ(list["items"][0]["status"]["clusterQueue"], "cq");
  EXPECT_EQ(reviews_[1].verb, "list");
  EXPECT_EQ(reviews_[1].resource, "localqueues");
}

TEST_F(VisibilityApiTest, ClusterWideReadersListQueuesAndCohorts) {
  user_ = "admin";
  Json queues = Json::parse(
      Get("/apis/visibility.gpusched.io/v1alpha1/clusterqueues").body);
  EXPECT_EQ(queues["kind"], "ClusterQueueList");
  EXPECT_EQ(queues["items"][0]["status"]["pendingWorkloads"], 3);
  Json cohorts =
      Json::parse(Get("/apis/visibility.gpusched.io/v1alpha1/cohorts").body);
  EXPECT_EQ(cohorts["kind"], "CohortList");
  Json queue = Json::parse(
      Get("/apis/visibility.gpusched.io/v1alpha1/clusterqueues/cq").body);
  EXPECT_EQ(queue["status"]["pendingWorkloads"], 3);
  EXPECT_EQ(queue["pendingWorkloadsSummary"]["items"].size(), 3u);
}

TEST_F(VisibilityApiTest, PendingItemsCarryTheLastForecast) {
  auto forecast = std::make_shared<StartForecast>();
  forecast->starts["team-a/a1"] = {.expected_start_ms = 120'000};
  forecast_ = forecast;
  Json items = Json::parse(Get(kLocalQueuePath).body)["items"];
  EXPECT_EQ(items[0]["expectedStart"], "1970-01-01T00:02:00Z");
  EXPECT_FALSE(items[1].contains("expectedStart"));
}

TEST_F(VisibilityApiTest, ExplainNamesOnlyTheCallersNamespaceAhead) {
  auto forecast = std::make_shared<StartForecast>();
  forecast->made_at_ms = 60'000;
  forecast->starts["team-a/a1"] = {.expected_start_ms = 120'000};
  forecast->starts["team-a/a2"] = {.expected_start_ms = 180'000};
  forecast_ = forecast;
  http::Response response = Get(kExplainPath);
  ASSERT_EQ(response.status, 200) << response.body;
  Json e = Json::parse(response.body);
  EXPECT_EQ(e["metadata"]["name"], "a2");
  EXPECT_EQ(e["start"]["expected"], "1970-01-01T00:03:00Z");
  ASSERT_EQ(e["ahead"].size(), 2u);
  EXPECT_EQ(e["ahead"][0]["name"], "a1");
  EXPECT_EQ(e["ahead"][0]["expectedStart"], "1970-01-01T00:02:00Z");
  EXPECT_FALSE(e["ahead"][1].contains("name"));  // team-b's b1
  EXPECT_EQ(reviews_.at(0),
            (ResourceAttributes{.verb = "get",
                                .group = "visibility.gpusched.io",
                                .version = "v1alpha1",
                                .resource = "workloads",
                                .subresource = "explain",
                                .namespace_name = "team-a",
                                .name = "a2"}));
}

TEST_F(VisibilityApiTest, ExplainOfAnUnknownWorkloadSaysWhy) {
  http::Response response =
      Get("/apis/visibility.gpusched.io/v1alpha1/namespaces/team-a/workloads/"
          "web-0/explain");
  EXPECT_EQ(response.status, 404);
  EXPECT_THAT(std::string(Json::parse(response.body)["message"]),
              HasSubstr("not gpusched's to queue"));
  EXPECT_EQ(explained_, std::vector<std::string>{"team-a/web-0"});
  // Another namespace: refused before anyone looks.
  EXPECT_EQ(Get("/apis/visibility.gpusched.io/v1alpha1/namespaces/team-b/"
                "workloads/b1/explain")
                .status,
            403);
  EXPECT_EQ(explained_.size(), 1u);
}

TEST_F(VisibilityApiTest, AStandbyServesNothingButDiscovery) {
  deciding_ = false;
  http::Response response = Get(kLocalQueuePath);
  EXPECT_EQ(response.status, 503);
  EXPECT_THAT(response.body, HasSubstr("stands by"));
  EXPECT_EQ(Get(kExplainPath).status, 503);
  EXPECT_TRUE(explained_.empty());
  EXPECT_EQ(Get("/apis").status, 200);
}

constexpr std::string_view kVisibilityVersion =
    "/apis/visibility.gpusched.io/v1alpha1";

// One node whose GPU a2's member holds (a2 admitted in cq through lq-a).
void AdmitA2OnANode(std::shared_ptr<const QueueView>& view,
                    std::shared_ptr<const GpuMap>& map) {
  auto admitted = std::make_shared<QueueView>(*view);
  admitted->cluster_queues[0].admitted.push_back({.key = "team-a/a2",
                                                  .name = "a2",
                                                  .local_queue = "lq-a",
                                                  .cluster_queue = "cq",
                                                  .members = {"team-a/a2-0"}});
  view = admitted;
  auto gpus = std::make_shared<GpuMap>();
  gpus->nodes.push_back(std::make_shared<const GpuMapNode>(
      GpuMapNode{.name = "n1",
                 .pods = {"team-a/a2-0"},
                 .gpus = {{.used_milli = 1000, .holders = {{0, 1000}}}}}));
  map = gpus;
}

TEST_F(VisibilityApiTest, GpuNodesAreReviewedClusterWide) {
  AdmitA2OnANode(view_, gpu_map_);
  EXPECT_EQ(Get(absl::StrCat(Sv(kVisibilityVersion), "/gpunodes")).status, 403);
  ASSERT_EQ(reviews_.size(), 1u);
  EXPECT_EQ(reviews_[0].verb, "list");
  EXPECT_EQ(reviews_[0].resource, "gpunodes");
  EXPECT_EQ(reviews_[0].namespace_name, "");
  user_ = "admin";
  http::Response response =
      Get(absl::StrCat(Sv(kVisibilityVersion), "/gpunodes"));
  ASSERT_EQ(response.status, 200) << response.body;
  const Json pod = Json::parse(response.body)["items"][0]["status"]["pods"][0];
  EXPECT_EQ(pod["name"], "a2-0");
  EXPECT_EQ(pod["clusterQueue"], "cq");  // what the map is coloured by
  EXPECT_EQ(pod["localQueue"], "lq-a");
}

// A poll that has the map gets 304 until the map or the queues change.
TEST_F(VisibilityApiTest, GpuNodesAnswer304ToTheirETag) {
  AdmitA2OnANode(view_, gpu_map_);
  user_ = "admin";
  http::Request request{
      .method = "GET",
      .target = absl::StrCat(Sv(kVisibilityVersion), "/gpunodes")};
  http::Response first = Api().Handle(request);
  ASSERT_EQ(first.status, 200);
  std::string etag;
  for (const auto& [name, value] : first.headers) {
    if (name == "ETag") etag = value;
  }
  ASSERT_FALSE(etag.empty());
  request.headers.emplace_back("if-none-match", etag);
  EXPECT_EQ(Api().Handle(request).status, 304);
  auto later = std::make_shared<QueueView>(*view_);
  later->pass += 1;  // a pass may have admitted a holder: colours change
  view_ = later;
  EXPECT_EQ(Api().Handle(request).status, 200);
}

TEST_F(VisibilityApiTest, NoGpuMapYetIs503) {
  user_ = "admin";
  EXPECT_EQ(Get(absl::StrCat(Sv(kVisibilityVersion), "/gpunodes")).status, 503);
}

TEST_F(VisibilityApiTest, ANamespacesDecisionsAreItsOwn) {
  decisions_ = std::make_shared<const RecentDecisions>(RecentDecisions{
      {.namespace_name = "team-b", .name = "b1", .reason_code = "Admitted"},
      {.namespace_name = "team-a", .name = "a1", .reason_code = "Admitted"}});
  http::Response response =
      Get(absl::StrCat(Sv(kVisibilityVersion), "/namespaces/team-a/decisions"));
  ASSERT_EQ(response.status, 200) << response.body;
  const Json items = Json::parse(response.body)["items"];
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0]["metadata"]["name"], "a1");
  EXPECT_EQ(reviews_.at(0).verb, "list");
  EXPECT_EQ(reviews_.at(0).resource, "decisions");
  // Every namespace's: reviewed at the cluster scope.
  EXPECT_EQ(Get(absl::StrCat(Sv(kVisibilityVersion), "/decisions")).status,
            403);
  user_ = "admin";
  EXPECT_EQ(
      Json::parse(
          Get(absl::StrCat(Sv(kVisibilityVersion), "/decisions")).body)["items"]
          .size(),
      2u);
}

TEST_F(VisibilityApiTest, TheDashboardPageNeedsNoReview) {
  deciding_ = false;  // a standby serves the page, not the data
  for (const std::string path :
       {absl::StrCat(Sv(kVisibilityVersion), "/dashboard/"),
        absl::StrCat(Sv(kVisibilityVersion),
                     "/namespaces/team-b/dashboard/")}) {
    http::Response page = Get(path);
    EXPECT_EQ(page.status, 200) << path;
    EXPECT_EQ(page.content_type, "text/html; charset=utf-8") << path;
  }
  EXPECT_TRUE(reviews_.empty());
  user_ = "admin";
  EXPECT_EQ(Get(absl::StrCat(Sv(kVisibilityVersion), "/gpunodes")).status, 503);
  authentication_ = absl::UnauthenticatedError("no client certificate");
  EXPECT_EQ(Get(absl::StrCat(Sv(kVisibilityVersion), "/dashboard/")).status,
            401);
}

}  // namespace
}  // namespace gpusched
