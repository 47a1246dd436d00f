// Printing an API server's JSON answer as kubectl's -o json and -o yaml do,
// for `kubectl gpusched` (api/cli): the server's fields in the server's
// order, so that whatever it adds is shown without a change here.
#ifndef GPUSCHED_API_CODEC_JSON_RENDER_H_
#define GPUSCHED_API_CODEC_JSON_RENDER_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace gpusched {

// `json` indented by 4 spaces, as kubectl -o json prints, with a final
// newline.
absl::StatusOr<std::string> IndentJson(std::string_view json);

// `json` as block YAML (2 spaces; a list's items at its key's column, as
// kubectl -o yaml prints). Strings that YAML would read as another type
// ("true", "12", "") or that hold special characters are double-quoted.
absl::StatusOr<std::string> JsonToYaml(std::string_view json);

// The objects of a List's `items`, each as compact JSON.
absl::StatusOr<std::vector<std::string>> ListItemsJson(std::string_view json);

// A kubectl List ({"apiVersion":"v1","kind":"List","items":[...]}) of
// `objects` (compact JSON each): what kubectl prints for several objects.
std::string JsonList(const std::vector<std::string>& objects);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_JSON_RENDER_H_
