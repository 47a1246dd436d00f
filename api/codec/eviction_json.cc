#include "api/codec/eviction_json.h"

#include "api/codec/json_writer.h"

namespace gpusched {

std::string EncodeEviction(const EvictionTarget& pod) {
  JsonWriter w;
  w.Raw(R"({"apiVersion":"policy/v1","kind":"Eviction","metadata":{)");
  w.Key("name").String(pod.name).Raw(",");
  w.Key("namespace").String(pod.namespace_name).Raw("}");
  if (!pod.uid.empty()) {
    w.Raw(R"(,"deleteOptions":{"preconditions":{)");
    w.Key("uid").String(pod.uid).Raw("}}");
  }
  w.Raw("}");
  return w.Take();
}

}  // namespace gpusched
