// The kubectl plugin's readers of the visibility API's answers
// (visibility_decode.h), each decoded answer then printed as the plugin
// prints it (render.h), and the -o json and -o yaml printers
// (json_render.h) on the same text: what a server, a proxy or a version
// mismatch sends the plugin is outside input. The first byte picks the
// answer: p PendingWorkloadsSummary, c ClusterQueueList, h CohortList,
// l LocalQueueList, e WorkloadExplanation.
#include <cstddef>
#include <cstdint>

#include "api/cli/render.h"
#include "api/codec/json_render.h"
#include "api/codec/visibility_decode.h"
#include "tests/fuzz/fuzz_util.h"

namespace gpusched {
namespace {

constexpr int64_t kNow = 1795831200;  // 2026-11-28T02:00:00Z

void Decode(size_t kind, std::string_view text) {
  switch (kind) {
    case 0:
      if (auto items = DecodePendingWorkloads(text); items.ok()) {
        (void)cli::RenderQueue(*std::move(items), kNow);
      }
      break;
    case 1:
      if (auto queues = DecodeClusterQueueList(text); queues.ok()) {
        (void)cli::RenderStatus(*queues, {});
      }
      break;
    case 2:
      if (auto cohorts = DecodeCohortList(text); cohorts.ok()) {
        (void)cli::RenderStatus({}, *cohorts);
      }
      break;
    case 3:
      (void)DecodeLocalQueueList(text);
      break;
    default:
      if (auto explanation = DecodeWorkloadExplanation(text);
          explanation.ok()) {
        (void)cli::RenderExplanation(*explanation, kNow);
      }
      break;
  }
}

}  // namespace
}  // namespace gpusched

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto [kind, text] = gpusched::fuzz::Pick(data, size, "pchle");
  gpusched::Decode(kind, text);
  (void)gpusched::IndentJson(text);
  (void)gpusched::JsonToYaml(text);
  (void)gpusched::ListItemsJson(text);
  return 0;
}
