// The fake API server's generic store (ServeResource, PutObject, ...),
// driven through the real KubeClient as gpusched's DRA watches will drive
// it: paging, watch streams, namespaces, and the refusals a client must
// handle (404, 403, 410).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/kube/kube_client.h"
#include "tests/kube/fake_apiserver.h"

namespace gpusched::kube::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr std::string_view kDra = "resource.k8s.io/v1";
constexpr std::string_view kSlices = "/apis/resource.k8s.io/v1/resourceslices";
constexpr std::string_view kClaims = "/apis/resource.k8s.io/v1/resourceclaims";

// A ResourceSlice of one GPU on `node`.
Json Slice(std::string_view name, std::string_view node) {
  return Json{
      {"metadata", {{"name", name}}},
      {"spec",
       {{"driver", "gpu.nvidia.com"},
        {"nodeName", node},
        {"pool",
         {{"name", node}, {"generation", 1}, {"resourceSliceCount", 1}}},
        {"devices", {{{"name", "gpu-0"}}}}}}};
}

// A ResourceClaim ("namespace/name") for one device of class gpu.nvidia.com.
Json Claim(std::string_view key) {
  const size_t slash = key.find('/');
  return Json{
      {"metadata",
       {{"namespace", key.substr(0, slash)}, {"name", key.substr(slash + 1)}}},
      {"spec",
       {{"devices",
         {{"requests",
           {{{"name", "gpu"},
             {"exactly", {{"deviceClassName", "gpu.nvidia.com"}}}}}}}}}}};
}

class FakeResourceStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { client_ = *KubeClient::Create(server_.Config()); }

  // The items of a List as "namespace/name" (or "name").
  static std::vector<std::string> Keys(const ListResult& list) {
    std::vector<std::string> keys;
    const Json body = Json::parse(list.body);
    for (const Json& item : body["items"]) {
      const Json& meta = item["metadata"];
      const std::string ns = meta.value("namespace", "");
      keys.push_back((ns.empty() ? "" : ns + "/") + meta.value("name", ""));
    }
    return keys;
  }

  // A watch of `path` from `version` until the server ends it (200 ms),
  // as "TYPE version name[ nodeName]" lines.
  std::vector<std::string> WatchAll(std::string_view path,
                                    std::string_view version,
                                    absl::Status* status = nullptr) {
    std::vector<std::string> seen;
    absl::Status ended =
        client_->Watch(path, version, [&](const WatchEvent& event) {
          const Json object = Json::parse(simdjson::minify(event.object));
          std::string line = std::string(WatchEventTypeName(event.type)) + " " +
                             std::string(event.resource_version);
          if (event.type != WatchEventType::kBookmark) {
            line += " " + object["metadata"].value("name", "");
          }
          if (object.contains("spec") && object["spec"].contains("nodeName")) {
            line += " " + object["spec"].value("nodeName", "");
          }
          seen.push_back(line);
          return absl::OkStatus();
        });
    if (status != nullptr) *status = ended;
    EXPECT_TRUE(status != nullptr || ended.ok()) << ended;
    return seen;
  }

  FakeApiServer server_;
  std::unique_ptr<KubeClient> client_;
};

TEST_F(FakeResourceStoreTest, ListPagesWithLimitAndContinue) {
  server_.ServeDra();
  for (const char* name : {"s1", "s2", "s3", "s4", "s5"}) {
    server_.PutObject(kDra, "resourceslices", Slice(name, "n1"));
  }
  const std::string path(kSlices);
  absl::StatusOr<ListResult> first = client_->List(path + "?limit=2");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_THAT(Keys(*first), ElementsAre("s1", "s2"));
  EXPECT_EQ(first->continue_token, "s2");
  EXPECT_EQ(first->resource_version, "6");  // 1 + five creates
  absl::StatusOr<ListResult> second =
      client_->List(path + "?limit=2&continue=" + first->continue_token);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_THAT(Keys(*second), ElementsAre("s3", "s4"));
  absl::StatusOr<ListResult> third =
      client_->List(path + "?limit=2&continue=" + second->continue_token);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_THAT(Keys(*third), ElementsAre("s5"));
  EXPECT_EQ(third->continue_token, "");
  const Json body = Json::parse(third->body);
  EXPECT_EQ(body["kind"], "ResourceSliceList");
  EXPECT_EQ(body["apiVersion"], "resource.k8s.io/v1");
  EXPECT_EQ(server_.Count("LIST resourceslices"), 3);
}

TEST_F(FakeResourceStoreTest, WatchSeesAddedModifiedDeletedInOrder) {
  server_.ServeDra();
  server_.PutObject(kDra, "resourceslices", Slice("s1", "n1"));  // 2
  server_.PutObject(kDra, "resourceclaims", Claim("a/c1"));      // 3
  server_.PutObject(kDra, "resourceslices", Slice("s1", "n2"));  // 4
  server_.DeleteObject(kDra, "resourceslices", "s1");            // 5
  // The claim is another resource's event; the deletion carries the last
  // state (n2).
  EXPECT_THAT(WatchAll(kSlices, "1"),
              ElementsAre("ADDED 2 s1 n1", "MODIFIED 4 s1 n2",
                          "DELETED 5 s1 n2", "BOOKMARK 5"));
  EXPECT_EQ(server_.Count("WATCH resourceslices"), 1);
}

