// One entry of a ConfigMap's data that gpusched keeps a document in (the
// runtime history, the requeue state): read from a ConfigMap body, written
// as a new labelled ConfigMap or as a merge patch of that entry alone.
//
// Errors are InvalidArgument naming the field or byte they reject
// ("ConfigMap.data.runtimes.json: expected string, got number").
#ifndef GPUSCHED_API_CODEC_CONFIGMAP_DATA_JSON_H_
#define GPUSCHED_API_CODEC_CONFIGMAP_DATA_JSON_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace gpusched {

// A ConfigMap body's data[key]; none when it has none.
absl::StatusOr<std::optional<std::string>> ConfigMapDataOf(
    std::string_view body, std::string_view key);
// The ConfigMap to create, labelled as gpusched's, holding data[key].
std::string EncodeConfigMapWithData(std::string_view namespace_name,
                                    std::string_view name, std::string_view key,
                                    std::string_view text);
// The merge patch that replaces its data[key] and leaves the rest.
std::string EncodeConfigMapDataPatch(std::string_view key,
                                     std::string_view text);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_CONFIGMAP_DATA_JSON_H_
