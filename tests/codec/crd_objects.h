// A PodGroup CustomResourceDefinition as the API server answers it: the
// codec's tests decode it, the fake API server serves it.
#ifndef GPUSCHED_TESTS_CODEC_CRD_OBJECTS_H_
#define GPUSCHED_TESTS_CODEC_CRD_OBJECTS_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace gpusched::testing {

// `group`'s PodGroup CRD serving `version`; `established` adds the
// conditions the API server sets once the CRD is served.
inline nlohmann::json PodGroupCrdObject(std::string_view group,
                                        std::string_view version,
                                        bool established) {
  using Json = nlohmann::json;
  Json crd = {
      {"apiVersion", "apiextensions.k8s.io/v1"},
      {"kind", "CustomResourceDefinition"},
      {"metadata", {{"name", "podgroups." + std::string(group)}}},
      {"spec",
       {{"group", group},
        {"scope", "Namespaced"},
        {"names", {{"kind", "PodGroup"}, {"plural", "podgroups"}}},
        {"versions",
         Json::array(
             {{{"name", version}, {"served", true}, {"storage", true}}})}}}};
  if (established) {
    crd["status"]["conditions"] =
        Json::array({{{"type", "NamesAccepted"}, {"status", "True"}},
                     {{"type", "Established"}, {"status", "True"}}});
  }
  return crd;
}

}  // namespace gpusched::testing

#endif  // GPUSCHED_TESTS_CODEC_CRD_OBJECTS_H_
