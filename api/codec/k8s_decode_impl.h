#ifndef GPUSCHED_API_CODEC_K8S_DECODE_IMPL_H_
#define GPUSCHED_API_CODEC_K8S_DECODE_IMPL_H_

// Internal: the one field walk that turns a Kubernetes Pod or Node into the
// domain structs, written once over a small value adapter so that JSON
// (simdjson DOM, the hot path) and YAML (yaml-cpp, cluster files) cannot
// drift apart. Include only from .cc files: the adapters pull in simdjson and
// yaml-cpp, which public headers must not expose.
//
// A value adapter V is a cheap copyable handle on one parsed value with:
//   ValueKind kind() const;
//   int line() const;                       // 1-based source line, 0 unknown
//   bool GetString(std::string_view*) const;
//   bool GetQuantity(NumberBuffer*, std::string_view*) const;  // text form
//   bool GetInt64(int64_t*) const;
//   bool GetBool(bool*) const;
//   size_t ArraySizeHint() const;           // for reserve(); may be 0
//   std::optional<V> Find(std::string_view key) const;  // object member
//   absl::Status ForEachField(F) const;     // F(std::string_view, const V&)
//   absl::Status ForEachElement(F) const;   // F(const V&)
// ForEach* are called only after kind() confirmed an object or an array.
//
// Null is accepted wherever an object, array, map or string may appear and
// means "absent": the destination keeps its default. Map entries whose value
// is null are dropped for the same reason.

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "api/codec/pod_admission_state.h"
#include "scheduler/k8s_objects.h"
#include "scheduler/resource_list.h"

namespace gpusched::codec_internal {

enum class ValueKind : uint8_t {
  kNull,
  kObject,
  kArray,
  kString,
  kNumber,
  kBool,
};

// Scratch space for a number rendered as quantity text ("1", "0.5").
using NumberBuffer = std::array<char, 40>;

template <typename V>
concept K8sValue = std::copyable<V> &&
    requires(const V v, std::string_view* s, NumberBuffer* buffer, int64_t* i,
             bool* b) {
  { v.kind() } -> std::same_as<ValueKind>;
  { v.line() } -> std::same_as<int>;
  { v.GetString(s) } -> std::same_as<bool>;
  { v.GetQuantity(buffer, s) } -> std::same_as<bool>;
  { v.GetInt64(i) } -> std::same_as<bool>;
  { v.GetBool(b) } -> std::same_as<bool>;
  { v.ArraySizeHint() } -> std::convertible_to<size_t>;
  { v.Find(std::string_view()) } -> std::same_as<std::optional<V>>;
};

// Where a value sits, as a chain of stack frames: building it costs nothing,
// and it is rendered to text only when an error is reported.
struct PathSegment {
  enum class Kind : uint8_t {
    kRoot,     // text printed as is, then ".field": "Pod", "Nodes.items[3]"
    kContext,  // text printed then ": ": "document 2"
    kField,
    kIndex,
    kKey,  // map key: ".cpu", or ["nvidia.com/gpu"] when not an identifier
  };
  const PathSegment* parent = nullptr;
  Kind kind = Kind::kRoot;
  std::string_view text;
  size_t index = 0;

