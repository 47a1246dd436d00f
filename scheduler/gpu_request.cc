#include "scheduler/gpu_request.h"

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "scheduler/base/strings.h"

namespace gpusched {

bool ReadByNodeFit(std::string_view annotation) {
  return annotation == kGpuMilliAnnotation ||
         annotation == kGpuLinkAnnotation || annotation == kGpuIdsAnnotation;
}

bool IsGpuResource(std::string_view name) {
  return name == kNvidiaGpu ||
         absl::StartsWith(Sv(name), Sv(kMigResourcePrefix));
}

namespace {

// gpusched.io/gpu-milli: a share of one GPU, for a pod of exactly one.
absl::Status ReadMilliAnnotation(const StringMap& annotations,
                                 GpuRequest& request) {
  auto it = annotations.find(kGpuMilliAnnotation);
  if (it == annotations.end()) return absl::OkStatus();
  int milli = 0;
  if (!absl::SimpleAtoi(it->second, &milli) || milli < 1 || milli > 999) {
    return absl::InvalidArgumentError(
        absl::StrCat("annotation ", kGpuMilliAnnotation, "=\"", it->second,
                     "\" must be an integer from 1 to 999"));
  }
  if (request.gpus != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "annotation ", kGpuMilliAnnotation,
        " needs exactly 1 nvidia.com/gpu in the pod's requests; it has ",
        request.gpus));
  }
  request.milli = milli;
  return absl::OkStatus();
}

// gpusched.io/gpu-link: "nvlink" asks for NVLinked GPUs, "any" does not.
absl::Status ReadLinkAnnotation(const StringMap& annotations,
                                GpuRequest& request) {
  auto it = annotations.find(kGpuLinkAnnotation);
  if (it == annotations.end()) return absl::OkStatus();
  if (it->second != "nvlink" && it->second != "any") {
    return absl::InvalidArgumentError(
        absl::StrCat("annotation ", kGpuLinkAnnotation, "=\"", it->second,
                     "\" must be \"nvlink\" or \"any\""));
  }
  request.require_nvlink = it->second == "nvlink";
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<GpuRequest> GpuRequestOf(const Pod& pod,
                                        const ResourceList& requests) {
  GpuRequest request;
  int64_t gpus = requests.Get(kNvidiaGpu);
  if (gpus > 1024) {
    return absl::InvalidArgumentError(
        absl::StrCat("requests ", gpus, " nvidia.com/gpu; at most 1024"));
  }
  request.gpus = static_cast<int>(gpus);
  for (const auto& [name, amount] : requests.entries()) {
    if (absl::StartsWith(Sv(name), Sv(kMigResourcePrefix)) && amount > 0) {
      request.mig.emplace_back(name, amount);
    }
  }
  if (absl::Status s = ReadMilliAnnotation(pod.meta.annotations, request);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ReadLinkAnnotation(pod.meta.annotations, request);
      !s.ok()) {
    return s;
  }
  return request;
}

}  // namespace gpusched
