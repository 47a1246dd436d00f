#ifndef GPUSCHED_API_CODEC_CRD_JSON_H_
#define GPUSCHED_API_CODEC_CRD_JSON_H_

// apiextensions.k8s.io/v1 CustomResourceDefinition JSON to what the CRD
// watch (api/kube/crd_watch.h) needs: is it established, and is a version
// served. Errors are InvalidArgument naming the CRD and the field:
// `CustomResourceDefinition podgroups.scheduling.volcano.sh:
// spec.versions[0].served: expected boolean, got string`.
//
// Exposes simdjson like k8s_json.h, for watch events already parsed.

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "simdjson.h"

namespace gpusched {

// What a CustomResourceDefinition says about serving one of its versions.
struct CrdServing {
  std::string name;             // metadata.name
  bool established = false;     // status.conditions: Established is "True"
  bool version_served = false;  // spec.versions: that version, served: true
  bool ready() const { return established && version_served; }
};

// A CRD without status is not established yet.
absl::StatusOr<CrdServing> DecodeCrd(simdjson::dom::element crd,
                                     std::string_view version);

// Every item of a CustomResourceDefinitionList body.
absl::StatusOr<std::vector<CrdServing>> DecodeCrdList(std::string_view body,
                                                      std::string_view version);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_CRD_JSON_H_
