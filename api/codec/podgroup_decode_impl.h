#ifndef GPUSCHED_API_CODEC_PODGROUP_DECODE_IMPL_H_
#define GPUSCHED_API_CODEC_PODGROUP_DECODE_IMPL_H_

// Internal: the PodGroup field walk, over the same value adapters as the Pod
// and Node walk in k8s_decode_impl.h, so that PodGroups in scenario YAML and
// in watched JSON decode alike. Include only from .cc files.
//
// Three APIs share the kind name PodGroup; the API group of `apiVersion`
// decides which one an object is (any version of the group is accepted):
//   scheduling.volcano.sh  (Volcano, v1beta1): spec.minMember,
//     spec.minResources, spec.queue, spec.priorityClassName
//   scheduling.x-k8s.io    (coscheduling plugin, v1alpha1): spec.minMember,
//     spec.minResources, spec.scheduleTimeoutSeconds
//   scheduling.k8s.io      (Kubernetes' own, KEP-4671, v1beta1 and
//     v1alpha3 alike): spec.schedulingPolicy.gang.minCount, and the Kueue
//     queue label on the PodGroup itself
// Fields of another API are ignored like any unknown field, as the API
// server would never have stored them.

#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "api/codec/k8s_decode_impl.h"
#include "api/codec/pod_admission_state.h"
#include "queueing/workload_types.h"

namespace gpusched::codec_internal {

inline constexpr std::string_view kVolcanoApiGroup = "scheduling.volcano.sh";
inline constexpr std::string_view kCoschedulingApiGroup = "scheduling.x-k8s.io";
inline constexpr std::string_view kNativeApiGroup = "scheduling.k8s.io";

// The flavor named by `apiVersion` ("group/version").
template <K8sValue V>
absl::Status DecodePodGroupFlavor(const V& v, const PathSegment& at,
                                  PodGroup::Flavor* flavor) {
  std::optional<V> api_version = v.Find("apiVersion");
  const PathSegment here = at.Field("apiVersion");
  std::string_view text;
  if (!api_version.has_value() || api_version->kind() == ValueKind::kNull) {
    return FieldError(v.line(), here, "required for a PodGroup");
  }
  if (!api_version->GetString(&text)) {
    return TypeError(*api_version, here, "string");
  }
  const std::string_view group = text.substr(0, text.find('/'));
  if (group == kVolcanoApiGroup) {
    *flavor = PodGroup::Flavor::kVolcano;
  } else if (group == kCoschedulingApiGroup) {
    *flavor = PodGroup::Flavor::kCoscheduling;
  } else if (group == kNativeApiGroup) {
    *flavor = PodGroup::Flavor::kNative;
  } else {
    return FieldError(
        api_version->line(), here,
        absl::StrCat("unsupported PodGroup API \"", ToAbsl(text),
                     "\": expected scheduling.volcano.sh/v1beta1, "
                     "scheduling.x-k8s.io/v1alpha1 or "
                     "scheduling.k8s.io/v1beta1"));
  }
  return absl::OkStatus();
}

// spec.minMember: a gang of fewer than one member is no gang.
template <K8sValue V>
absl::Status DecodeMinMember(const V& v, const PathSegment& at,
                             int32_t* min_member) {
  std::optional<int32_t> value;
  if (absl::Status s = DecodeInt32(v, at, &value); !s.ok()) return s;
  if (!value.has_value()) return absl::OkStatus();
  if (*value < 1) {
    return FieldError(v.line(), at,
                      absl::StrCat("must be at least 1, got ", *value));
  }
  *min_member = *value;
  return absl::OkStatus();
}

template <K8sValue V>
absl::Status DecodeScheduleTimeout(const V& v, const PathSegment& at,
                                   std::optional<int64_t>* seconds) {
  if (v.kind() == ValueKind::kNull) return absl::OkStatus();
  int64_t value = 0;
  if (!v.GetInt64(&value)) return TypeError(v, at, "integer");
  if (value < 0) {
    return FieldError(v.line(), at,
                      absl::StrCat("must be non-negative, got ", value));
  }
  *seconds = value;
  return absl::OkStatus();
}

// A native PodGroup's spec.schedulingPolicy: gang.minCount makes the gang;
// a basic policy leaves min_member at 1 (its pods go one by one, as
// kube-scheduler places them, but are still one workload of one queue).
template <K8sValue V>
absl::Status DecodeNativePodGroupSpec(const V& v, const PathSegment& at,
                                      PodGroup* group) {
  auto min_count = [&](const V& gang, const PathSegment& here) {
    return DecodeMember(
        gang, here, "minCount", [&](const V& count, const PathSegment& path) {
          return DecodeMinMember(count, path, &group->min_member);
        });
  };
  return DecodeMember(v, at, "schedulingPolicy",
                      [&](const V& policy, const PathSegment& here) {
                        return DecodeMember(policy, here, "gang", min_count);
                      });
}

template <K8sValue V>
absl::Status DecodePodGroupSpec(const V& v, const PathSegment& at,
                                PodGroup* group) {
  if (group->flavor == PodGroup::Flavor::kNative) {
    return DecodeNativePodGroupSpec(v, at, group);
  }
  const bool volcano = group->flavor == PodGroup::Flavor::kVolcano;
  return DecodeFields(v, at, [&](std::string_view key, const V& child) {
    const PathSegment here = at.Field(key);
    if (key == "minMember") {
      return DecodeMinMember(child, here, &group->min_member);
    }
    // Both APIs carry minResources (v1.ResourceList).
    if (key == "minResources") {
      return DecodeResourceList(child, here, &group->min_resources);
    }
    if (volcano && key == "queue") {
      return DecodeString(child, here, &group->queue);
    }
    if (volcano && key == "priorityClassName") {
      return DecodeString(child, here, &group->priority_class_name);
    }
    if (!volcano && key == "scheduleTimeoutSeconds") {
      return DecodeScheduleTimeout(child, here,
                                   &group->schedule_timeout_seconds);
    }
    return absl::OkStatus();
  });
}

// A whole PodGroup; the caller has checked (or implied) kind PodGroup. The
// flavor is read first because it decides which spec fields exist.
template <K8sValue V>
absl::Status DecodePodGroupInto(const V& v, const PathSegment& at,
                                PodGroup* group) {
  if (v.kind() != ValueKind::kObject) return TypeError(v, at, "object");
  if (absl::Status s = DecodePodGroupFlavor(v, at, &group->flavor); !s.ok()) {
    return s;
  }
  absl::Status status =
      v.ForEachField([&](std::string_view key, const V& child) {
        const PathSegment here = at.Field(key);
        if (key == "metadata") {
          return DecodeObjectMeta(child, here, &group->meta);
        }
        if (key == "spec") return DecodePodGroupSpec(child, here, group);
        return absl::OkStatus();
      });
  if (status.ok() && group->flavor == PodGroup::Flavor::kNative) {
    auto queue = group->meta.labels.find(kQueueNameLabel);
    if (queue != group->meta.labels.end()) group->queue = queue->second;
  }
  return status;
}

}  // namespace gpusched::codec_internal

#endif  // GPUSCHED_API_CODEC_PODGROUP_DECODE_IMPL_H_
