// The GPU map the read surfaces serve: published at once, refreshed from
// the service's model, read from other threads without its lock.
#include "api/controller/gpu_map_publisher.h"

#include <atomic>
#include <thread>

#include "gtest/gtest.h"
#include "tests/queueing/builders.h"

namespace gpusched {
namespace {

TEST(GpuMapPublisherTest, PublishesAtOnceAndAfterEachRefresh) {
  ExtenderService service;
  service.UpsertNodes({Dgx("dgx-0")});
  GpuMapPublisher publisher(service);
  ASSERT_EQ(publisher.Latest()->nodes.size(), 1u);
  service.UpsertNodes({Dgx("dgx-1")});
  EXPECT_EQ(publisher.Latest()->nodes.size(), 1u);  // until the refresh
  publisher.Refresh();
  EXPECT_EQ(publisher.Latest()->nodes.size(), 2u);
}

TEST(GpuMapPublisherTest, ReadersNeverSeeAHalfBuiltMap) {
  ExtenderService service;
  service.UpsertNodes({Dgx("dgx-0")});
  GpuMapPublisher publisher(service);
  std::atomic<bool> stop{false};
  std::thread reader([&] {
    while (!stop) {
      std::shared_ptr<const GpuMap> map = publisher.Latest();
      ASSERT_NE(map, nullptr);
      for (const auto& node : map->nodes) ASSERT_EQ(node->gpus.size(), 8u);
    }
  });
  for (int i = 1; i < 50; ++i) {
    service.UpsertNodes({Dgx("dgx-" + std::to_string(i))});
    publisher.Refresh();
  }
  stop = true;
  reader.join();
  EXPECT_EQ(publisher.Latest()->nodes.size(), 50u);
}

}  // namespace
}  // namespace gpusched
