// ResourceSlice, DeviceClass and DeviceTaintRule JSON (dra_json.h), and the
// parts every DRA decoder shares; claims are in dra_claim_json.cc.

#include "api/codec/dra_json.h"

#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/codec/dra_json_internal.h"
#include "scheduler/quantity.h"

namespace gpusched {
namespace codec_internal {
namespace {

// A name of a slice's attribute or capacity map, qualified with the slice's
// driver; counter names are kept as written (`domain` empty).
std::string QualifiedName(std::string_view name, std::string_view domain) {
  if (domain.empty()) return std::string(name);
  return QualifyDraName(name, domain);
}

// {"value": <quantity>} (DeviceCapacity, Counter) in milli-units; the value
// is required (a capacity of unknown size is none the scheduler can count
// with), and ParseQuantity refuses negative ones.
absl::Status DecodeValueQuantity(const JsonValue& v, const PathSegment& at,
                                 int64_t* milli) {
  if (absl::Status s = ExpectObject(v, at); !s.ok()) return s;
  const PathSegment here = at.Field("value");
  std::optional<JsonValue> value = Member(v, "value");
  if (!value.has_value()) return FieldError(0, here, "missing");
  NumberBuffer buffer;
  std::string_view text;
  if (!value->GetQuantity(&buffer, &text)) {
    return TypeError(*value, here, "quantity (string or number)");
  }
  absl::StatusOr<int64_t> parsed = ParseQuantity(text, 1000);
  if (!parsed.ok()) {
    return FieldError(0, here, QuantityErrorMessage(text, parsed.status()));
  }
  *milli = *parsed;
  return absl::OkStatus();
}

// map[name]{"value": quantity}: capacity (qualified with `domain`) and
// counters (`domain` empty). A null entry is absent.
absl::Status DecodeQuantityMap(const JsonValue& v, const PathSegment& at,
                               std::string_view domain, DraQuantities* out) {
  return DecodeFields(v, at, [&](std::string_view name, const JsonValue& c) {
    if (c.kind() == ValueKind::kNull) return absl::OkStatus();
    int64_t milli = 0;
    if (absl::Status s = DecodeValueQuantity(c, at.Key(name), &milli);
        !s.ok()) {
      return s;
    }
    out->insert_or_assign(QualifiedName(name, domain), milli);
    return absl::OkStatus();
  });
}

// One member of a DeviceAttribute; `*kinds` counts the scalar ones seen.
absl::Status DecodeAttributeValue(std::string_view key, const JsonValue& v,
                                  const PathSegment& at, DraAttribute* out,
                                  int* kinds) {
  using Kind = DraAttribute::Kind;
  if (v.kind() == ValueKind::kNull) return absl::OkStatus();
  std::string_view text;
  if (key == "string" || key == "version") {
    ++*kinds;
    out->kind = key == "string" ? Kind::kString : Kind::kVersion;
    if (!v.GetString(&text)) return TypeError(v, at, "string");
    out->text.assign(text);
  } else if (key == "int") {
    ++*kinds;
    out->kind = Kind::kInt;
    if (!v.GetInt64(&out->number)) return TypeError(v, at, "integer");
  } else if (key == "bool") {
    ++*kinds;
    out->kind = Kind::kBool;
    if (!v.GetBool(&out->flag)) return TypeError(v, at, "boolean");
  }
  // ints, strings, bools, versions: list values are not read.
  return absl::OkStatus();
}

// A DeviceAttribute: one scalar kind, or none (a list, skipped: nullopt).
absl::Status DecodeAttribute(const JsonValue& v, const PathSegment& at,
                             std::optional<DraAttribute>* out) {
  DraAttribute attribute;
  int kinds = 0;
  absl::Status status =
      DecodeFields(v, at, [&](std::string_view key, const JsonValue& child) {
        return DecodeAttributeValue(key, child, at.Field(key), &attribute,
                                    &kinds);
      });
  if (!status.ok()) return status;
  if (kinds > 1) {
    return FieldError(0, at,
                      "more than one of string, int, bool and version set");
  }
  if (kinds == 1) *out = std::move(attribute);
  return absl::OkStatus();
}

absl::Status DecodeAttributes(const JsonValue& v, const PathSegment& at,
                              std::string_view driver, DraAttributes* out) {
  return DecodeFields(v, at, [&](std::string_view name, const JsonValue& c) {
    std::optional<DraAttribute> attribute;
    if (absl::Status s = DecodeAttribute(c, at.Key(name), &attribute);
        !s.ok()) {
      return s;
    }
    if (attribute.has_value()) {
      out->insert_or_assign(QualifiedName(name, driver), *std::move(attribute));
    }
    return absl::OkStatus();
  });
}

// A named set of counters: a slice's sharedCounters[] ({name, counters})
// or a device's consumesCounters[] ({counterSet, counters}).
absl::Status DecodeNamedCounters(const JsonValue& v, const PathSegment& at,
                                 std::string_view name_key, std::string* name,
                                 DraQuantities* counters) {
  return DecodeFields(v, at, [&](std::string_view key, const JsonValue& c) {
    const PathSegment here = at.Field(key);
    if (key == name_key) return DecodeString(c, here, name);
    if (key == "counters") {
      return DecodeQuantityMap(c, here, /*domain=*/"", counters);
    }
    return absl::OkStatus();
  });
}

absl::Status DecodeDeviceField(std::string_view key, const JsonValue& c,
                               const PathSegment& here, std::string_view driver,
                               DraDevice* device) {
  if (key == "name") return DecodeString(c, here, &device->name);
  if (key == "attributes") {
    return DecodeAttributes(c, here, driver, &device->attributes);
  }
  if (key == "capacity") {
    return DecodeQuantityMap(c, here, driver, &device->capacity);
  }
  if (key == "consumesCounters") {
    return DecodeList(
        c, here, &device->consumes_counters,
        [](const JsonValue& e, const PathSegment& p, DraCounterConsumption* x) {
          return DecodeNamedCounters(e, p, "counterSet", &x->counter_set,
                                     &x->counters);
        });
  }
  if (key == "taints") {
    return DecodeList(c, here, &device->taints,
                      [](const JsonValue& e, const PathSegment& p,
                         DeviceTaint* t) { return DecodeTaint(e, p, t); });
  }
  return absl::OkStatus();
}

// A device is known by its name alone (allocations name it): one without a
// name is rejected.
absl::Status DecodeDevice(const JsonValue& v, const PathSegment& at,
                          std::string_view driver, DraDevice* device) {
  absl::Status status =
      DecodeFields(v, at, [&](std::string_view key, const JsonValue& c) {
        return DecodeDeviceField(key, c, at.Field(key), driver, device);
      });
  if (!status.ok()) return status;
  if (device->name.empty()) return FieldError(0, at.Field("name"), "missing");
  return absl::OkStatus();
}

// pool.resourceSliceCount: a pool is complete when this many slices are
// seen, so fewer than one would call an empty pool complete.
absl::Status DecodeSliceCount(const JsonValue& v, const PathSegment& at,
                              int64_t* count) {
  int64_t value = 1;
  if (absl::Status s = DecodeInt64(v, at, &value); !s.ok()) return s;
  if (value < 1) {
    return FieldError(0, at, absl::StrCat("must be at least 1, got ", value));
  }
  *count = value;
  return absl::OkStatus();
}

absl::Status DecodePool(const JsonValue& v, const PathSegment& at,
                        ResourceSlice* slice) {
  return DecodeFields(v, at, [&](std::string_view key, const JsonValue& c) {
    const PathSegment here = at.Field(key);
    if (key == "name") return DecodeString(c, here, &slice->pool);
    if (key == "generation") {
      return DecodeInt64(c, here, &slice->pool_generation);
    }
    if (key == "resourceSliceCount") {
      return DecodeSliceCount(c, here, &slice->pool_slice_count);
    }
    return absl::OkStatus();
  });
}

absl::Status DecodeSliceSpecField(std::string_view key, const JsonValue& c,
                                  const PathSegment& here,
                                  ResourceSlice* slice) {
  if (key == "pool") return DecodePool(c, here, slice);
  if (key == "nodeName") return DecodeString(c, here, &slice->node_name);
  if (key == "sharedCounters") {
    return DecodeList(
        c, here, &slice->shared_counters,
        [](const JsonValue& e, const PathSegment& p, DraCounterSet* x) {
          return DecodeNamedCounters(e, p, "name", &x->name, &x->counters);
        });
  }
  if (key == "devices") {
    return DecodeList(
        c, here, &slice->devices,
        [&](const JsonValue& e, const PathSegment& p, DraDevice* d) {
          return DecodeDevice(e, p, slice->driver, d);
        });
  }
  return absl::OkStatus();
}

// spec.driver is read first, and required: device attribute and capacity
// names are qualified with it, wherever it stands in the object.
absl::Status DecodeSliceSpec(const JsonValue& v, const PathSegment& at,
                             ResourceSlice* slice) {
  if (v.kind() == ValueKind::kNull) return absl::OkStatus();
  if (absl::Status s = ExpectObject(v, at); !s.ok()) return s;
  std::string_view driver;
  if (absl::Status s = RequiredString(v, at, "driver", &driver); !s.ok()) {
    return s;
  }
  if (driver.empty()) return FieldError(0, at.Field("driver"), "missing");
  slice->driver.assign(driver);
  return v.ForEachField([&](std::string_view key, const JsonValue& c) {
    return DecodeSliceSpecField(key, c, at.Field(key), slice);
  });
}

absl::Status DecodeSliceField(std::string_view key, const JsonValue& c,
                              const PathSegment& here, ResourceSlice* slice) {
  if (key == "metadata") return DecodeObjectMeta(c, here, &slice->meta);
  if (key == "spec") return DecodeSliceSpec(c, here, slice);
  return absl::OkStatus();
}

absl::Status DecodeClassField(std::string_view key, const JsonValue& c,
                              const PathSegment& here, DeviceClass* cls) {
  if (key == "metadata") return DecodeObjectMeta(c, here, &cls->meta);
  if (key != "spec") return absl::OkStatus();
  return DecodeFields(c, here, [&](std::string_view k, const JsonValue& s) {
    const PathSegment at = here.Field(k);
    if (k == "selectors") return DecodeDraSelectors(s, at, &cls->selectors);
    if (k == "extendedResourceName") {
      return DecodeString(s, at, &cls->extended_resource_name);
    }
    return absl::OkStatus();
  });
}

// A string member kept as set or not (null is not set).
absl::Status DecodeOptionalString(const JsonValue& v, const PathSegment& at,
                                  std::optional<std::string>* out) {
  if (v.kind() == ValueKind::kNull) return absl::OkStatus();
  return DecodeString(v, at, &out->emplace());
}

absl::Status DecodeTaintSelector(const JsonValue& v, const PathSegment& at,
                                 DeviceTaintRule* rule) {
  return DecodeFields(v, at, [&](std::string_view key, const JsonValue& c) {
    const PathSegment here = at.Field(key);
    if (key == "driver") return DecodeOptionalString(c, here, &rule->driver);
    if (key == "pool") return DecodeOptionalString(c, here, &rule->pool);
    if (key == "device") return DecodeOptionalString(c, here, &rule->device);
    return absl::OkStatus();
  });
}

absl::Status DecodeTaintRuleField(std::string_view key, const JsonValue& c,
                                  const PathSegment& here,
                                  DeviceTaintRule* rule) {
  if (key == "metadata") return DecodeObjectMeta(c, here, &rule->meta);
  if (key != "spec") return absl::OkStatus();
  return DecodeFields(c, here, [&](std::string_view k, const JsonValue& s) {
    const PathSegment at = here.Field(k);
    if (k == "deviceSelector") return DecodeTaintSelector(s, at, rule);
    if (k == "taint") return DecodeTaint(s, at, &rule->taint);
    return absl::OkStatus();
  });
}

absl::Status DecodeSelector(const JsonValue& v, const PathSegment& at,
                            std::string* expression) {
  if (absl::Status s = ExpectObject(v, at); !s.ok()) return s;
  absl::StatusOr<JsonValue> cel = RequiredObject(v, at, "cel");
  if (!cel.ok()) return cel.status();
  std::string_view text;
  absl::Status status =
      RequiredString(*cel, at.Field("cel"), "expression", &text);
  if (!status.ok()) return status;
  expression->assign(text);
  return absl::OkStatus();
}

}  // namespace

absl::Status DecodeInt64(const JsonValue& v, const PathSegment& at,
                         int64_t* out) {
  if (v.kind() == ValueKind::kNull || v.GetInt64(out)) {
    return absl::OkStatus();
  }
  return TypeError(v, at, "integer");
}

absl::Status DecodeDraSelectors(const JsonValue& v, const PathSegment& at,
                                std::vector<std::string>* expressions) {
  return DecodeList(v, at, expressions, DecodeSelector);
}

}  // namespace codec_internal

using codec_internal::DecodeDraObject;
using codec_internal::DraFromJson;

absl::StatusOr<ResourceSlice> DecodeResourceSlice(simdjson::dom::element value,
                                                  std::string_view path) {
  return DecodeDraObject<ResourceSlice>(value, path,
                                        codec_internal::DecodeSliceField);
}

absl::StatusOr<DeviceClass> DecodeDeviceClass(simdjson::dom::element value,
                                              std::string_view path) {
  return DecodeDraObject<DeviceClass>(value, path,
                                      codec_internal::DecodeClassField);
}

absl::StatusOr<DeviceTaintRule> DecodeDeviceTaintRule(
    simdjson::dom::element value, std::string_view path) {
  return DecodeDraObject<DeviceTaintRule>(value, path,
                                          codec_internal::DecodeTaintRuleField);
}

absl::StatusOr<ResourceSlice> ResourceSliceFromJson(std::string_view json) {
  return DraFromJson<ResourceSlice>(json, "ResourceSlice", DecodeResourceSlice);
}

absl::StatusOr<DeviceClass> DeviceClassFromJson(std::string_view json) {
  return DraFromJson<DeviceClass>(json, "DeviceClass", DecodeDeviceClass);
}

absl::StatusOr<ResourceClaim> ResourceClaimFromJson(std::string_view json) {
  return DraFromJson<ResourceClaim>(json, "ResourceClaim", DecodeResourceClaim);
}

absl::StatusOr<ResourceClaimTemplate> ResourceClaimTemplateFromJson(
    std::string_view json) {
  return DraFromJson<ResourceClaimTemplate>(json, "ResourceClaimTemplate",
                                            DecodeResourceClaimTemplate);
}

absl::StatusOr<DeviceTaintRule> DeviceTaintRuleFromJson(std::string_view json) {
  return DraFromJson<DeviceTaintRule>(json, "DeviceTaintRule",
                                      DecodeDeviceTaintRule);
}

}  // namespace gpusched
