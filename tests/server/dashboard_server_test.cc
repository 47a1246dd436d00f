// The dashboard: its embedded files and their headers, where they are
// served, and the loopback listener's flag and gate.
#include "api/server/dashboard_server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/server/dashboard_files.h"
#include "api/server/serve_flags.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::string_view kVersion = "/apis/visibility.gpusched.io/v1alpha1";

std::string Header(const http::Response& response, std::string_view name) {
  for (const auto& [key, value] : response.headers) {
    if (key == name) return value;
  }
  return "";
}

http::Response GetFile(std::string target, std::string if_none_match = "") {
  http::Request request{.method = "GET", .target = std::move(target)};
  if (!if_none_match.empty()) {
    request.headers.emplace_back("if-none-match", if_none_match);
  }
  std::optional<DashboardPath> path =
      ParseDashboardPath(request.target, kVersion);
  if (!path) return {.status = 0};
  return ServeDashboardFile(request, *path);
}

TEST(DashboardFilesTest, PathsBelowTheVersionAndEachNamespace) {
  struct Case {
    std::string_view target;
    std::optional<std::string_view> file;
  };
  const Case cases[] = {
      {"/apis/visibility.gpusched.io/v1alpha1/dashboard/", ""},
      {"/apis/visibility.gpusched.io/v1alpha1/dashboard/dashboard.js",
       "dashboard.js"},
      {"/apis/visibility.gpusched.io/v1alpha1/namespaces/team-a/dashboard/",
       ""},
      {"/apis/visibility.gpusched.io/v1alpha1/dashboardx", std::nullopt},
      {"/apis/visibility.gpusched.io/v1alpha1/namespaces//dashboard/",
       std::nullopt},
      {"/apis/visibility.gpusched.io/v1alpha1/clusterqueues", std::nullopt},
  };
  for (const Case& c : cases) {
    std::optional<DashboardPath> path = ParseDashboardPath(c.target, kVersion);
    ASSERT_EQ(path.has_value(), c.file.has_value()) << c.target;
    if (path) EXPECT_EQ(path->file, *c.file) << c.target;
  }
}

TEST(DashboardFilesTest, EachFileHasItsTypeAndTheStrictHeaders) {
  const std::pair<std::string, std::string> files[] = {
      {"", "text/html; charset=utf-8"},
      {"dashboard.js", "text/javascript; charset=utf-8"},
      {"map.js", "text/javascript; charset=utf-8"},
      {"dashboard.css", "text/css; charset=utf-8"},
      {"favicon.svg", "image/svg+xml"}};
  for (const auto& [file, type] : files) {
    http::Response response =
        GetFile(absl::StrCat(Sv(kVersion), "/dashboard/", file));
    ASSERT_EQ(response.status, 200) << file;
    EXPECT_EQ(response.content_type, type) << file;
    EXPECT_THAT(Header(response, "Content-Security-Policy"),
                HasSubstr("default-src 'self'"));
    EXPECT_EQ(Header(response, "X-Content-Type-Options"), "nosniff");
    EXPECT_EQ(Header(response, "Cache-Control"), "no-cache");
    EXPECT_FALSE(response.body.empty());
  }
}

TEST(DashboardFilesTest, AKnownETagIs304) {
  const std::string target = absl::StrCat(Sv(kVersion), "/dashboard/");
  const std::string etag = Header(GetFile(target), "ETag");
  ASSERT_FALSE(etag.empty());
  http::Response again = GetFile(target, etag);
  EXPECT_EQ(again.status, 304);
  EXPECT_TRUE(again.body.empty());
  EXPECT_EQ(GetFile(target, "\"other\"").status, 200);
}

TEST(DashboardFilesTest, UnknownFileIs404AndNoSlashRedirects) {
  EXPECT_EQ(GetFile(absl::StrCat(Sv(kVersion), "/dashboard/x.js")).status, 404);
  http::Response moved = GetFile(absl::StrCat(Sv(kVersion), "/dashboard"));
  EXPECT_EQ(moved.status, 301);
  EXPECT_EQ(Header(moved, "Location"), "dashboard/");  // relative
}

