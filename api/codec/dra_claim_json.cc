// ResourceClaim and ResourceClaimTemplate JSON (dra_json.h): the claim spec
// they share, and a claim's status.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/codec/dra_json.h"
#include "api/codec/dra_json_internal.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace codec_internal {
namespace {

using Mode = DraRequestAlternative::Mode;

// allocationMode: ExactCount (also when unset) or All; another mode would
// be a way of allocating the scheduler does not know.
absl::Status DecodeAllocationMode(const JsonValue& v, const PathSegment& at,
                                  Mode* mode) {
  if (v.kind() == ValueKind::kNull) return absl::OkStatus();
  std::string_view text;
  if (!v.GetString(&text)) return TypeError(v, at, "string");
  if (text.empty() || text == "ExactCount") {
    *mode = Mode::kExactCount;
  } else if (text == "All") {
    *mode = Mode::kAll;
  } else {
    return FieldError(0, at,
                      absl::StrCat("unknown allocation mode \"", Sv(text),
                                   "\": expected ExactCount or All"));
  }
  return absl::OkStatus();
}

// count: 0 or unset is the API server's default, 1.
absl::Status DecodeCount(const JsonValue& v, const PathSegment& at,
                         int64_t* count) {
  int64_t value = 0;
  if (absl::Status s = DecodeInt64(v, at, &value); !s.ok()) return s;
  if (value < 0) {
    return FieldError(0, at, absl::StrCat("must not be negative, got ", value));
  }
  *count = value == 0 ? 1 : value;
  return absl::OkStatus();
}

// The fields of `exactly` and of a firstAvailable subrequest; only `exactly`
// has adminAccess (`exact`).
absl::Status DecodeAlternativeField(std::string_view key, const JsonValue& c,
                                    const PathSegment& here, bool exact,
                                    DraRequestAlternative* alternative) {
  if (key == "deviceClassName") {
    return DecodeString(c, here, &alternative->device_class);
  }
  if (key == "selectors") {
    return DecodeDraSelectors(c, here, &alternative->selectors);
  }
  if (key == "allocationMode") {
    return DecodeAllocationMode(c, here, &alternative->mode);
  }
  if (key == "count") return DecodeCount(c, here, &alternative->count);
  if (key == "tolerations") {
    return DecodeList(
        c, here, &alternative->tolerations,
        [](const JsonValue& e, const PathSegment& p, DeviceToleration* t) {
          return DecodeToleration(e, p, t);
        });
  }
  if (exact && key == "adminAccess") {
    return DecodeBool(c, here, &alternative->admin_access);
  }
  // Subrequests carry their own name (firstAvailable[].name).
  if (!exact && key == "name") return DecodeString(c, here, &alternative->name);
  return absl::OkStatus();
}

absl::Status DecodeAlternative(const JsonValue& v, const PathSegment& at,
                               bool exact, DraRequestAlternative* alternative) {
  return DecodeFields(v, at, [&](std::string_view key, const JsonValue& c) {
    return DecodeAlternativeField(key, c, at.Field(key), exact, alternative);
  });
}

// One of exactly and firstAvailable (non-empty) must be set: with neither
// the request asks for nothing known, with both it is ambiguous.
absl::Status DecodeRequestShape(const JsonValue& v, const PathSegment& at,
                                DraDeviceRequest* request) {
  std::optional<JsonValue> exactly = Member(v, "exactly");
  if (std::optional<JsonValue> first = Member(v, "firstAvailable")) {
    absl::Status status = DecodeList(
        *first, at.Field("firstAvailable"), &request->alternatives,
        [](const JsonValue& e, const PathSegment& p, DraRequestAlternative* a) {
          return DecodeAlternative(e, p, /*exact=*/false, a);
        });
    if (!status.ok()) return status;
  }
  request->first_available = !request->alternatives.empty();
  if (exactly.has_value() && request->first_available) {
    return FieldError(0, at, "both exactly and firstAvailable are set");
  }
  if (!exactly.has_value() && !request->first_available) {
    return FieldError(0, at, "one of exactly and firstAvailable is required");
  }
  if (!exactly.has_value()) return absl::OkStatus();
  if (absl::Status s = ExpectObject(*exactly, at.Field("exactly")); !s.ok()) {
    return s;
  }
  return DecodeAlternative(*exactly, at.Field("exactly"), /*exact=*/true,
                           &request->alternatives.emplace_back());
}

// An alternative is named as the request (`exactly`) or "request/sub".
absl::Status DecodeRequest(const JsonValue& v, const PathSegment& at,
                           DraDeviceRequest* request) {
  if (absl::Status s = ExpectObject(v, at); !s.ok()) return s;
  if (std::optional<JsonValue> name = Member(v, "name")) {
    absl::Status s = DecodeString(*name, at.Field("name"), &request->name);
    if (!s.ok()) return s;
  }
  if (absl::Status s = DecodeRequestShape(v, at, request); !s.ok()) return s;
  for (DraRequestAlternative& alternative : request->alternatives) {
    alternative.name =
        request->first_available
            ? absl::StrCat(Sv(request->name), "/", Sv(alternative.name))
            : request->name;
  }
  return absl::OkStatus();
}

absl::Status DecodeConstraint(const JsonValue& v, const PathSegment& at,
                              DraConstraint* constraint) {
  return DecodeFields(v, at, [&](std::string_view key, const JsonValue& c) {
    const PathSegment here = at.Field(key);
    if (key == "requests") {
      return DecodeStringList(c, here, &constraint->requests);
    }
    if (key == "matchAttribute") {
      return DecodeString(c, here, &constraint->match_attribute);
    }
    if (key == "distinctAttribute") {
      return DecodeString(c, here, &constraint->distinct_attribute);
    }
    return absl::OkStatus();
  });
}

// spec.devices (DeviceClaim): requests and constraints; config is the
// driver's business.
absl::Status DecodeDeviceClaim(const JsonValue& v, const PathSegment& at,
                               DraClaimSpec* spec) {
  return DecodeFields(v, at, [&](std::string_view key, const JsonValue& c) {
    const PathSegment here = at.Field(key);
    if (key == "requests") {
      return DecodeList(c, here, &spec->requests, DecodeRequest);
    }
    if (key == "constraints") {
      return DecodeList(c, here, &spec->constraints, DecodeConstraint);
    }
    return absl::OkStatus();
  });
}

// spec.devices of a ResourceClaim, or spec.spec.devices of a template: `v`
// is the claim's spec.
absl::Status DecodeDraClaimSpec(const JsonValue& v, const PathSegment& at,
                                DraClaimSpec* spec) {
  return DecodeMember(v, at, "devices",
                      [&](const JsonValue& c, const PathSegment& p) {
                        return DecodeDeviceClaim(c, p, spec);
                      });
}

absl::Status DecodeResult(const JsonValue& v, const PathSegment& at,
                          DraAllocatedDevice* device) {
  return DecodeFields(v, at, [&](std::string_view key, const JsonValue& c) {
    const PathSegment here = at.Field(key);
    if (key == "request") return DecodeString(c, here, &device->request);
    if (key == "driver") return DecodeString(c, here, &device->driver);
    if (key == "pool") return DecodeString(c, here, &device->pool);
    if (key == "device") return DecodeString(c, here, &device->device);
    if (key == "adminAccess") {
      return DecodeBool(c, here, &device->admin_access);
    }
    return absl::OkStatus();
  });
}

// The node a term names by `metadata.name In [node]`, or "".
std::string_view TermNode(const NodeSelectorTerm& term) {
  for (const NodeSelectorRequirement& field : term.match_fields) {
    if (field.key == "metadata.name" && field.op == "In" &&
        field.values.size() == 1) {
      return field.values[0];
    }
  }
  return {};
}

// The node every term of the allocation's nodeSelector names, as
// kube-scheduler writes it for node-local devices; "" when the terms name
// none, or different ones (devices reachable from several nodes).
std::string AllocatedNode(const std::vector<NodeSelectorTerm>& terms) {
  if (terms.empty()) return {};
  const std::string_view node = TermNode(terms[0]);
  for (const NodeSelectorTerm& term : terms) {
    if (TermNode(term) != node) return {};
  }
  return std::string(node);
}

absl::Status DecodeNodeSelector(const JsonValue& v, const PathSegment& at,
                                ResourceClaim* claim) {
  std::vector<NodeSelectorTerm> terms;
  absl::Status status = DecodeMember(
      v, at, "nodeSelectorTerms",
      [&](const JsonValue& c, const PathSegment& p) {
        return DecodeList(
            c, p, &terms,
            [](const JsonValue& e, const PathSegment& q, NodeSelectorTerm* t) {
              return DecodeSelectorTerm(e, q, t);
            });
      });
  if (!status.ok()) return status;
  claim->allocated_node = AllocatedNode(terms);
  return absl::OkStatus();
}

absl::Status DecodeAllocation(const JsonValue& v, const PathSegment& at,
                              ResourceClaim* claim) {
  if (v.kind() == ValueKind::kNull) return absl::OkStatus();
  claim->allocated = true;
  return DecodeFields(v, at, [&](std::string_view key, const JsonValue& c) {
    const PathSegment here = at.Field(key);
    if (key == "nodeSelector") return DecodeNodeSelector(c, here, claim);
    if (key != "devices") return absl::OkStatus();
    return DecodeMember(
        c, here, "results", [&](const JsonValue& r, const PathSegment& p) {
          return DecodeList(r, p, &claim->allocation, DecodeResult);
        });
  });
}

absl::Status DecodeConsumerUid(const JsonValue& v, const PathSegment& at,
                               std::string* uid) {
  return DecodeMember(v, at, "uid",
                      [&](const JsonValue& c, const PathSegment& p) {
                        return DecodeString(c, p, uid);
                      });
}

absl::Status DecodeClaimStatus(const JsonValue& v, const PathSegment& at,
                               ResourceClaim* claim) {
  return DecodeFields(v, at, [&](std::string_view key, const JsonValue& c) {
    const PathSegment here = at.Field(key);
    if (key == "allocation") return DecodeAllocation(c, here, claim);
    if (key == "reservedFor") {
      return DecodeList(c, here, &claim->reserved_for_uids, DecodeConsumerUid);
    }
    return absl::OkStatus();
  });
}

absl::Status DecodeClaimField(std::string_view key, const JsonValue& c,
                              const PathSegment& here, ResourceClaim* claim) {
  if (key == "metadata") return DecodeObjectMeta(c, here, &claim->meta);
  if (key == "spec") return DecodeDraClaimSpec(c, here, &claim->spec);
  if (key == "status") return DecodeClaimStatus(c, here, claim);
  return absl::OkStatus();
}

// spec (ResourceClaimTemplateSpec): metadata for the claims made, and spec.
absl::Status DecodeTemplateField(std::string_view key, const JsonValue& c,
                                 const PathSegment& here,
                                 ResourceClaimTemplate* claim_template) {
  if (key == "metadata") {
    return DecodeObjectMeta(c, here, &claim_template->meta);
  }
  if (key != "spec") return absl::OkStatus();
  return DecodeMember(c, here, "spec",
                      [&](const JsonValue& s, const PathSegment& p) {
                        return DecodeDraClaimSpec(s, p, &claim_template->spec);
                      });
}

}  // namespace
}  // namespace codec_internal

absl::StatusOr<ResourceClaim> DecodeResourceClaim(simdjson::dom::element value,
                                                  std::string_view path) {
  return codec_internal::DecodeDraObject<ResourceClaim>(
      value, path, codec_internal::DecodeClaimField);
}

absl::StatusOr<ResourceClaimTemplate> DecodeResourceClaimTemplate(
    simdjson::dom::element value, std::string_view path) {
  return codec_internal::DecodeDraObject<ResourceClaimTemplate>(
      value, path, codec_internal::DecodeTemplateField);
}

}  // namespace gpusched
