// kubeconfig files (kube_config.h): clusters, users and contexts, inline
// base64 data, the server URL, exec plugin settings (parsed only:
// ParseKubeconfig never runs a plugin). File references resolve against a
// directory that does not exist, so they are errors rather than reads of this
// machine's files (an absolute path is read as written, as kubectl does).
#include <cstddef>
#include <cstdint>

#include "api/kube/kube_config.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)gpusched::kube::ParseKubeconfig(gpusched::fuzz::Text(data, size),
                                        "/nonexistent-fuzz-dir", "fuzz");
  return 0;
}