TEST_F(FakeResourceStoreTest, WatchFromAVersionSkipsWhatCameBefore) {
  server_.ServeDra();
  server_.PutObject(kDra, "resourceslices", Slice("s1", "n1"));  // 2
  server_.PutObject(kDra, "resourceslices", Slice("s2", "n1"));  // 3
  EXPECT_THAT(WatchAll(kSlices, "2"),
              ElementsAre("ADDED 3 s2 n1", "BOOKMARK 3"));
}

TEST_F(FakeResourceStoreTest, NamespacedListCoversOneNamespace) {
  server_.ServeDra();
  for (const char* key : {"a/c1", "a/c2", "b/c1"}) {
    server_.PutObject(kDra, "resourceclaims", Claim(key));
  }
  absl::StatusOr<ListResult> all = client_->List(kClaims);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_THAT(Keys(*all), ElementsAre("a/c1", "a/c2", "b/c1"));
  absl::StatusOr<ListResult> in_a =
      client_->List("/apis/resource.k8s.io/v1/namespaces/a/resourceclaims");
  ASSERT_TRUE(in_a.ok()) << in_a.status();
  EXPECT_THAT(Keys(*in_a), ElementsAre("a/c1", "a/c2"));
  EXPECT_EQ(Json::parse(in_a->body)["kind"], "ResourceClaimList");
}

TEST_F(FakeResourceStoreTest, NamespacedPageEndsWhereItsNamespaceEnds) {
  server_.ServeDra();
  for (const char* key : {"a/c1", "a/c2", "b/c1"}) {
    server_.PutObject(kDra, "resourceclaims", Claim(key));
  }
  const std::string path =
      "/apis/resource.k8s.io/v1/namespaces/a/resourceclaims?limit=1";
  absl::StatusOr<ListResult> first = client_->List(path);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_THAT(Keys(*first), ElementsAre("a/c1"));
  EXPECT_EQ(first->continue_token, "a/c1");
  absl::StatusOr<ListResult> second =
      client_->List(path + "&continue=" + first->continue_token);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_THAT(Keys(*second), ElementsAre("a/c2"));
  EXPECT_EQ(second->continue_token, "");  // b/c1 is not in this namespace
}

TEST_F(FakeResourceStoreTest, NamespacedWatchSeesOneNamespace) {
  server_.ServeDra();
  server_.PutObject(kDra, "resourceclaims", Claim("a/c1"));  // 2
  server_.PutObject(kDra, "resourceclaims", Claim("b/c1"));  // 3
  server_.DeleteObject(kDra, "resourceclaims", "a/c1");      // 4
  EXPECT_THAT(
      WatchAll("/apis/resource.k8s.io/v1/namespaces/b/resourceclaims", "1"),
      ElementsAre("ADDED 3 c1", "BOOKMARK 4"));
  EXPECT_THAT(
      WatchAll(kClaims, "1"),
      ElementsAre("ADDED 2 c1", "ADDED 3 c1", "DELETED 4 c1", "BOOKMARK 4"));
}

TEST_F(FakeResourceStoreTest, GetReadsOneObject) {
  server_.ServeDra();
  server_.PutObject(kDra, "resourceclaims", Claim("a/c1"));
  server_.PutObject(kDra, "deviceclasses",
                    Json{{"metadata", {{"name", "gpu.nvidia.com"}}}});
  absl::StatusOr<std::string> claim =
      client_->Get("/apis/resource.k8s.io/v1/namespaces/a/resourceclaims/c1");
  ASSERT_TRUE(claim.ok()) << claim.status();
  const Json got = Json::parse(*claim);
  EXPECT_EQ(got["kind"], "ResourceClaim");
  EXPECT_EQ(got["metadata"]["namespace"], "a");
  EXPECT_EQ(got["spec"]["devices"]["requests"][0]["name"], "gpu");
  absl::StatusOr<std::string> device_class =
      client_->Get("/apis/resource.k8s.io/v1/deviceclasses/gpu.nvidia.com");
  ASSERT_TRUE(device_class.ok()) << device_class.status();
  EXPECT_EQ(Json::parse(*device_class)["kind"], "DeviceClass");
  EXPECT_EQ(server_.Count("GET resourceclaims"), 1);
  EXPECT_EQ(server_.Count("GET deviceclasses"), 1);
}

