#include "api/kube/kube_bind_sink.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>

#include "api/kube/cluster_sync.h"
#include "tests/kube/fake_apiserver.h"
#include "tests/kube/test_util.h"

namespace gpusched::kube::testing {
namespace {

using ::testing::HasSubstr;

class KubeBindSinkTest : public ::testing::Test {
 protected:
  KubeBindSinkTest()
      : client_(*KubeClient::Create(server_.Config())), sink_(*client_) {}

  FakeApiServer server_;
  std::unique_ptr<KubeClient> client_;
  KubeBindSink sink_;
};

TEST_F(KubeBindSinkTest, BindsWithTheGpuIdsInOneCall) {
  server_.AddPod(GpuPod("a/train", 2));
  absl::Status bound = sink_.Bind(DomainPod(server_.Pod("a/train")), "n1",
                                  GpuAssignment{.gpu_ids = {0, 1}});
  ASSERT_TRUE(bound.ok()) << bound;
  Json pod = server_.Pod("a/train");
  EXPECT_EQ(pod["metadata"]["annotations"]["gpusched.io/gpu-ids"], "0,1");
  EXPECT_EQ(pod["spec"]["nodeName"], "n1");
  // The annotation came with the binding, in the same write.
  EXPECT_EQ(server_.Count("PATCH pod"), 0);
  EXPECT_EQ(server_.Count("POST binding"), 1);
}

TEST_F(KubeBindSinkTest, PodWithoutGpusIsBoundWithoutGpuIds) {
  server_.AddPod(GpuPod("a/cpu", 0));
  ASSERT_TRUE(
      sink_.Bind(DomainPod(server_.Pod("a/cpu")), "n1", GpuAssignment{}).ok());
  Json pod = server_.Pod("a/cpu");
  EXPECT_EQ(pod["spec"]["nodeName"], "n1");
  EXPECT_FALSE(pod["metadata"]["annotations"].contains("gpusched.io/gpu-ids"));
}

TEST_F(KubeBindSinkTest, RetriedBindToTheSameNodeSucceeds) {
  server_.AddPod(GpuPod("a/train", 1));
  const Pod pod = DomainPod(server_.Pod("a/train"));
  ASSERT_TRUE(sink_.Bind(pod, "n1", GpuAssignment{.gpu_ids = {3}}).ok());
  // kube-scheduler timed out on the first answer and binds again: 409.
  absl::Status again = sink_.Bind(pod, "n1", GpuAssignment{.gpu_ids = {3}});
  EXPECT_TRUE(again.ok()) << again;
  EXPECT_EQ(server_.Count("POST binding"), 2);
  EXPECT_EQ(server_.Count("GET pod"), 1);  // checked where it is bound
}

TEST_F(KubeBindSinkTest, PodBoundElsewhereIsAnErrorWithTheServersMessage) {
  server_.AddPod(GpuPod("a/train", 1, "other-node"));
  absl::Status bound = sink_.Bind(DomainPod(server_.Pod("a/train")), "n1",
                                  GpuAssignment{.gpu_ids = {0}});
  ASSERT_FALSE(bound.ok());
  EXPECT_THAT(std::string(bound.message()),
              HasSubstr("is already assigned to node \"other-node\""));
  EXPECT_EQ(bound.code(), absl::StatusCode::kAborted);
}

TEST_F(KubeBindSinkTest, RecreatedPodWithTheSameNameIsNotBound) {
  server_.AddPod(GpuPod("a/train", 1));
  Pod stale = DomainPod(server_.Pod("a/train"));
  stale.meta.uid = "uid-of-the-deleted-pod";
  absl::Status bound = sink_.Bind(stale, "n1", GpuAssignment{});
  ASSERT_FALSE(bound.ok());
  EXPECT_THAT(std::string(bound.message()),
              HasSubstr("Precondition failed: UID in precondition"));
  EXPECT_FALSE(server_.Pod("a/train")["spec"].contains("nodeName"));
}

TEST_F(KubeBindSinkTest, DeletedPodIsNotFound) {
  Pod gone = DomainPod(GpuPod("a/gone", 1));
  absl::Status bound = sink_.Bind(gone, "n1", GpuAssignment{.gpu_ids = {0}});
  EXPECT_EQ(bound.code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(BindMayHaveLanded(bound));
  EXPECT_THAT(std::string(bound.message()),
              HasSubstr("POST /api/v1/namespaces/a/pods/gone/binding"));
}

// A server that accepts connections and never answers: the slowest API
// server there is. The kernel completes the TCP handshake from the backlog.
class SilentServer {
 public:
  SilentServer() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{.sin_family = AF_INET,
                        .sin_port = 0,
                        .sin_addr = {htonl(INADDR_LOOPBACK)}};
    bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    listen(fd_, 16);
    socklen_t size = sizeof(address);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &size);
    port_ = ntohs(address.sin_port);
  }
  ~SilentServer() { Close(); }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  KubeConfig Config() const {
    return KubeConfig{.host = "127.0.0.1", .port = port_, .tls = false};
  }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

using Clock = std::chrono::steady_clock;

TEST(KubeBindSinkDeadline, SilentServerEndsTheBindWithinItsBudget) {
  SilentServer server;
  auto client = *KubeClient::Create(server.Config());
  KubeBindSink sink(*client, std::chrono::milliseconds(300));
  const Clock::time_point start = Clock::now();
  absl::Status bound =
      sink.Bind(DomainPod(GpuPod("a/cpu", 0)), "n1", GpuAssignment{});
  const auto took = Clock::now() - start;
  // The binding was sent and never answered: it may still land.
  EXPECT_EQ(bound.code(), absl::StatusCode::kDeadlineExceeded) << bound;
  EXPECT_TRUE(BindMayHaveLanded(bound));
  EXPECT_LT(took, std::chrono::milliseconds(2500));  // not the 10 s default
}

TEST(KubeBindSinkDeadline, NoServerListeningMeansNotBound) {
  SilentServer server;
  const KubeConfig config = server.Config();
  server.Close();  // nothing listens on the port any more
  auto client = *KubeClient::Create(config);
  KubeBindSink sink(*client, std::chrono::milliseconds(500));
  absl::Status bound =
      sink.Bind(DomainPod(GpuPod("a/cpu", 0)), "n1", GpuAssignment{});
  EXPECT_EQ(bound.code(), absl::StatusCode::kUnavailable) << bound;
  EXPECT_FALSE(BindMayHaveLanded(bound));  // never sent
}

// The whole live path: filter and bind through the service, whose sink
// writes to the API server, while the sync follows the cluster.
TEST(LiveBindTest, ServiceBindReachesTheApiServerAndIsNotCountedTwice) {
  FakeApiServer server;
  server.AddNode(GpuNode("n1", 8));
  server.AddPod(GpuPod("a/train", 4));
  auto client = *KubeClient::Create(server.Config());
  KubeBindSink sink(*client);
  ExtenderService service(ServiceOptions{.bind_sink = &sink});
  ClusterSync sync(*client, service);
  sync.Start();
  ASSERT_TRUE(WaitUntil([&] { return sync.synced(); }));
  const Pod pod = DomainPod(server.Pod("a/train"));
  const std::vector<std::string> nodes = {"n1"};
  ASSERT_EQ(service.Filter(pod, nodes).passed.size(), 1u);
  const int watches_before = server.Count("WATCH pods");
  BindOutcome outcome = service.Bind({.pod_name = "train",
                                      .pod_namespace = "a",
                                      .pod_uid = "uid-a-train",
                                      .node = "n1"});
  ASSERT_EQ(outcome.error, "");
  EXPECT_EQ(server.Pod("a/train")["spec"]["nodeName"], "n1");
  EXPECT_EQ(
      server.Pod("a/train")["metadata"]["annotations"]["gpusched.io/gpu-ids"],
      "0,1,2,3");
  // The watch then reports the bound pod; the model already holds it. Once
  // a second watch has started after the bind, the event was applied.
  ASSERT_TRUE(WaitUntil(
      [&] { return server.Count("WATCH pods") >= watches_before + 2; }));
  EXPECT_TRUE(Fits(service, "n1", 4));  // 8 - 4 = 4 free, not 0
  EXPECT_FALSE(Fits(service, "n1", 5));
  sync.Stop();
}

}  // namespace
}  // namespace gpusched::kube::testing
