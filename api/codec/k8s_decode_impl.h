#ifndef GPUSCHED_API_CODEC_K8S_DECODE_IMPL_H_
#define GPUSCHED_API_CODEC_K8S_DECODE_IMPL_H_

// Internal: the one field walk that turns a Kubernetes Pod or Node into the
// domain structs, over the value adapters and shapes of
// k8s_decode_shapes.h. Include only from .cc files, as that header says.

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "api/codec/k8s_decode_shapes.h"
#include "api/codec/pod_admission_state.h"
#include "scheduler/k8s_objects.h"

namespace gpusched::codec_internal {

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

// spec fields that say where and when the pod may be placed.
template <K8sValue V>
absl::Status DecodePodPlacementField(std::string_view key, const V& child,
                                     const PathSegment& here, Pod* pod) {
  if (key == "nodeName") return DecodeString(child, here, &pod->node_name);
  if (key == "schedulerName") {
    return DecodeString(child, here, &pod->scheduler_name);
  }
  if (key == "nodeSelector") {
    return DecodeStringMap(child, here, &pod->node_selector);
  }
  if (key == "affinity") return DecodeAffinity(child, here, pod);
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
  return absl::OkStatus();
}

// spec fields: what the pod asks for, then where it may be placed.
template <K8sValue V>
absl::Status DecodePodSpecField(std::string_view key, const V& child,
                                const PathSegment& here, Pod* pod) {
  if (key == "containers")
    return DecodeContainers(child, here, &pod->containers);
  if (key == "initContainers") {
    return DecodeContainers(child, here, &pod->init_containers);
  }
  if (key == "overhead") return DecodeResourceList(child, here, &pod->overhead);
  if (key == "tolerations") {
    return DecodeList(child, here, &pod->tolerations,
                      [](const V& e, const PathSegment& p, Toleration* t) {
                        return DecodeToleration(e, p, t);
                      });
  }
  if (key == "resourceClaims") {
    return DecodeList(child, here, &pod->resource_claims,
                      [](const V& e, const PathSegment& p, PodClaimRef* c) {
                        return DecodePodClaimRef(e, p, /*from_status=*/false,
                                                 c);
                      });
  }
  return DecodePodPlacementField(key, child, here, pod);
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

// status.conditions: only whether the Ready condition is True is kept.
template <K8sValue V>
absl::Status DecodePodReady(const V& v, const PathSegment& at, bool* ready) {
  if (v.kind() == ValueKind::kNull) return absl::OkStatus();
  std::vector<std::pair<std::string, std::string>> conditions;
  absl::Status status = DecodeList(
      v, at, &conditions,
      [](const V& e, const PathSegment& p,
         std::pair<std::string, std::string>* c) {
        return DecodeFields(e, p, [&](std::string_view key, const V& child) {
          if (key == "type")
            return DecodeString(child, p.Field(key), &c->first);
          if (key == "status") {
            return DecodeString(child, p.Field(key), &c->second);
          }
          return absl::OkStatus();
        });
      });
  if (!status.ok()) return status;
  for (const auto& [type, value] : conditions) {
    if (type == "Ready") *ready = value == "True";
  }
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
    if (key == "conditions") return DecodePodReady(child, here, &pod->ready);
    if (key == "startTime") {
      return DecodeTimestamp(child, here, &pod->start_unix_seconds);
    }
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
