// Decoders of Kueue's admission check kinds: AdmissionCheck,
// ProvisioningRequestConfig, and a ClusterQueue's admissionChecks and
// admissionChecksStrategy. Kueue v0.19.2's CRDs say what is valid
// (apis/kueue/v1beta2/admissioncheck_types.go,
// provisioningrequestconfig_types.go, clusterqueue_types.go); what its
// controllers would leave inactive for ever (a check no controller marks,
// a parameters reference of the wrong kind) is refused here, so the
// ClusterQueue that names it is inactive (left out) rather than waiting on
// a check nobody answers.

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "policies/object_decoders.h"
#include "policies/value_parsers.h"

namespace gpusched::policy_internal {
namespace {

constexpr std::string_view kKueueGroup = "kueue.x-k8s.io";
constexpr std::string_view kConfigKind = "ProvisioningRequestConfig";
constexpr std::array<std::string_view, 2> kMergePolicies = {
    "IdenticalPodTemplates", "IdenticalWorkloadSchedulingRequirements"};
constexpr size_t kMaxParameters = 100;  // MaxProperties
constexpr size_t kMaxParameterValue = 255;
constexpr size_t kMaxManagedResources = 100;
constexpr size_t kMaxNodeSelectorUpdates = 8;
constexpr size_t kMaxClassDetailKey = 32768;
constexpr size_t kMaxCheckRules = 64;

// Kubernetes' "Too many" of a list or map with more than `max` items.
void CheckMaxItems(DocContext& doc, const Value& value, size_t count,
                   size_t max) {
  if (count <= max) return;
  doc.Error(
      value.line, value.path,
      absl::StrCat("Too many: ", count, ": must have at most ", max, " items"));
}

// A string that must be present and equal `expected` (Kueue's ConfigHelper
// refuses another group or kind: BadParametersRef).
void RequireExactly(DocContext& doc, const Value& value,
                    std::string_view expected) {
  if (!RequirePresent(doc, value)) return;
  std::optional<std::string> text = ReadString(doc, value);
  if (!text || *text == expected) return;
  const std::array<std::string_view, 1> supported = {expected};
  doc.Error(value.line, value.path, UnsupportedValue(*text, supported));
}

// spec.parameters: {apiGroup, kind, name}, naming a ProvisioningRequestConfig.
void DecodeParametersReference(DocContext& doc, const Value& value,
                               Decoded<AdmissionCheck>* check) {
  if (!RequirePresent(doc, value,
                      "the provisioning-request controller reads its "
                      "ProvisioningRequestConfig from it")) {
    return;
  }
  MapReader reader(doc, value);
  RequireExactly(doc, reader.Get("apiGroup"), kKueueGroup);
  RequireExactly(doc, reader.Get("kind"), kConfigKind);
  const Value name = reader.Get("name");
  if (RequirePresent(doc, name)) {
    if (std::optional<std::string> text =
            ReadName(doc, name, DnsSubdomainError)) {
      check->value.provisioning_request_config = *text;
      check->references.push_back(
          {Kind::kProvisioningRequestConfig, *text, name.path, name.line});
    }
  }
  reader.Finish();
}

StringMap DecodeParameters(DocContext& doc, const Value& value) {
  StringMap parameters = ReadStringMap(doc, value).value_or(StringMap{});
  CheckMaxItems(doc, value, parameters.size(), kMaxParameters);
  for (const auto& [key, text] : parameters) {
    if (text.size() > kMaxParameterValue) {
      doc.Error(value.line, ChildPath(value.path, key),
                InvalidValue(text, "must be no more than 255 characters"));
    }
  }
  return parameters;
}

std::vector<std::string> DecodeManagedResources(DocContext& doc,
                                                const Value& value) {
  std::vector<std::string> resources;
  std::set<std::string, std::less<>> seen;
  const std::vector<Value> items = ReadList(doc, value);
  CheckMaxItems(doc, value, items.size(), kMaxManagedResources);
  for (const Value& item : items) {
    std::optional<std::string> name = ReadName(doc, item, QualifiedNameError);
    if (!name) continue;
    if (!seen.insert(*name).second) {
      doc.Error(item.line, item.path,
                DuplicateValue(*name, "a resource is listed once"));
      continue;
    }
    resources.push_back(*std::move(name));
  }
  return resources;
}

// One int32 of retryStrategy: Kueue's default when absent; never negative.
int32_t ReadRetryField(DocContext& doc, MapReader& reader, std::string_view key,
                       int32_t fallback) {
  std::optional<int64_t> value =
      ReadInt(doc, reader.Get(key), 0, std::numeric_limits<int32_t>::max());
  return value ? static_cast<int32_t>(*value) : fallback;
}

ProvisioningRetryStrategy DecodeRetryStrategy(DocContext& doc,
                                              const Value& value) {
  ProvisioningRetryStrategy strategy;
  MapReader reader(doc, value);
  strategy.backoff_limit_count = ReadRetryField(
      doc, reader, "backoffLimitCount", strategy.backoff_limit_count);
  strategy.backoff_base_seconds = ReadRetryField(
      doc, reader, "backoffBaseSeconds", strategy.backoff_base_seconds);
  strategy.backoff_max_seconds = ReadRetryField(
      doc, reader, "backoffMaxSeconds", strategy.backoff_max_seconds);
  reader.Finish();
  return strategy;
}

ProvisioningNodeSelectorUpdate DecodeNodeSelectorUpdate(DocContext& doc,
                                                        const Value& value) {
  ProvisioningNodeSelectorUpdate update;
  MapReader reader(doc, value);
  const Value key = reader.Get("key");
  if (RequirePresent(doc, key)) {
    update.key = ReadName(doc, key, QualifiedNameError).value_or("");
  }
  const Value detail = reader.Get("valueFromProvisioningClassDetail");
  if (RequirePresent(doc, detail)) {
    update.value_from_provisioning_class_detail =
        ReadString(doc, detail).value_or("");
    if (update.value_from_provisioning_class_detail.empty() ||
        update.value_from_provisioning_class_detail.size() >
            kMaxClassDetailKey) {
      doc.Error(detail.line, detail.path,
                InvalidValue(update.value_from_provisioning_class_detail,
                             "must be 1 to 32768 characters"));
    }
  }
  reader.Finish();
  return update;
}

// podSetUpdates: {nodeSelector: [{key, valueFromProvisioningClassDetail}]},
// at most 8, keys unique (a list map by key).
std::vector<ProvisioningNodeSelectorUpdate> DecodePodSetUpdates(
    DocContext& doc, const Value& value) {
  MapReader reader(doc, value);
  const Value selectors = reader.Get("nodeSelector");
  reader.Finish();
  std::vector<ProvisioningNodeSelectorUpdate> updates;
  std::set<std::string, std::less<>> keys;
  const std::vector<Value> items = ReadList(doc, selectors);
  CheckMaxItems(doc, selectors, items.size(), kMaxNodeSelectorUpdates);
  for (const Value& item : items) {
    ProvisioningNodeSelectorUpdate update = DecodeNodeSelectorUpdate(doc, item);
    if (!update.key.empty() && !keys.insert(update.key).second) {
      doc.Error(item.line, ChildPath(item.path, "key"),
                DuplicateValue(update.key, "each key is updated once"));
    }
    updates.push_back(std::move(update));
  }
  return updates;
}

AdmissionCheckRule DecodeCheckRule(DocContext& doc, const Value& value,
                                   std::vector<Reference>* references) {
  AdmissionCheckRule rule;
  MapReader reader(doc, value);
  const Value name = reader.Get("name");
  if (RequirePresent(doc, name)) {
    rule.name = ReadName(doc, name, DnsSubdomainError).value_or("");
    if (!rule.name.empty()) {
      references->push_back(
          {Kind::kAdmissionCheck, rule.name, name.path, name.line});
    }
  }
  const Value on_flavors = reader.Get("onFlavors");
  for (const Value& item : ReadList(doc, on_flavors)) {
    // Not a reference: Kueue keeps a queue active whose onFlavors names a
    // flavor it does not have; the check then never runs for it.
    std::optional<std::string> flavor = ReadName(doc, item, DnsSubdomainError);
    if (flavor) rule.on_flavors.push_back(*std::move(flavor));
  }
  reader.Finish();
  return rule;
}

// Each check once: Kueue's list maps are keyed by name.
void AddRule(DocContext& doc, const Value& item, AdmissionCheckRule rule,
             std::vector<AdmissionCheckRule>* rules) {
  for (const AdmissionCheckRule& earlier : *rules) {
    if (!rule.name.empty() && earlier.name == rule.name) {
      doc.Error(item.line, item.path,
                DuplicateValue(rule.name, "each check is named once"));
      return;
    }
  }
  rules->push_back(std::move(rule));
}

}  // namespace

void DecodeAdmissionCheck(DocContext& doc, MapReader& top, Origin origin,
                          PolicyDraft* draft) {
  MapReader spec(doc, top.Get("spec"));
  Decoded<AdmissionCheck> check{.value = {.name = origin.key},
                                .origin = origin};
  const Value controller = spec.Get("controllerName");
  if (RequirePresent(doc, controller)) {
    std::optional<std::string> name = ReadString(doc, controller);
    if (name && *name != kProvisioningRequestController) {
      const std::array<std::string_view, 1> supported = {
          kProvisioningRequestController};
      doc.Error(controller.line, controller.path,
                absl::StrCat(UnsupportedValue(*name, supported),
                             ": gpusched is the only admission check "
                             "controller once Kueue is gone, and it carries "
                             "out only ProvisioningRequests"));
    }
    check.value.controller_name = name.value_or("");
  }
  DecodeParametersReference(doc, spec.Get("parameters"), &check);
  // v1beta1's retryDelayMinutes is deprecated and read by no controller.
  if (origin.api_version == "kueue.x-k8s.io/v1beta1") {
    spec.Ignore("retryDelayMinutes");
  }
  spec.Finish();
  top.Ignore("status");
  draft->admission_checks.push_back(std::move(check));
}

void DecodeProvisioningRequestConfig(DocContext& doc, MapReader& top,
                                     Origin origin, PolicyDraft* draft) {
  MapReader spec(doc, top.Get("spec"));
  ProvisioningRequestConfig config{.name = origin.key};
  const Value class_name = spec.Get("provisioningClassName");
  if (RequirePresent(doc, class_name)) {
    config.provisioning_class_name =
        ReadName(doc, class_name, DnsSubdomainError).value_or("");
  }
  config.parameters = DecodeParameters(doc, spec.Get("parameters"));
  config.managed_resources =
      DecodeManagedResources(doc, spec.Get("managedResources"));
  config.retry_strategy = DecodeRetryStrategy(doc, spec.Get("retryStrategy"));
  config.node_selector_updates =
      DecodePodSetUpdates(doc, spec.Get("podSetUpdates"));
  if (std::optional<int> policy =
          ReadEnum(doc, spec.Get("podSetMergePolicy"), kMergePolicies)) {
    config.pod_set_merge_policy =
        *policy == 0
            ? PodSetMergePolicy::kIdenticalPodTemplates
            : PodSetMergePolicy::kIdenticalWorkloadSchedulingRequirements;
  }
  spec.Finish();
  top.Ignore("status");
  draft->provisioning_request_configs.push_back(
      {.value = std::move(config), .origin = std::move(origin)});
}

std::vector<AdmissionCheckRule> DecodeClusterQueueChecks(
    DocContext& doc, MapReader& spec, bool v1beta1,
    std::vector<Reference>* references) {
  std::vector<AdmissionCheckRule> rules;
  Value names;
  if (v1beta1) {
    names = spec.Get("admissionChecks");
    for (const Value& item : ReadList(doc, names)) {
      std::optional<std::string> name = ReadName(doc, item, DnsSubdomainError);
      if (!name) continue;
      references->push_back(
          {Kind::kAdmissionCheck, *name, item.path, item.line});
      AddRule(doc, item, {.name = *name}, &rules);
    }
  }
  const Value strategy = spec.Get("admissionChecksStrategy");
  if (names.present() && strategy.present()) {
    doc.Error(strategy.line, strategy.path,
              Forbidden("cannot be used along with spec.admissionChecks"));
    return rules;
  }
  MapReader reader(doc, strategy);
  const Value checks = reader.Get("admissionChecks");
  reader.Finish();
  const std::vector<Value> items = ReadList(doc, checks);
  if (strategy.present() && items.empty()) {
    doc.Error(checks.line, checks.path, RequiredValue("at least one check"));
  }
  CheckMaxItems(doc, checks, items.size(), kMaxCheckRules);
  for (const Value& item : items) {
    AddRule(doc, item, DecodeCheckRule(doc, item, references), &rules);
  }
  std::sort(rules.begin(), rules.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  return rules;
}

}  // namespace gpusched::policy_internal
