// Helpers shared by the kube tests.
#ifndef GPUSCHED_TESTS_KUBE_TEST_UTIL_H_
#define GPUSCHED_TESTS_KUBE_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "api/codec/k8s_json.h"
#include "scheduler/cluster_model.h"
#include "scheduler/extender_service.h"
#include "tests/kube/fake_apiserver.h"

namespace gpusched::kube::testing {

// A kubeconfig file for `server` (token auth, current context "fake"). One
// file per fake server: ctest runs tests in parallel processes that share
// TempDir(), and a shared name let one test read the other's address.
inline std::string KubeconfigFor(const FakeApiServer& server) {
  std::string path = ::testing::TempDir() + "/live-kubeconfig-" +
                     std::to_string(server.port());
  std::ofstream(path) << "current-context: fake\n"
                         "contexts:\n- name: fake\n"
                         "  context: {cluster: fake, user: admin}\n"
                         "clusters:\n- name: fake\n  cluster:\n"
                         "    server: http://127.0.0.1:"
                      << server.port()
                      << "\nusers:\n- name: admin\n  user:\n"
                         "    token: test-token\n";
  return path;
}

// Polls `condition` until it holds or `timeout` passes; the sync runs on
// its own threads, so tests wait for an outcome rather than sleep blindly.
inline bool WaitUntil(
    const std::function<bool()>& condition,
    std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return condition();
}

// The domain Pod for a fake server's JSON pod (as kube-scheduler would send
// it to filter).
inline gpusched::Pod DomainPod(const Json& json) {
  absl::StatusOr<gpusched::Pod> pod = PodFromJson(json.dump());
  EXPECT_TRUE(pod.ok()) << pod.status();
  return pod.ok() ? *pod : gpusched::Pod{};
}

inline bool HasNode(const ExtenderService& service, const std::string& name) {
  return service.Read([&](const ClusterModel& model) {
    return model.FindNode(name) != nullptr;
  });
}

inline bool HasPod(const ExtenderService& service, const std::string& uid) {
  return service.Read([&](const ClusterModel& model) {
    return model.FindPodByUid(uid) != nullptr;
  });
}

// Whether a pod asking for `gpus` GPUs passes filter on `node`.
inline bool Fits(ExtenderService& service, const std::string& node, int gpus) {
  const std::vector<std::string> nodes = {node};
  FilterOutcome outcome =
      service.Filter(DomainPod(GpuPod("probe/probe", gpus)), nodes);
  return outcome.passed.size() == 1;
}

}  // namespace gpusched::kube::testing

#endif  // GPUSCHED_TESTS_KUBE_TEST_UTIL_H_
