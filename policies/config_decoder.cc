// SchedulerConfig (gpusched.io/v1alpha1): every field optional; defaults
// are SchedulerConfig's initialisers in queueing/policy.h.

#include <array>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "policies/object_decoders.h"
#include "policies/value_parsers.h"
#include "scheduler/scoring.h"

namespace gpusched::policy_internal {
namespace {

using Strategies = std::vector<FairPreemptionStrategy>;

// The only strategy lists Kueue's config validation accepts.
const std::array<Strategies, 3>& ValidStrategyLists() {
  using enum FairPreemptionStrategy;
  static const std::array<Strategies, 3> kLists = {{
      {kLessThanOrEqualToFinalShare, kLessThanInitialShare},
      {kLessThanOrEqualToFinalShare},
      {kLessThanInitialShare},
  }};
  return kLists;
}

std::vector<std::string> StrategyNames(const Strategies& strategies) {
  std::vector<std::string> names;
  for (FairPreemptionStrategy strategy : strategies) {
    names.emplace_back(FairPreemptionStrategyName(strategy));
  }
  return names;
}

std::string ListText(const std::vector<std::string>& items) {
  return absl::StrCat("[", absl::StrJoin(items, ", "), "]");
}

}  // namespace

void DecodeFairSharingConfig(DocContext& doc, const Value& value,
                             bool presence_enables, SchedulerConfig* config) {
  MapReader reader(doc, value);
  if (presence_enables) {
    config->fair_sharing = true;
  } else {
    config->fair_sharing =
        ReadBool(doc, reader.Get("enable")).value_or(config->fair_sharing);
  }
  const Value strategies = reader.Get("preemptionStrategies");
  reader.Finish();
  std::optional<std::vector<std::string>> list =
      ReadStringList(doc, strategies);
  if (!list) return;
  // The names are mapped to strategies here, once: a list is valid only
  // whole, so it is matched by its names.
  std::vector<std::string> valid;
  for (const Strategies& candidate : ValidStrategyLists()) {
    const std::vector<std::string> names = StrategyNames(candidate);
    if (*list == names) {
      config->preemption_strategies = candidate;
      return;
    }
    valid.push_back(ListText(names));
  }
  doc.Error(
      strategies.line, strategies.path,
      InvalidValue(ListText(*list), absl::StrCat("must be one of ",
                                                 absl::StrJoin(valid, ", "))));
}

namespace {

// A duration field; `positive` forbids 0. Returns the value read, if any.
std::optional<int64_t> ReadDuration(DocContext& doc, const Value& value,
                                    bool positive, int64_t* out) {
  std::optional<int64_t> ms = ReadParsed(doc, value, ParseDurationMs);
  if (!ms) return std::nullopt;
  if (positive && *ms == 0) {
    doc.Error(value.line, value.path,
              InvalidValue(value.node.Scalar(), "must be greater than 0"));
    return std::nullopt;
  }
  *out = *ms;
  return ms;
}

// backoffMax must not be below backoffBase, whichever of them was written.
void CheckBackoff(DocContext& doc, const Value& base, const Value& max,
                  const SchedulerConfig& config) {
  if (config.gang_backoff_max_ms >= config.gang_backoff_base_ms) return;
  if (max.present()) {
    doc.Error(
        max.line, max.path,
        InvalidValue(
            max.node.Scalar(),
            absl::StrCat("must be greater than or equal to "
                         "gang.backoffBase (",
                         FormatDurationMs(config.gang_backoff_base_ms), ")")));
    return;
  }
  doc.Error(
      base.line, base.path,
      InvalidValue(base.node.Scalar(),
                   absl::StrCat("must be less than or equal to "
                                "gang.backoffMax (",
                                FormatDurationMs(config.gang_backoff_max_ms),
                                ", the default)")));
}

void DecodeGang(DocContext& doc, const Value& value, SchedulerConfig* config) {
  MapReader reader(doc, value);
  ReadDuration(doc, reader.Get("admissionTimeout"), true,
               &config->gang_admission_timeout_ms);
  const Value base = reader.Get("backoffBase");
  const Value max = reader.Get("backoffMax");
  const bool base_ok =
      !base.present() ||
      ReadDuration(doc, base, true, &config->gang_backoff_base_ms);
  const bool max_ok =
      !max.present() ||
      ReadDuration(doc, max, true, &config->gang_backoff_max_ms);
  if (base_ok && max_ok) CheckBackoff(doc, base, max, *config);
  ReadDuration(doc, reader.Get("staleGangGracePeriod"), false,
               &config->stale_gang_grace_ms);
  reader.Finish();
}

void DecodePreemptionConfig(DocContext& doc, const Value& value,
                            SchedulerConfig* config) {
  MapReader reader(doc, value);
  ReadDuration(doc, reader.Get("minimumRuntime"), false,
               &config->preemption_minimum_runtime_ms);
  reader.Finish();
}

// scoring: {scorer: weight}; as with --scoring, scorers not named get 0.
void DecodeScoring(DocContext& doc, const Value& value,
                   SchedulerConfig* config) {
  if (!value.present()) return;
  MapReader reader(doc, value);
  std::vector<std::pair<std::string, int>> weights;
  std::vector<std::string> names;
  int total = 0;
  bool all_read = true;
  for (const Scorer& scorer : Scorers()) {
    names.push_back(Quoted(scorer.name));
    const Value weight = reader.Get(scorer.name);
    std::optional<int64_t> parsed = ReadInt(doc, weight, 0, 100);
    all_read &= !weight.present() || parsed.has_value();
    weights.emplace_back(scorer.name, static_cast<int>(parsed.value_or(0)));
    total += weights.back().second;
  }
  reader.Finish(absl::StrCat("scorers are ", absl::StrJoin(names, ", ")));
  if (all_read && total == 0 && value.node.IsMap()) {
    doc.Error(value.line, value.path,
              InvalidNonScalar("at least one scorer needs a positive weight"));
  }
  config->scoring = std::move(weights);
}

void DecodeTopologyLevels(DocContext& doc, const Value& value,
                          SchedulerConfig* config) {
  if (!value.present()) return;
  std::vector<std::string> levels;
  std::set<std::string, std::less<>> seen;
  for (const Value& item : ReadList(doc, value)) {
    if (!RequirePresent(doc, item)) continue;
    std::optional<std::string> key = ReadName(doc, item, QualifiedNameError);
    if (!key) continue;
    if (!seen.insert(*key).second) {
      doc.Error(item.line, item.path,
                DuplicateValue(*key, "each level may appear once"));
      continue;
    }
    levels.push_back(*key);
  }
  config->topology_levels = std::move(levels);
}

// One deviceClassMappings entry; false when it is malformed (reported).
bool DecodeDeviceClassMapping(DocContext& doc, const Value& item,
                              std::set<std::string, std::less<>>& classes,
                              DeviceClassMapping& out) {
  MapReader entry(doc, item);
  const Value name = entry.Get("name");
  const Value names = entry.Get("deviceClassNames");
  entry.Finish();
  bool ok = RequirePresent(doc, name) && RequirePresent(doc, names);
  std::optional<std::string> resource = ReadName(doc, name, QualifiedNameError);
  ok &= resource.has_value();
  std::vector<Value> items = ReadList(doc, names);
  if (names.present() && items.empty()) {
    doc.Error(names.line, names.path,
              InvalidNonScalar("must name at least one DeviceClass"));
    ok = false;
  }
  for (const Value& class_item : items) {
    std::optional<std::string> device_class =
        ReadName(doc, class_item, DnsSubdomainError);
    if (!device_class) {
      ok = false;
    } else if (!classes.insert(*device_class).second) {
      doc.Error(
          class_item.line, class_item.path,
          DuplicateValue(*device_class, "a DeviceClass maps to one resource"));
      ok = false;
    } else {
      out.device_classes.push_back(*device_class);
    }
  }
  if (resource) out.resource = *resource;
  return ok;
}

}  // namespace

std::vector<DeviceClassMapping> DecodeDeviceClassMappings(
    DocContext& doc, const Value& value,
    std::set<std::string, std::less<>>& classes) {
  std::vector<DeviceClassMapping> decoded;
  for (const Value& item : ReadList(doc, value)) {
    DeviceClassMapping mapping;
    if (DecodeDeviceClassMapping(doc, item, classes, mapping)) {
      decoded.push_back(std::move(mapping));
    }
  }
  return decoded;
}

namespace {

// deviceClassesOutsideQuota: [names], gpusched's own field: the classes
// an admin leaves out of quota on purpose (never by default: a class no
// mapping names makes its claims inadmissible, as Kueue does).
std::optional<DeviceClassMapping> DecodeOutsideQuota(
    DocContext& doc, const Value& value,
    std::set<std::string, std::less<>>& classes) {
  if (!value.present()) return std::nullopt;
  DeviceClassMapping outside{.outside_quota = true};
  for (const Value& class_item : ReadList(doc, value)) {
    std::optional<std::string> device_class =
        ReadName(doc, class_item, DnsSubdomainError);
    if (!device_class) continue;
    if (!classes.insert(*device_class).second) {
      doc.Error(
          class_item.line, class_item.path,
          DuplicateValue(*device_class, "a DeviceClass maps to one resource"));
      continue;
    }
    outside.device_classes.push_back(*device_class);
  }
  if (outside.device_classes.empty()) return std::nullopt;
  return outside;
}

// resources: {deviceClassMappings: [{name, deviceClassNames}]}, Kueue's
// Configuration fields: what DRA claims' devices count as in quota; and
// deviceClassesOutsideQuota.
void DecodeResources(DocContext& doc, const Value& value,
                     SchedulerConfig* config) {
  if (!value.present()) return;
  MapReader reader(doc, value);
  const Value mappings = reader.Get("deviceClassMappings");
  const Value outside = reader.Get("deviceClassesOutsideQuota");
  reader.Finish();
  std::set<std::string, std::less<>> classes;
  std::vector<DeviceClassMapping> decoded =
      DecodeDeviceClassMappings(doc, mappings, classes);
  if (std::optional<DeviceClassMapping> uncounted =
          DecodeOutsideQuota(doc, outside, classes)) {
    decoded.push_back(*std::move(uncounted));
  }
  config->device_class_mappings = std::move(decoded);
}

}  // namespace

void DecodeSchedulerConfig(DocContext& doc, MapReader& top, Origin origin,
                           PolicyDraft* draft) {
  MapReader spec(doc, top.Get("spec"));
  SchedulerConfig config;
  const Value fair_sharing = spec.Get("fairSharing");
  const Value gang = spec.Get("gang");
  const Value resources = spec.Get("resources");
  DecodeFairSharingConfig(doc, fair_sharing, false, &config);
  DecodeGang(doc, gang, &config);
  ReadDuration(doc, spec.Get("starvationTimeout"), true,
               &config.starvation_timeout_ms);
  DecodePreemptionConfig(doc, spec.Get("preemption"), &config);
  DecodeScoring(doc, spec.Get("scoring"), &config);
  DecodeTopologyLevels(doc, spec.Get("topologyLevels"), &config);
  DecodeResources(doc, resources, &config);
  spec.Finish();
  DecodedSchedulerConfig decoded;
  decoded.value = std::move(config);
  decoded.origin = std::move(origin);
  decoded.gang_line = gang.present() ? gang.line : 0;
  decoded.fair_sharing_line = fair_sharing.present() ? fair_sharing.line : 0;
  decoded.resources_line = resources.present() ? resources.line : 0;
  draft->configs.push_back(std::move(decoded));
}

}  // namespace gpusched::policy_internal
