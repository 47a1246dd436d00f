#include "scheduler/dra_objects.h"

#include "absl/strings/str_cat.h"

namespace gpusched {

std::string DraKey(const ObjectMeta& meta) {
  if (meta.namespace_name.empty()) return meta.name;
  return absl::StrCat(meta.namespace_name, "/", meta.name);
}

std::string QualifyDraName(std::string_view name, std::string_view driver) {
  if (name.find('/') != std::string_view::npos) return std::string(name);
  std::string qualified(driver);
  qualified += '/';
  qualified += name;
  return qualified;
}

}  // namespace gpusched
