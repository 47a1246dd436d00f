#ifndef GPUSCHED_API_SERVER_DEMO_CLUSTER_H_
#define GPUSCHED_API_SERVER_DEMO_CLUSTER_H_

#include <string_view>

namespace gpusched {

// deploy/examples/demo-cluster.yaml, compiled in (api/embed_file.cmake).
std::string_view EmbeddedDemoCluster();

}  // namespace gpusched

#endif  // GPUSCHED_API_SERVER_DEMO_CLUSTER_H_
