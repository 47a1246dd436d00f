#include "api/http/router.h"

#include <gtest/gtest.h>

#include "tests/http/test_server.h"

namespace gpusched::http {
namespace {

using testing::Constant;
using testing::HeaderOf;

Request Make(std::string method, std::string target) {
  return Request{.method = std::move(method), .target = std::move(target)};
}

Router FilterRouter() {
  Router router;
  router.Add("POST", "/filter", Constant("filtered"));
  router.Add("GET", "/filter", Constant("listed"));
  router.Add("GET", "/healthz", Constant("ok"));
  return router;
}

TEST(RouterTest, DispatchesOnMethodAndExactPath) {
  Router router = FilterRouter();
  EXPECT_EQ(router.Handle(Make("POST", "/filter")).body, "filtered");
  EXPECT_EQ(router.Handle(Make("GET", "/filter")).body, "listed");
  EXPECT_EQ(router.Handle(Make("GET", "/healthz")).body, "ok");
}

TEST(RouterTest, UnknownPathIs404NamingThePath) {
  Router router = FilterRouter();
  for (const char* path : {"/filter/", "/filte", "/", "/healthz/x"}) {
    Response response = router.Handle(Make("GET", path));
    EXPECT_EQ(response.status, 404) << path;
    EXPECT_NE(response.body.find(path), std::string::npos) << response.body;
    EXPECT_NE(response.body.find("\"code\":404"), std::string::npos);
  }
}

TEST(RouterTest, WrongMethodIs405WithAllowHeader) {
  Router router = FilterRouter();
  Response response = router.Handle(Make("DELETE", "/filter"));
  EXPECT_EQ(response.status, 405);
  EXPECT_EQ(HeaderOf(response, "Allow"), "GET, POST");  // Sorted.
  EXPECT_NE(response.body.find("\"code\":405"), std::string::npos);
}

TEST(RouterTest, LaterRegistrationReplacesEarlier) {
  Router router;
  router.Add("GET", "/x", Constant("old"));
  router.Add("GET", "/x", Constant("new"));
  EXPECT_EQ(router.Handle(Make("GET", "/x")).body, "new");
}

TEST(RouterTest, HandlerSeesTheRequest) {
  Router router;
  router.Add("POST", "/echo", [](const Request& request) {
    return Response{.body = request.query + "|" + request.body};
  });
  Request request = Make("POST", "/echo");
  request.query = "a=1";
  request.body = "payload";
  EXPECT_EQ(router.Handle(request).body, "a=1|payload");
}

}  // namespace
}  // namespace gpusched::http
