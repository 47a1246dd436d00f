// Extender requests of every verb, through ExtenderApi as the HTTP server
// hands them over (extender_api.h): decoding, the verdicts of a model of a
// few GPU nodes (model.yaml) and the encoding of the answer. An input is a
// sequence of requests separated by NUL bytes, each a verb letter and its
// body: f filter, p prioritize, e preempt, b bind, c pod completion. A
// sequence lets a filter place a pending pod that a later bind then binds.
// Each input starts from a fresh copy of the model, so runs are repeatable.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "api/codec/cluster_file.h"
#include "api/server/extender_api.h"
#include "tests/fuzz/fuzz_util.h"

namespace gpusched {
namespace {

// Loaded on the first input (libFuzzer's start-up hook is fuzz_init.cc's).
const ClusterObjects& Model() {
  static const ClusterObjects* const model = [] {
    absl::StatusOr<ClusterObjects> objects =
        LoadClusterFile(GPUSCHED_FUZZ_MODEL);
    if (!objects.ok()) {
      fprintf(stderr, "extender_fuzz: %s\n",
              objects.status().ToString().c_str());
      abort();
    }
    return new ClusterObjects(*std::move(objects));
  }();
  return *model;
}

http::Response Serve(ExtenderApi& api, size_t verb, std::string body) {
  const http::Request request{.method = "POST", .body = std::move(body)};
  switch (verb) {
    case 0:
      return api.Filter(request);
    case 1:
      return api.Prioritize(request);
    case 2:
      return api.Preempt(request);
    case 3:
      return api.Bind(request);
    default:
      return api.CompletePod(request);
  }
}

// Every other request leaves room after the body, so the decoder's
// in-place path (DecodeOptions::body_padded) is fuzzed as well as its copy.
std::string Body(std::string_view text, size_t index) {
  std::string body;
  if (index % 2 == 1) body.reserve(text.size() + kJsonReadPadding);
  body.assign(text);
  return body;
}

void Run(std::string_view input) {
  ExtenderService service;
  service.UpsertNodes(Model().nodes);
  service.AddRunningPods(Model().pods);
  Metrics metrics;
  ExtenderApi api(service, metrics, {});
  size_t index = 0;
  while (!input.empty()) {
    const size_t end = std::min(input.find('\0'), input.size());
    const std::string_view one = input.substr(0, end);
    input.remove_prefix(std::min(end + 1, input.size()));
    const auto [verb, body] = fuzz::Pick(
        reinterpret_cast<const uint8_t*>(one.data()), one.size(), "fpebc");
    if (one.empty()) continue;
    (void)Serve(api, verb, Body(body, index++));
  }
}

}  // namespace
}  // namespace gpusched

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gpusched::Run(gpusched::fuzz::Text(data, size));
  return 0;
}
