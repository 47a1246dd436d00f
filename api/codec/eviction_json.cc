#include "api/codec/eviction_json.h"

#include "api/codec/json_writer.h"

namespace gpusched {

std::string EncodeEviction(const EvictionTarget& pod) {
  JsonWriter w;
  w.Raw(R"({"apiVersion":"policy/v1","kind":"Eviction","metadata":{)");
  w.Key("name").String(pod.name).Raw(",");
  w.Key("namespace").String(pod.namespace_name).Raw("}");
  if (!pod.uid.empty() || !pod.resource_version.empty()) {
    w.Raw(R"(,"deleteOptions":{"preconditions":{)");
    if (!pod.uid.empty()) w.Key("uid").String(pod.uid);
    if (!pod.uid.empty() && !pod.resource_version.empty()) w.Raw(",");
    if (!pod.resource_version.empty()) {
      w.Key("resourceVersion").String(pod.resource_version);
    }
    w.Raw("}}");
  }
  w.Raw("}");
  return w.Take();
}

}  // namespace gpusched
