// Starts the real extender (model + HTTP server) in-process on an ephemeral
// port and talks to it over real HTTP, as kube-scheduler does.
#ifndef GPUSCHED_TESTS_INTEGRATION_HARNESS_H_
#define GPUSCHED_TESTS_INTEGRATION_HARNESS_H_

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "api/http/client.h"
#include "api/server/serve.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace gpusched::testing {

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline std::string SharedFixture(const std::string& name) {
  return ReadFile(std::string(GPUSCHED_SHARED_DIR) + "/fixtures/" + name);
}

inline std::string TestData(const std::string& name) {
  return std::string(GPUSCHED_SOURCE_DIR) + "/tests/testdata/" + name;
}

inline std::unique_ptr<ServeApp> StartApp(ServeConfig config = {}) {
  config.listen = "127.0.0.1:0";
  auto app = ServeApp::Start(config);
  EXPECT_TRUE(app.ok()) << app.status();
  return app.ok() ? *std::move(app) : nullptr;
}

inline std::unique_ptr<http::Client> Connect(const ServeApp& app) {
  auto client = http::Client::Connect("127.0.0.1", app.port());
  EXPECT_TRUE(client.ok()) << client.status();
  return client.ok() ? *std::move(client) : nullptr;
}

// A pod as kube-scheduler embeds it in ExtenderArgs.
inline nlohmann::json GpuPod(const std::string& name, int gpus,
                             const std::string& ns = "team-a") {
  return {
      {"metadata",
       {{"name", name}, {"namespace", ns}, {"uid", "uid-" + ns + "-" + name}}},
      {"spec",
       {{"containers",
         {{{"name", "main"},
           {"resources",
            {{"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}},
             {"requests", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}}}},
        {"schedulerName", "gpusched"}}},
      {"status", {{"phase", "Pending"}}}};
}

inline nlohmann::json FilterArgs(const nlohmann::json& pod,
                                 const std::vector<std::string>& names) {
  return {{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", names}};
}

inline nlohmann::json BindArgs(const nlohmann::json& pod,
                               const std::string& node) {
  return {{"PodName", pod["metadata"]["name"]},
          {"PodNamespace", pod["metadata"]["namespace"]},
          {"PodUID", pod["metadata"]["uid"]},
          {"Node", node}};
}

// POSTs JSON and parses the JSON answer; fails the test on transport errors.
inline nlohmann::json PostJson(http::Client& client, const std::string& path,
                               const std::string& body,
                               int expect_status = 200) {
  auto response = client.Send("POST", path, body);
  EXPECT_TRUE(response.ok()) << response.status();
  if (!response.ok()) return nullptr;
  EXPECT_EQ(response->status, expect_status) << response->body;
  return nlohmann::json::parse(response->body, nullptr, false);
}

}  // namespace gpusched::testing

#endif  // GPUSCHED_TESTS_INTEGRATION_HARNESS_H_