  static PathSegment Root(std::string_view text) {
    return {nullptr, Kind::kRoot, text, 0};
  }
  static PathSegment Context(std::string_view text) {
    return {nullptr, Kind::kContext, text, 0};
  }
  PathSegment Field(std::string_view name) const {
    return {this, Kind::kField, name, 0};
  }
  PathSegment Index(size_t i) const { return {this, Kind::kIndex, {}, i}; }
  PathSegment Key(std::string_view key) const {
    return {this, Kind::kKey, key, 0};
  }
};

// Debian's Abseil is built with its own absl::string_view rather than an
// alias of std::string_view, so the two are converted where they meet.
inline absl::string_view ToAbsl(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}
inline std::string_view ToStd(absl::string_view s) {
  return std::string_view(s.data(), s.size());
}

// Non-template helpers, in k8s_decode_impl.cc.
std::string RenderPath(const PathSegment& at);
// InvalidArgument "line N: path: message" (line and path when known).
absl::Status FieldError(int line, const PathSegment& at,
                        std::string_view message);
std::string_view KindName(ValueKind kind);
// `invalid quantity "12x": why`, without repeating the prefix when the
// quantity parser already wrote it.
std::string QuantityErrorMessage(std::string_view text,
                                 const absl::Status& status);
// RFC 3339 ("2025-01-01T00:00:00Z", fractional seconds, offsets) to Unix
// seconds, floored.
absl::StatusOr<int64_t> ParseRfc3339Seconds(std::string_view text);
std::string_view FormatInt64(int64_t value, NumberBuffer* buffer);
std::string_view FormatUint64(uint64_t value, NumberBuffer* buffer);
// Shortest text that round-trips, so 0.1 stays "0.1" and is not rounded up
// to 101m by the quantity parser.
std::string_view FormatDouble(double value, NumberBuffer* buffer);

template <K8sValue V>
absl::Status TypeError(const V& v, const PathSegment& at,
                       std::string_view expected) {
  return FieldError(v.line(), at,
                    absl::StrCat("expected ", ToAbsl(expected), ", got ",
                                 ToAbsl(KindName(v.kind()))));
}

// ---------------------------------------------------------------------------
// Generic shapes: object, list, scalar.

// Calls on_field(key, child) for every member; null is an empty object.
template <K8sValue V, typename F>
absl::Status DecodeFields(const V& v, const PathSegment& at, F&& on_field) {
  const ValueKind kind = v.kind();
  if (kind == ValueKind::kNull) return absl::OkStatus();
  if (kind != ValueKind::kObject) return TypeError(v, at, "object");
  return v.ForEachField(std::forward<F>(on_field));
}

// Decodes only the member `name` of `v`, with decode(child, path); the
// other members are ignored and null is an empty object.
template <K8sValue V, typename F>
absl::Status DecodeMember(const V& v, const PathSegment& at,
                          std::string_view name, F&& decode) {
  return DecodeFields(v, at, [&](std::string_view key, const V& child) {
    return key == name ? decode(child, at.Field(key)) : absl::OkStatus();
  });
}

// Appends one T per element, decoded by decode(element, path, T*). A null
// element yields a default T, as the Kubernetes API server decodes it.
template <K8sValue V, typename T, typename F>
absl::Status DecodeList(const V& v, const PathSegment& at, std::vector<T>* out,
                        F&& decode) {
  const ValueKind kind = v.kind();
  if (kind == ValueKind::kNull) return absl::OkStatus();
  if (kind != ValueKind::kArray) return TypeError(v, at, "array");
  out->reserve(out->size() + v.ArraySizeHint());
  size_t index = 0;
  return v.ForEachElement([&](const V& element) -> absl::Status {
    T& item = out->emplace_back();
    return decode(element, at.Index(index++), &item);
  });
}

template <K8sValue V>
absl::Status DecodeString(const V& v, const PathSegment& at, std::string* out) {
  if (v.kind() == ValueKind::kNull) return absl::OkStatus();
  std::string_view text;
  if (!v.GetString(&text)) return TypeError(v, at, "string");
  out->assign(text);
  return absl::OkStatus();
}

template <K8sValue V>
absl::Status DecodeStringList(const V& v, const PathSegment& at,
                              std::vector<std::string>* out) {
  return DecodeList(v, at, out,
                    [](const V& e, const PathSegment& p, std::string* s) {
                      return DecodeString(e, p, s);
                    });
}

template <K8sValue V>
absl::Status DecodeBool(const V& v, const PathSegment& at, bool* out) {
  if (v.kind() == ValueKind::kNull) return absl::OkStatus();
  if (!v.GetBool(out)) return TypeError(v, at, "boolean");
  return absl::OkStatus();
}

template <K8sValue V>
absl::Status DecodeInt32(const V& v, const PathSegment& at,
                         std::optional<int32_t>* out) {
  if (v.kind() == ValueKind::kNull) return absl::OkStatus();
  int64_t value = 0;
  if (!v.GetInt64(&value)) return TypeError(v, at, "integer");
  if (value < std::numeric_limits<int32_t>::min() ||
      value > std::numeric_limits<int32_t>::max()) {
    return FieldError(v.line(), at,
                      absl::StrCat("integer ", value, " out of int32 range"));
  }
  *out = static_cast<int32_t>(value);
  return absl::OkStatus();
}

// spec.activeDeadlineSeconds (a positive integer of seconds) in ms.
template <K8sValue V>
absl::Status DecodeDeadline(const V& v, const PathSegment& at,
                            std::optional<int64_t>* ms) {
  if (v.kind() == ValueKind::kNull) return absl::OkStatus();
  int64_t seconds = 0;
  if (!v.GetInt64(&seconds)) return TypeError(v, at, "integer");
  if (seconds <= 0 || seconds > std::numeric_limits<int64_t>::max() / 1000) {
    return FieldError(v.line(), at,
                      absl::StrCat("must be a positive number of seconds, "
                                   "not ",
                                   seconds));
  }
  *ms = seconds * 1000;
  return absl::OkStatus();
}

template <K8sValue V>
absl::Status DecodeTimestamp(const V& v, const PathSegment& at,
                             int64_t* unix_seconds) {
  if (v.kind() == ValueKind::kNull) return absl::OkStatus();
  std::string_view text;
  if (!v.GetString(&text)) return TypeError(v, at, "string");
  absl::StatusOr<int64_t> seconds = ParseRfc3339Seconds(text);
  if (!seconds.ok()) {
    return FieldError(v.line(), at, ToStd(seconds.status().message()));
  }
  *unix_seconds = *seconds;
  return absl::OkStatus();
}

// map[string]string: labels, annotations, nodeSelector.
template <K8sValue V>
absl::Status DecodeStringMap(const V& v, const PathSegment& at,
                             StringMap* out) {
  return DecodeFields(v, at, [&](std::string_view key, const V& child) {
    if (child.kind() == ValueKind::kNull) return absl::OkStatus();
    std::string_view text;
    if (!child.GetString(&text)) return TypeError(child, at.Key(key), "string");
    // Go's encoder sorts map keys, so appending at the end is the usual case.
    out->insert_or_assign(out->end(), std::string(key), text);
    return absl::OkStatus();
  });
}

// map[ResourceName]Quantity; a quantity is a string ("500m") or a number.
template <K8sValue V>
absl::Status DecodeResourceList(const V& v, const PathSegment& at,
                                ResourceList* out) {
  return DecodeFields(v, at, [&](std::string_view key, const V& child) {
    if (child.kind() == ValueKind::kNull) return absl::OkStatus();
    NumberBuffer buffer;
    std::string_view text;
    if (!child.GetQuantity(&buffer, &text)) {
      return TypeError(child, at.Key(key), "quantity (string or number)");
    }
    absl::StatusOr<int64_t> amount = ResourceList::ParseAmount(key, text);
    if (!amount.ok()) {
      return FieldError(child.line(), at.Key(key),
                        QuantityErrorMessage(text, amount.status()));
    }
    out->Set(key, *amount);
    return absl::OkStatus();
  });
}

// ---------------------------------------------------------------------------
// Shared parts of Pods and Nodes.

template <K8sValue V>
absl::Status DecodeObjectMeta(const V& v, const PathSegment& at,
                              ObjectMeta* meta) {
  return DecodeFields(v, at, [&](std::string_view key, const V& child) {
    const PathSegment here = at.Field(key);
    if (key == "name") return DecodeString(child, here, &meta->name);
    if (key == "namespace") {
      return DecodeString(child, here, &meta->namespace_name);
    }
    if (key == "uid") return DecodeString(child, here, &meta->uid);
    if (key == "resourceVersion") {
      return DecodeString(child, here, &meta->resource_version);
    }
    if (key == "labels") return DecodeStringMap(child, here, &meta->labels);
    if (key == "annotations") {
      return DecodeStringMap(child, here, &meta->annotations);
    }
    if (key == "creationTimestamp") {
      return DecodeTimestamp(child, here, &meta->creation_unix_seconds);
    }
    if (key == "deletionTimestamp") {
      int64_t unused = 0;  // when does not matter, only that it is set
      meta->deleting = child.kind() != ValueKind::kNull;
      return DecodeTimestamp(child, here, &unused);
    }
    return absl::OkStatus();
  });
}

// ---------------------------------------------------------------------------
// Pod.

template <K8sValue V>
absl::Status DecodeResources(const V& v, const PathSegment& at,
                             Container* container) {
  return DecodeFields(v, at, [&](std::string_view key, const V& child) {
    const PathSegment here = at.Field(key);
    if (key == "requests") {
      return DecodeResourceList(child, here, &container->requests);
    }
    if (key == "limits") {
      return DecodeResourceList(child, here, &container->limits);
    }
    return absl::OkStatus();
  });
}

template <K8sValue V>
absl::Status DecodeContainer(const V& v, const PathSegment& at,
                             Container* container) {
  return DecodeFields(v, at, [&](std::string_view key, const V& child) {
    const PathSegment here = at.Field(key);
    if (key == "name") return DecodeString(child, here, &container->name);
    if (key == "resources") return DecodeResources(child, here, container);
    return absl::OkStatus();
  });
}

template <K8sValue V>
absl::Status DecodeContainers(const V& v, const PathSegment& at,
                              std::vector<Container>* out) {
  return DecodeList(v, at, out,
                    [](const V& e, const PathSegment& p, Container* c) {
                      return DecodeContainer(e, p, c);
                    });
}

template <K8sValue V>
absl::Status DecodeRequirement(const V& v, const PathSegment& at,
                               NodeSelectorRequirement* requirement) {
  return DecodeFields(v, at, [&](std::string_view key, const V& child) {
    const PathSegment here = at.Field(key);
    if (key == "key") return DecodeString(child, here, &requirement->key);
    if (key == "operator") return DecodeString(child, here, &requirement->op);
    if (key == "values") {
      return DecodeStringList(child, here, &requirement->values);
    }
    return absl::OkStatus();
  });
}

template <K8sValue V>
absl::Status DecodeRequirements(const V& v, const PathSegment& at,
                                std::vector<NodeSelectorRequirement>* out) {
  return DecodeList(
      v, at, out,
      [](const V& e, const PathSegment& p, NodeSelectorRequirement* r) {
        return DecodeRequirement(e, p, r);
      });
}

template <K8sValue V>
absl::Status DecodeSelectorTerm(const V& v, const PathSegment& at,
                                NodeSelectorTerm* term) {
  return DecodeFields(v, at, [&](std::string_view key, const V& child) {
    const PathSegment here = at.Field(key);
    if (key == "matchExpressions") {
      return DecodeRequirements(child, here, &term->match_expressions);
    }
    if (key == "matchFields") {
      return DecodeRequirements(child, here, &term->match_fields);
    }
    return absl::OkStatus();
  });
}

// affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution
//   .nodeSelectorTerms[]; preferred terms and pod (anti-)affinity are not
// used by the scheduler and are skipped.
template <K8sValue V>
absl::Status DecodeAffinity(const V& v, const PathSegment& at, Pod* pod) {
  return DecodeFields(v, at, [&](std::string_view key, const V& node_aff) {
    if (key != "nodeAffinity") return absl::OkStatus();
    const PathSegment na = at.Field(key);
    return DecodeFields(node_aff, na, [&](std::string_view k2, const V& req) {
      if (k2 != "requiredDuringSchedulingIgnoredDuringExecution") {
        return absl::OkStatus();
      }
      const PathSegment rq = na.Field(k2);
      return DecodeFields(req, rq, [&](std::string_view k3, const V& terms) {
        if (k3 != "nodeSelectorTerms") return absl::OkStatus();
        return DecodeList(
            terms, rq.Field(k3), &pod->required_affinity_terms,
            [](const V& e, const PathSegment& p, NodeSelectorTerm* t) {
              return DecodeSelectorTerm(e, p, t);
            });
      });
    });
  });
}

// A Pod's Toleration or a DRA request's DeviceToleration: the same fields.
template <K8sValue V, typename T>
absl::Status DecodeToleration(const V& v, const PathSegment& at,
                              T* toleration) {
  return DecodeFields(v, at, [&](std::string_view key, const V& child) {
    const PathSegment here = at.Field(key);
    if (key == "key") return DecodeString(child, here, &toleration->key);
    if (key == "operator") return DecodeString(child, here, &toleration->op);
    if (key == "value") return DecodeString(child, here, &toleration->value);
    if (key == "effect") return DecodeString(child, here, &toleration->effect);
    return absl::OkStatus();
  });
}

// One of a pod's DRA claims: spec.resourceClaims[] (name,
// resourceClaimName, resourceClaimTemplateName) or, from_status,
// status.resourceClaimStatuses[] (name, resourceClaimName: the claim made
// from the template, read into status_claim_name).
template <K8sValue V>
absl::Status DecodePodClaimRef(const V& v, const PathSegment& at,
                               bool from_status, PodClaimRef* claim) {
  std::string* claim_name =
      from_status ? &claim->status_claim_name : &claim->claim_name;
  return DecodeFields(v, at, [&](std::string_view key, const V& child) {
    const PathSegment here = at.Field(key);
    if (key == "name") return DecodeString(child, here, &claim->name);
    if (key == "resourceClaimName") {
      return DecodeString(child, here, claim_name);
    }
    if (!from_status && key == "resourceClaimTemplateName") {
      return DecodeString(child, here, &claim->template_name);
    }
    return absl::OkStatus();
  });
}

// Gives each claim of `claims` the status_claim_name of the entry of
// `statuses` with its name; statuses naming no claim of the spec are
// dropped. In k8s_decode_impl.cc.
void JoinPodClaimStatuses(std::vector<PodClaimRef>& statuses,
                          std::vector<PodClaimRef>* claims);

template <K8sValue V>
absl::Status DecodePodSpecField(std::string_view key, const V& child,
                                const PathSegment& here, Pod* pod) {
  if (key == "containers")
    return DecodeContainers(child, here, &pod->containers);
  if (key == "initContainers") {
    return DecodeContainers(child, here, &pod->init_containers);
  }
  if (key == "overhead") return DecodeResourceList(child, here, &pod->overhead);
  if (key == "nodeName") return DecodeString(child, here, &pod->node_name);
  if (key == "schedulerName") {
    return DecodeString(child, here, &pod->scheduler_name);
  }
  if (key == "nodeSelector") {
    return DecodeStringMap(child, here, &pod->node_selector);
  }
  if (key == "affinity") return DecodeAffinity(child, here, pod);
  if (key == "tolerations") {
    return DecodeList(child, here, &pod->tolerations,
                      [](const V& e, const PathSegment& p, Toleration* t) {
                        return DecodeToleration(e, p, t);
                      });
  }
  if (key == "priority") return DecodeInt32(child, here, &pod->priority);
  if (key == "schedulingGates") {
    return DecodeList(
        child, here, &pod->scheduling_gates,
        [](const V& e, const PathSegment& p, std::string* name) {
          return DecodeFields(e, p, [&](std::string_view k, const V& c) {
            return k == "name" ? DecodeString(c, p.Field(k), name)
                               : absl::OkStatus();
          });
        });
  }
  if (key == "priorityClassName") {
    return DecodeString(child, here, &pod->priority_class_name);
  }
  if (key == "schedulingGroup") {
    return DecodeMember(child, here, "podGroupName",
                        [&](const V& c, const PathSegment& p) {
                          return DecodeString(c, p, &pod->pod_group_name);
                        });
  }
  if (key == "activeDeadlineSeconds") {
    return DecodeDeadline(child, here, &pod->runtime.deadline_ms);
  }
  if (key == "resourceClaims") {
    return DecodeList(child, here, &pod->resource_claims,
                      [](const V& e, const PathSegment& p, PodClaimRef* c) {
                        return DecodePodClaimRef(e, p, /*from_status=*/false,
                                                 c);
                      });
  }
  return absl::OkStatus();
}

// status.phase, mapped from its name here once; null leaves it as it was.
template <K8sValue V>
absl::Status DecodePodPhase(const V& v, const PathSegment& at, PodPhase* out) {
  if (v.kind() == ValueKind::kNull) return absl::OkStatus();
  std::string_view name;
  if (!v.GetString(&name)) return TypeError(v, at, "string");
  *out = PodPhaseFromName(name);
  return absl::OkStatus();
}

// status.resourceClaimStatuses go to `claim_statuses`, to be joined with
// spec.resourceClaims once both are read (JSON may carry them in any order).
template <K8sValue V>
absl::Status DecodePodStatus(const V& v, const PathSegment& at, Pod* pod,
                             std::vector<PodClaimRef>* claim_statuses) {
  return DecodeFields(v, at, [&](std::string_view key, const V& child) {
    const PathSegment here = at.Field(key);
    if (key == "phase") return DecodePodPhase(child, here, &pod->phase);
    if (key == "nominatedNodeName") {
      return DecodeString(child, here, &pod->nominated_node_name);
    }
    if (key == "resourceClaimStatuses") {
      return DecodeList(child, here, claim_statuses,
                        [](const V& e, const PathSegment& p, PodClaimRef* c) {
                          return DecodePodClaimRef(e, p, /*from_status=*/true,
                                                   c);
                        });
    }
    if (key == "extendedResourceClaimStatus") {
      return DecodeMember(child, here, "resourceClaimName",
                          [&](const V& c, const PathSegment& p) {
                            return DecodeString(c, p,
                                                &pod->extended_resource_claim);
                          });
    }
    return absl::OkStatus();
  });
}

// The fields of a Pod object: metadata, spec and status.
template <K8sValue V>
absl::Status DecodePodFields(const V& v, const PathSegment& at, Pod* pod) {
  std::vector<PodClaimRef> claim_statuses;  // allocates only when present
  absl::Status status =
      v.ForEachField([&](std::string_view key, const V& child) {
        const PathSegment here = at.Field(key);
        if (key == "metadata") return DecodeObjectMeta(child, here, &pod->meta);
        if (key == "spec") {
          return DecodeFields(child, here, [&](std::string_view k, const V& c) {
            return DecodePodSpecField(k, c, here.Field(k), pod);
          });
        }
        if (key == "status") {
          return DecodePodStatus(child, here, pod, &claim_statuses);
        }
        return absl::OkStatus();
      });
  if (status.ok() && !claim_statuses.empty()) {
    JoinPodClaimStatuses(claim_statuses, &pod->resource_claims);
  }
  return status;
}

// A whole Pod. Unlike nested objects, the top level must be an object: a
// null Pod is not a Pod. Every reader of a Pod, JSON or YAML, comes here,
// so its admission state is decoded here, once, from the whole pod.
template <K8sValue V>
absl::Status DecodePodInto(const V& v, const PathSegment& at, Pod* pod) {
  if (v.kind() != ValueKind::kObject) return TypeError(v, at, "object");
  absl::Status status = DecodePodFields(v, at, pod);
  if (status.ok()) ReadPodAdmissionState(*pod);
  return status;
}

// ---------------------------------------------------------------------------
// Node.

// A Node's Taint or a DRA device's DeviceTaint: the same fields.
template <K8sValue V, typename T>
absl::Status DecodeTaint(const V& v, const PathSegment& at, T* taint) {
  return DecodeFields(v, at, [&](std::string_view key, const V& child) {
    const PathSegment here = at.Field(key);
    if (key == "key") return DecodeString(child, here, &taint->key);
    if (key == "value") return DecodeString(child, here, &taint->value);
    if (key == "effect") return DecodeString(child, here, &taint->effect);
    return absl::OkStatus();
  });
}

template <K8sValue V>
absl::Status DecodeNodeSpec(const V& v, const PathSegment& at, Node* node) {
  return DecodeFields(v, at, [&](std::string_view key, const V& child) {
    const PathSegment here = at.Field(key);
    if (key == "unschedulable") {
      return DecodeBool(child, here, &node->unschedulable);
    }
    if (key == "taints") {
      return DecodeList(child, here, &node->taints,
                        [](const V& e, const PathSegment& p, Taint* t) {
                          return DecodeTaint(e, p, t);
                        });
    }
    return absl::OkStatus();
  });
}

template <K8sValue V>
absl::Status DecodeNodeStatus(const V& v, const PathSegment& at, Node* node) {
  return DecodeFields(v, at, [&](std::string_view key, const V& child) {
    const PathSegment here = at.Field(key);
    if (key == "capacity") {
      return DecodeResourceList(child, here, &node->capacity);
    }
    if (key == "allocatable") {
      return DecodeResourceList(child, here, &node->allocatable);
    }
    return absl::OkStatus();
  });
}

// A whole Node; as for Pods, the top level must be an object.
template <K8sValue V>
absl::Status DecodeNodeInto(const V& v, const PathSegment& at, Node* node) {
  if (v.kind() != ValueKind::kObject) return TypeError(v, at, "object");
  return v.ForEachField([&](std::string_view key, const V& child) {
    const PathSegment here = at.Field(key);
    if (key == "metadata") return DecodeObjectMeta(child, here, &node->meta);
    if (key == "spec") return DecodeNodeSpec(child, here, node);
    if (key == "status") return DecodeNodeStatus(child, here, node);
    return absl::OkStatus();
  });
}

}  // namespace gpusched::codec_internal

#endif  // GPUSCHED_API_CODEC_K8S_DECODE_IMPL_H_