TEST_F(FakeResourceStoreTest, PutSetsVersionAndUidAndAReplacementKeepsTheUid) {
  server_.ServeDra();
  server_.PutObject(kDra, "resourceslices", Slice("s1", "n1"));
  const Json created = server_.Object(kDra, "resourceslices", "s1");
  EXPECT_EQ(created["apiVersion"], "resource.k8s.io/v1");
  EXPECT_EQ(created["kind"], "ResourceSlice");
  EXPECT_EQ(created["metadata"]["resourceVersion"], "2");
  const std::string uid = created["metadata"]["uid"];
  EXPECT_FALSE(uid.empty());
  server_.PutObject(kDra, "resourceslices", Slice("s1", "n2"));
  const Json replaced = server_.Object(kDra, "resourceslices", "s1");
  EXPECT_EQ(replaced["metadata"]["resourceVersion"], "3");
  EXPECT_EQ(replaced["metadata"]["uid"], uid);
  EXPECT_EQ(replaced["spec"]["nodeName"], "n2");
  server_.DeleteObject(kDra, "resourceslices", "s1");
  EXPECT_TRUE(server_.Object(kDra, "resourceslices", "s1").is_null());
}

TEST_F(FakeResourceStoreTest, UnservedResourceIsNotFound) {
  server_.ServeResource(kDra, "resourceslices", /*namespaced=*/false);
  absl::StatusOr<ListResult> list =
      client_->List("/apis/resource.k8s.io/v1/deviceclasses");
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.status().code(), absl::StatusCode::kNotFound);
  std::optional<HttpFailure> answer = HttpFailureOf(list.status());
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->code, 404);
  EXPECT_EQ(answer->message,
            "the server could not find the requested resource");
  absl::Status watch;
  EXPECT_THAT(WatchAll("/apis/resource.k8s.io/v1/deviceclasses", "1", &watch),
              ElementsAre());
  EXPECT_EQ(watch.code(), absl::StatusCode::kNotFound) << watch;
  EXPECT_EQ(server_.Count("LIST deviceclasses"), 0);
}

TEST_F(FakeResourceStoreTest, MissingObjectIsNotFound) {
  server_.ServeDra();
  absl::StatusOr<std::string> got =
      client_->Get("/apis/resource.k8s.io/v1/namespaces/a/resourceclaims/x");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(got.status().message(),
              HasSubstr("resourceclaims.resource.k8s.io \"x\" not found"));
}

TEST_F(FakeResourceStoreTest, ScopeMismatchedPathsAreNotFound) {
  server_.ServeDra();
  server_.PutObject(kDra, "resourceslices", Slice("s1", "n1"));
  server_.PutObject(kDra, "resourceclaims", Claim("a/c1"));
  // A cluster-scoped resource has no namespaced paths; a namespaced
  // object is read only in its namespace.
  for (const char* path :
       {"/apis/resource.k8s.io/v1/namespaces/a/resourceslices",
        "/apis/resource.k8s.io/v1/namespaces/a/resourceslices/s1",
        "/apis/resource.k8s.io/v1/resourceclaims/c1"}) {
    absl::StatusOr<std::string> got = client_->Get(path);
    EXPECT_EQ(got.status().code(), absl::StatusCode::kNotFound) << path;
  }
}

TEST_F(FakeResourceStoreTest, WatchFromBeforeCompactionIsGoneUntilRelisted) {
  server_.ServeDra();
  server_.PutObject(kDra, "resourceslices", Slice("s1", "n1"));  // 2
  absl::StatusOr<ListResult> before = client_->List(kSlices);
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_EQ(before->resource_version, "2");
  server_.CompactHistory();  // 3
  absl::Status gone;
  EXPECT_THAT(WatchAll(kSlices, before->resource_version, &gone),
              ElementsAre());
  EXPECT_TRUE(IsGone(gone)) << gone;
  EXPECT_THAT(gone.message(), HasSubstr("too old resource version: 2 (3)"));
  absl::StatusOr<ListResult> relisted = client_->List(kSlices);
  ASSERT_TRUE(relisted.ok()) << relisted.status();
  EXPECT_EQ(relisted->resource_version, "3");
  EXPECT_THAT(Keys(*relisted), ElementsAre("s1"));
  server_.PutObject(kDra, "resourceslices", Slice("s2", "n1"));  // 4
  EXPECT_THAT(WatchAll(kSlices, relisted->resource_version),
              ElementsAre("ADDED 4 s2 n1", "BOOKMARK 4"));
}

TEST_F(FakeResourceStoreTest, ForbiddenResourceIsRefusedWith403) {
  server_.ServeDra();
  server_.ForbidResource("resourceclaims");
  absl::StatusOr<ListResult> list =
      client_->List("/apis/resource.k8s.io/v1/namespaces/a/resourceclaims");
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(list.status().message(),
              HasSubstr("resourceclaims.resource.k8s.io is forbidden: User "
                        "cannot list resource \"resourceclaims\" in API group "
                        "\"resource.k8s.io\" in the namespace \"a\""));
  absl::Status watch;
  EXPECT_THAT(WatchAll(kClaims, "1", &watch), ElementsAre());
  EXPECT_EQ(watch.code(), absl::StatusCode::kPermissionDenied) << watch;
  EXPECT_EQ(server_.Count("FORBIDDEN resourceclaims"), 2);
  EXPECT_TRUE(client_->List(kSlices).ok());  // other resources still listed
}

}  // namespace
}  // namespace gpusched::kube::testing