// The page loads nothing from elsewhere and runs no inline script, so the
// CSP holds: scripts and styles are files, fetches relative.
TEST(DashboardFilesTest, FilesReferNothingOutside) {
  for (const EmbeddedFile& file : EmbeddedDashboardFiles()) {
    std::string text(file.content);
    if (file.name.ends_with(".svg")) {
      // Its one URL is the SVG namespace's name, never fetched.
      text.erase(text.find("http://www.w3.org/2000/svg"), 26);
    }
    EXPECT_THAT(text, Not(HasSubstr("http://"))) << file.name;
    EXPECT_THAT(text, Not(HasSubstr("https://"))) << file.name;
    if (file.name.ends_with(".html")) {
      EXPECT_THAT(text, Not(HasSubstr("<script>"))) << file.name;
      EXPECT_THAT(text, Not(HasSubstr("style="))) << file.name;
    }
  }
}

TEST(DashboardListenTest, OnlyLoopbackAddresses) {
  for (std::string_view good :
       {"127.0.0.1:8090", "127.0.0.2:0", "[::1]:8090", "localhost:8090", ""}) {
    EXPECT_TRUE(CheckDashboardListen(good).ok()) << good;
  }
  for (std::string_view bad : {"0.0.0.0:8090", ":8090", "10.0.0.7:8090",
                               "[::]:8090", "dashboard.example:8090"}) {
    absl::Status s = CheckDashboardListen(bad);
    EXPECT_FALSE(s.ok()) << bad;
    EXPECT_THAT(std::string(s.message()), HasSubstr("not a loopback address"))
        << bad;
  }
  EXPECT_THAT(std::string(CheckDashboardListen("127.0.0.1").message()),
              HasSubstr("--dashboard-listen"));
}

TEST(DashboardListenTest, ServeRefusesAForeignOrSharedAddress) {
  ServeConfig config;
  EXPECT_THAT(
      std::string(ParseServeFlags({"--dashboard-listen=0.0.0.0:8090"}, config)
                      .message()),
      HasSubstr("not a loopback address"));
  EXPECT_THAT(std::string(ParseServeFlags({"--listen=127.0.0.1:8888",
                                           "--dashboard-listen=127.0.0.1:8888"},
                                          config)
                              .message()),
              HasSubstr("must differ from --listen"));
  ServeConfig demo;
  ASSERT_TRUE(
      ParseServeFlags({"--dashboard-listen=127.0.0.1:8090"}, demo).ok());
  EXPECT_EQ(demo.dashboard.listen, "127.0.0.1:8090");
}

// Everyone who reaches the listener is an admin: every review allows.
class LoopbackDashboardTest : public ::testing::Test {
 protected:
  http::Response Get(std::string target, std::string host) {
    http::Request request{.method = "GET", .target = std::move(target)};
    if (!host.empty()) request.headers.emplace_back("host", host);
    return HandleLoopbackDashboard(api_, request);
  }
  VisibilityApi api_{VisibilityApiOptions{
      .queues = [] { return std::make_shared<const QueueView>(); },
      .authenticate = [](const http::Request&) -> absl::StatusOr<RequestUser> {
        return RequestUser{.name = "loopback"};
      },
      .authorize = [](const RequestUser&, const ResourceAttributes&)
          -> absl::StatusOr<AccessVerdict> {
        return AccessVerdict{.allowed = true};
      },
      .now_ms = [] { return int64_t{0}; }}};
};

TEST_F(LoopbackDashboardTest, TheRootRedirectsToThePage) {
  http::Response root = Get("/", "127.0.0.1:8090");
  EXPECT_EQ(root.status, 302);
  EXPECT_EQ(Header(root, "Location"), kDashboardPagePath);
  EXPECT_EQ(Get(std::string(kDashboardPagePath), "localhost:8090").status, 200);
  EXPECT_EQ(
      Get(absl::StrCat(Sv(kVersion), "/clusterqueues"), "[::1]:8090").status,
      200);
}

// A page elsewhere whose name resolves to 127.0.0.1 (DNS rebinding) sends
// its own name as Host: refused.
TEST_F(LoopbackDashboardTest, AForeignHostIsRefused) {
  EXPECT_EQ(Get(std::string(kDashboardPagePath), "evil.example:8090").status,
            403);
  EXPECT_EQ(Get(std::string(kDashboardPagePath), "").status, 403);
}

}  // namespace
}  // namespace gpusched
