// Kueue's Configuration as a policy document (kueue_configuration.h).
// Field meanings and defaults follow Kueue v0.19.2's apis/config
// (configuration_types.go, defaults.go) and pkg/config/validation.go;
// where v0.17.0 differs the code says so.

#include "policies/kueue_configuration.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "policies/object_decoders.h"
#include "policies/value_parsers.h"
#include "policies/yaml_reader.h"
#include "scheduler/base/strings.h"

namespace gpusched::policy_internal {
namespace {

constexpr std::string_view kV1beta1 = "config.kueue.x-k8s.io/v1beta1";

// Kueue's defaults: v1beta2 (v0.19.2) times out after 30 minutes, v1beta1
// after 5; both back off from 60 s to at most 3600 s.
constexpr int64_t kV1beta2TimeoutMs = 30 * 60'000;
constexpr int64_t kV1beta1TimeoutMs = 5 * 60'000;
constexpr int64_t kBackoffBaseSeconds = 60;
constexpr int64_t kBackoffMaxSeconds = 3600;
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

// Top-level fields that set up Kueue's manager process, or features whose
// objects a gpusched policy cannot hold (MultiKueue, Workload retention):
// accepted and dropped, so that Kueue's own file loads as it is.
constexpr std::string_view kManagerFields[] = {
    "namespace",
    "health",
    "metrics",
    "webhook",
    "leaderElection",
    "controller",
    "clientConnection",
    "integrations",
    "managedJobsNamespaceSelector",
    "internalCertManagement",
    "queueVisibility",
    "visibilityServer",
    "pprofBindAddress",
    "tls",
    "multiKueue",
    "objectRetentionPolicies",
    "featureGates",
};

// A duration, when present and well formed (else reported); `out` is
// left as it was otherwise.
bool ReadDurationInto(DocContext& doc, const Value& value, int64_t* out) {
  std::optional<int64_t> ms = ReadParsed(doc, value, ParseDurationMs);
  if (ms) *out = *ms;
  return ms.has_value();
}

// waitForPodsReady on with Kueue's defaults: recoveryTimeout defaults to
// the timeout.
void WaitForPodsReadyDefaults(int64_t timeout_ms, SchedulerConfig* config) {
  config->gang_admission_timeout_ms = timeout_ms;
  config->stale_gang_grace_ms = timeout_ms;
  config->gang_backoff_base_ms = kBackoffBaseSeconds * 1000;
  config->gang_backoff_max_ms = kBackoffMaxSeconds * 1000;
  config->gang_backoff_limit_count.reset();
  config->requeuing_timestamp = RequeuingTimestamp::kEviction;
}

// requeuingStrategy: {timestamp, backoffLimitCount, backoffBaseSeconds,
// backoffMaxSeconds}. Kueue accepts a maximum below the base: every delay
// is then the maximum, as GangBackoff has it too.
void DecodeRequeuingStrategy(DocContext& doc, const Value& value,
                             SchedulerConfig* config) {
  MapReader reader(doc, value);
  static constexpr std::string_view kTimestamps[] = {"Creation", "Eviction"};
  if (std::optional<int> timestamp =
          ReadEnum(doc, reader.Get("timestamp"), kTimestamps)) {
    config->requeuing_timestamp = *timestamp == 0
                                      ? RequeuingTimestamp::kCreation
                                      : RequeuingTimestamp::kEviction;
  }
  if (std::optional<int64_t> limit =
          ReadInt(doc, reader.Get("backoffLimitCount"), 0, kInt32Max)) {
    config->gang_backoff_limit_count = static_cast<int32_t>(*limit);
  }
  if (std::optional<int64_t> base =
          ReadInt(doc, reader.Get("backoffBaseSeconds"), 0, kInt32Max)) {
    config->gang_backoff_base_ms = *base * 1000;
  }
  if (std::optional<int64_t> max =
          ReadInt(doc, reader.Get("backoffMaxSeconds"), 0, kInt32Max)) {
    config->gang_backoff_max_ms = *max * 1000;
  }
  reader.Finish();
}

// blockAdmission: v1beta1 defaults it to `enable`, v1beta2 to false.
void DecodeBlockAdmission(DocContext& doc, const Value& block,
                          bool v1beta1_enabled, SchedulerConfig* config) {
  config->gang_block_admission = ReadBool(doc, block).value_or(v1beta1_enabled);
}

// recoveryTimeout: defaults to the timeout; Kueue's "0s" disables the
// check: a running gang short of members is never evicted for it.
void DecodeRecoveryTimeout(DocContext& doc, const Value& value,
                           SchedulerConfig* config) {
  int64_t ms = config->gang_admission_timeout_ms;
  if (!value.present() || !ReadDurationInto(doc, value, &ms)) return;
  config->stale_gang_grace_ms =
      ms == 0 ? SchedulerConfig::kNeverEvictShortGang : ms;
}

// waitForPodsReady: v1beta1 has `enable` (default false); in v1beta2 the
// section's presence turns it on, and (v0.19.2) so does its absence, with
// the defaults. Its timeout is gpusched's gang timeout, its backoff the
// gang backoff, its recoveryTimeout the grace of a gang short of members.
void DecodeWaitForPodsReady(DocContext& doc, const Value& value, bool v1beta1,
                            DecodedKueueConfiguration* out) {
  MapReader reader(doc, value);
  const Value enable = v1beta1 ? reader.Get("enable") : Value{};
  const bool on = !v1beta1 || ReadBool(doc, enable).value_or(false);
  const Value timeout = reader.Get("timeout");
  int64_t timeout_ms = v1beta1 ? kV1beta1TimeoutMs : kV1beta2TimeoutMs;
  int64_t read_ms = 0;
  if (timeout.present() && ReadDurationInto(doc, timeout, &read_ms)) {
    // v1beta2 defaults 0 to 30m (v0.19.2; v0.17.0 refused it).
    if (read_ms > 0) timeout_ms = read_ms;
    if (read_ms == 0 && v1beta1) {
      doc.Error(timeout.line, timeout.path,
                InvalidValue(timeout.node.Scalar(), "must be greater than 0"));
    }
  }
  WaitForPodsReadyDefaults(timeout_ms, &out->mapped);
  DecodeRecoveryTimeout(doc, reader.Get("recoveryTimeout"), &out->mapped);
  DecodeRequeuingStrategy(doc, reader.Get("requeuingStrategy"), &out->mapped);
  DecodeBlockAdmission(doc, reader.Get("blockAdmission"), v1beta1 && on,
                       &out->mapped);
  reader.Finish();
  if (on) out->wait_for_pods_ready_line = value.line;
}

// resources: only deviceClassMappings has a gpusched counterpart.
void DecodeKueueResources(DocContext& doc, const Value& value,
                          DecodedKueueConfiguration* out) {
  MapReader reader(doc, value);
  reader.Unsupported("excludeResourcePrefixes",
                     "not implemented by gpusched: every resource counts");
  reader.Unsupported("transformations", "not implemented by gpusched");
  reader.Unsupported("quotaCheckStrategy", "not implemented by gpusched");
  const Value mappings = reader.Get("deviceClassMappings");
  reader.Finish();
  std::set<std::string, std::less<>> classes;
  out->mapped.device_class_mappings =
      DecodeDeviceClassMappings(doc, mappings, classes);
  if (mappings.present()) out->resources_line = value.line;
}

// resourceWeights: resource name -> a non-negative number.
std::map<std::string, double> DecodeResourceWeights(DocContext& doc,
                                                    const Value& value) {
  std::map<std::string, double> weights;
  for (const auto& [resource, text] :
       ReadStringMap(doc, value).value_or(StringMap{})) {
    double weight = 0;
    const std::string path = ChildPath(value.path, resource);
    if (!absl::SimpleAtod(text, &weight) || !std::isfinite(weight)) {
      doc.Error(value.line, path, InvalidValue(text, "must be a number"));
    } else if (weight < 0) {
      doc.Error(value.line, path,
                InvalidValue(text, "must be greater than or equal to 0"));
    } else {
      weights[resource] = weight;
    }
  }
  return weights;
}

// admissionFairSharing: {usageHalfLifeTime, usageSamplingInterval,
// resourceWeights}. Kueue's defaults.go turns a sampling interval of 0
// into 5m before validation.go asks for more than 0; a half-life of 0
// forgets usage at every sample.
void DecodeAdmissionFairSharing(DocContext& doc, const Value& value,
                                DecodedKueueConfiguration* out) {
  MapReader reader(doc, value);
  AdmissionFairSharingConfig afs;
  ReadDurationInto(doc, reader.Get("usageHalfLifeTime"),
                   &afs.usage_half_life_ms);
  int64_t interval_ms = 0;
  if (ReadDurationInto(doc, reader.Get("usageSamplingInterval"),
                       &interval_ms) &&
      interval_ms > 0) {
    afs.usage_sampling_interval_ms = interval_ms;
  }
  afs.resource_weights =
      DecodeResourceWeights(doc, reader.Get("resourceWeights"));
  reader.Finish();
  out->mapped.admission_fair_sharing = std::move(afs);
  out->admission_fair_sharing_line = value.line;
}

void Report(Diagnostics* diagnostics, const Origin& origin, int line,
            std::string_view path, std::string_view text) {
  diagnostics->Add(origin.file, line, origin.subject, path, text);
}

// A section the Configuration sets at `line` that the SchedulerConfig also
// sets at `config_line` (0: either leaves it out).
void CheckConflict(const DecodedKueueConfiguration& kueue, int line,
                   std::string_view path, const DecodedSchedulerConfig& config,
                   int config_line, std::string_view config_path,
                   Diagnostics* diagnostics) {
  if (line == 0 || config_line == 0) return;
  Report(
      diagnostics, kueue.origin, line, path,
      Forbidden(absl::StrCat("also set by ", config.origin.subject, " (",
                             Sv(config_path), " at ", config.origin.file.name,
                             ":", config_line, "); set it in one of the two")));
}

}  // namespace

void DecodeKueueConfiguration(DocContext& doc, MapReader& top, Origin origin,
                              PolicyDraft* draft) {
  const bool v1beta1 = origin.api_version == kV1beta1;
  DecodedKueueConfiguration decoded{.origin = std::move(origin)};
  const Value wait = top.Get("waitForPodsReady");
  if (wait.present()) {
    DecodeWaitForPodsReady(doc, wait, v1beta1, &decoded);
  } else if (!v1beta1) {
    WaitForPodsReadyDefaults(kV1beta2TimeoutMs, &decoded.mapped);
    decoded.wait_for_pods_ready_by_default = true;
  }
  const Value fair = top.Get("fairSharing");
  if (fair.present()) {
    DecodeFairSharingConfig(doc, fair, !v1beta1, &decoded.mapped);
    decoded.fair_sharing_line = fair.line;
  }
  const Value resources = top.Get("resources");
  if (resources.present()) DecodeKueueResources(doc, resources, &decoded);
  const Value admission_fair_sharing = top.Get("admissionFairSharing");
  if (admission_fair_sharing.present()) {
    DecodeAdmissionFairSharing(doc, admission_fair_sharing, &decoded);
  }
  top.UnsupportedUnless("manageJobsWithoutQueueName", "false",
                        "gpusched queues only pods that name a LocalQueue");
  for (std::string_view field : kManagerFields) top.Ignore(field);
  draft->kueue_configurations.push_back(std::move(decoded));
}

void CheckKueueConfiguration(const PolicyDraft& draft,
                             Diagnostics* diagnostics) {
  const auto& configurations = draft.kueue_configurations;
  for (size_t i = 1; i < configurations.size(); ++i) {
    const Origin& first = configurations[0].origin;
    Report(diagnostics, configurations[i].origin, configurations[i].origin.line,
           "",
           Forbidden(absl::StrCat("at most one Configuration per policy; ",
                                  first.subject, " is at ", first.file.name,
                                  ":", first.line)));
  }
  if (configurations.empty() || draft.configs.empty()) return;
  const DecodedKueueConfiguration& kueue = configurations[0];
  const DecodedSchedulerConfig& config = draft.configs[0];
  CheckConflict(kueue, kueue.wait_for_pods_ready_line, "waitForPodsReady",
                config, config.gang_line, "spec.gang", diagnostics);
  CheckConflict(kueue, kueue.fair_sharing_line, "fairSharing", config,
                config.fair_sharing_line, "spec.fairSharing", diagnostics);
  CheckConflict(kueue, kueue.resources_line, "resources", config,
                config.resources_line, "spec.resources", diagnostics);
}

void ApplyKueueConfiguration(const PolicyDraft& draft,
                             SchedulerConfig* config) {
  if (draft.kueue_configurations.empty()) return;
  const DecodedKueueConfiguration& kueue = draft.kueue_configurations[0];
  const SchedulerConfig& mapped = kueue.mapped;
  // Kueue's defaults give way to a SchedulerConfig's own gang section.
  const bool gang_set = !draft.configs.empty() && draft.configs[0].gang_line;
  if (kueue.wait_for_pods_ready_line != 0 ||
      (kueue.wait_for_pods_ready_by_default && !gang_set)) {
    config->gang_admission_timeout_ms = mapped.gang_admission_timeout_ms;
    config->stale_gang_grace_ms = mapped.stale_gang_grace_ms;
    config->gang_backoff_base_ms = mapped.gang_backoff_base_ms;
    config->gang_backoff_max_ms = mapped.gang_backoff_max_ms;
    config->gang_backoff_limit_count = mapped.gang_backoff_limit_count;
    config->requeuing_timestamp = mapped.requeuing_timestamp;
    config->gang_block_admission = mapped.gang_block_admission;
  }
  if (kueue.fair_sharing_line != 0) {
    config->fair_sharing = mapped.fair_sharing;
    config->preemption_strategies = mapped.preemption_strategies;
  }
  if (kueue.resources_line != 0) {
    config->device_class_mappings = mapped.device_class_mappings;
  }
  if (kueue.admission_fair_sharing_line != 0) {
    config->admission_fair_sharing = mapped.admission_fair_sharing;
  }
}

}  // namespace gpusched::policy_internal
