// Bad input gets a clear answer, and the service keeps serving.
#include <thread>

#include "tests/http/raw_socket.h"
#include "tests/integration/harness.h"

namespace gpusched::testing {
namespace {

using nlohmann::json;

class BadInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServeConfig config;
    config.body_limit_mib = 1;
    config.read_timeout_ms = 300;
    app_ = StartApp(config);
    ASSERT_NE(app_, nullptr);
    client_ = Connect(*app_);
    ASSERT_NE(client_, nullptr);
  }
  void TearDown() override {
    // Whatever happened, a good request still works.
    auto client = Connect(*app_);
    json ok = PostJson(*client, "/filter",
                       FilterArgs(GpuPod("after", 1), {"dgx-h100-1"}).dump());
    EXPECT_EQ(ok["NodeNames"], json::array({"dgx-h100-1"}));
  }
  std::unique_ptr<ServeApp> app_;
  std::unique_ptr<http::Client> client_;
};

TEST_F(BadInputTest, MalformedJsonIs400NamingTheByte) {
  json error = PostJson(*client_, "/filter", R"({"Pod": {"metadata": }})", 400);
  EXPECT_EQ(error["code"], 400);
  // The stray '}' is the 22nd byte: offset 21, line 1, column 22.
  EXPECT_NE(error["error"].get<std::string>().find(
                "malformed JSON at byte 21 (line 1, column 22)"),
            std::string::npos)
      << error.dump();
}

TEST_F(BadInputTest, BodyThatIsNotAnObjectIs400) {
  json error = PostJson(*client_, "/prioritize", "[1,2,3]", 400);
  EXPECT_EQ(error["error"], "request body must be a JSON object");
}

TEST_F(BadInputTest, MissingPodIs400) {
  json error =
      PostJson(*client_, "/filter", R"({"NodeNames":["dgx-h100-1"]})", 400);
  EXPECT_EQ(error["error"], "Pod: required, got null");
  error = PostJson(*client_, "/filter", R"({"Pod":null,"NodeNames":[]})", 400);
  EXPECT_EQ(error["error"], "Pod: required, got null");
}

TEST_F(BadInputTest, InvalidQuantityNamesTheField) {
  json pod = GpuPod("bad", 1);
  pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "12x";
  json error =
      PostJson(*client_, "/filter", FilterArgs(pod, {"l4-0"}).dump(), 400);
  std::string message = error["error"];
  EXPECT_NE(message.find("Pod.spec.containers[0].resources.requests"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("12x"), std::string::npos) << message;
}

TEST_F(BadInputTest, BindWithoutNodeIs400) {
  json error =
      PostJson(*client_, "/bind",
               R"({"PodName":"a","PodNamespace":"b","PodUID":"c"})", 400);
  EXPECT_EQ(error["error"], "Node: required");
}

TEST_F(BadInputTest, BodyOverTheLimitIs413) {
  std::string huge = R"({"Pod":{"metadata":{"name":")" +
                     std::string(2 << 20, 'x') + R"("}},"NodeNames":[]})";
  auto response = client_->Send("POST", "/filter", huge);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 413);
}

TEST_F(BadInputTest, UnknownPathIs404AndWrongMethodIs405) {
  auto missing = client_->Send("POST", "/filterx", "{}");
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->status, 404);
  auto wrong = client_->Send("GET", "/filter", "");
  ASSERT_TRUE(wrong.ok());
  EXPECT_EQ(wrong->status, 405);
}

TEST_F(BadInputTest, InvalidGpuShareAnnotationFailsEveryNodeWithAReason) {
  json pod = GpuPod("share", 1);
  pod["metadata"]["annotations"] = {{"gpusched.io/gpu-milli", "1500"}};
  json result = PostJson(*client_, "/filter", FilterArgs(pod, {"l4-1"}).dump());
  EXPECT_EQ(result["FailedAndUnresolvableNodes"]["l4-1"],
            "annotation gpusched.io/gpu-milli=\"1500\" must be an integer from "
            "1 to 999");
}

TEST_F(BadInputTest, SlowClientIsCutOffByTheReadTimeout) {
  http::testing::RawSocket socket(app_->port());
  ASSERT_TRUE(socket.ok());
  ASSERT_TRUE(socket.Send(
      "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"Po"));
  bool closed = false;
  socket.ReadUntilClose(std::chrono::milliseconds(3000), &closed);
  EXPECT_TRUE(closed);
}

}  // namespace
}  // namespace gpusched::testing
