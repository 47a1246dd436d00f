#include "api/codec/kueue_pod_json.h"

#include "absl/strings/str_cat.h"
#include "api/codec/json_writer.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace {

using simdjson::dom::element;
using simdjson::dom::object;

constexpr std::string_view kGroupName = "kueue.x-k8s.io/pod-group-name";

absl::Status Expected(std::string_view path, std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(Sv(path), ": expected ", Sv(what)));
}

// `parent[key]` as a string; absent or null reads as "".
absl::StatusOr<std::string> StringField(element parent, std::string_view key,
                                        std::string_view path) {
  element value;
  if (parent[key].get(value) != simdjson::SUCCESS || value.is_null()) {
    return std::string();
  }
  std::string_view text;
  if (value.get(text) != simdjson::SUCCESS) {
    return Expected(absl::StrCat(Sv(path), ".", Sv(key)), "a string");
  }
  return std::string(text);
}

absl::StatusOr<bool> HasFinalizer(element metadata) {
  element list;
  if (metadata["finalizers"].get(list) != simdjson::SUCCESS || list.is_null()) {
    return false;
  }
  if (!list.is_array()) {
    return Expected("metadata.finalizers", "an array of strings");
  }
  for (element item : list.get_array()) {
    std::string_view name;
    if (item.get(name) != simdjson::SUCCESS) {
      return Expected("metadata.finalizers", "an array of strings");
    }
    if (name == kKueueManagedFinalizer) return true;
  }
  return false;
}

absl::Status ReadMetadata(element metadata, KueueManagedPod& out) {
  for (auto [key, into] : {std::pair{"name", &out.name},
                           std::pair{"namespace", &out.namespace_name},
                           std::pair{"uid", &out.uid}}) {
    absl::StatusOr<std::string> value = StringField(metadata, key, "metadata");
    if (!value.ok()) return value.status();
    *into = *std::move(value);
  }
  if (out.name.empty() || out.namespace_name.empty()) {
    return Expected("metadata", "a name and a namespace");
  }
  for (std::string_view field : {"labels", "annotations"}) {
    element map;
    if (out.group.empty() && metadata[field].get(map) == simdjson::SUCCESS &&
        map.is_object()) {
      absl::StatusOr<std::string> group =
          StringField(map, kGroupName, absl::StrCat("metadata.", Sv(field)));
      if (!group.ok()) return group.status();
      out.group = *std::move(group);
    }
  }
  element deletion;
  out.deleting =
      metadata["deletionTimestamp"].get(deletion) == simdjson::SUCCESS &&
      !deletion.is_null();
  absl::StatusOr<bool> finalizer = HasFinalizer(metadata);
  if (!finalizer.ok()) return finalizer.status();
  out.has_finalizer = *finalizer;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<KueueManagedPod> DecodeKueueManagedPod(element pod) {
  element metadata;
  if (pod["metadata"].get(metadata) != simdjson::SUCCESS ||
      !metadata.is_object()) {
    return Expected("metadata", "an object");
  }
  KueueManagedPod out;
  if (absl::Status read = ReadMetadata(metadata, out); !read.ok()) return read;
  element status;
  if (pod["status"].get(status) == simdjson::SUCCESS && status.is_object()) {
    absl::StatusOr<std::string> phase = StringField(status, "phase", "status");
    if (!phase.ok()) return phase.status();
    out.terminal = *phase == "Succeeded" || *phase == "Failed";
  }
  return out;
}

std::string ReleaseKueueFinalizerPatch(std::string_view uid) {
  JsonWriter w;
  w.Raw(R"({"metadata":{"$deleteFromPrimitiveList/finalizers":[)");
  w.String(kKueueManagedFinalizer).Raw(R"(],"uid":)").String(uid).Raw("}}");
  return w.Take();
}

}  // namespace gpusched
