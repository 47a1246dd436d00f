// Dynamic Resource Allocation objects of resource.k8s.io/v1 as the API
// server writes them (dra_json.h). Variants by first byte: s ResourceSlice,
// c DeviceClass, r ResourceClaim, t ResourceClaimTemplate, x DeviceTaintRule.
#include <cstddef>
#include <cstdint>

#include "api/codec/dra_json.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto [variant, text] = gpusched::fuzz::Pick(data, size, "scrtx");
  switch (variant) {
    case 0:
      (void)gpusched::ResourceSliceFromJson(text);
      break;
    case 1:
      (void)gpusched::DeviceClassFromJson(text);
      break;
    case 2:
      (void)gpusched::ResourceClaimFromJson(text);
      break;
    case 3:
      (void)gpusched::ResourceClaimTemplateFromJson(text);
      break;
    default:
      (void)gpusched::DeviceTaintRuleFromJson(text);
  }
  return 0;
}
