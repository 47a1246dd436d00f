#include "queueing/admission_checks.h"

#include <algorithm>
#include <array>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace {

constexpr std::array<std::string_view, 4> kStateNames = {"Pending", "Ready",
                                                         "Retry", "Rejected"};

}  // namespace

std::string_view CheckStateName(CheckState state) {
  return kStateNames[static_cast<size_t>(state)];
}

std::optional<CheckState> ParseCheckState(std::string_view text) {
  for (size_t i = 0; i < kStateNames.size(); ++i) {
    if (kStateNames[i] == text) return static_cast<CheckState>(i);
  }
  return std::nullopt;
}

std::vector<std::string> ChecksForFlavors(
    const ClusterQueue& cq, const std::vector<std::string>& flavors) {
  std::vector<std::string> names;
  for (const AdmissionCheckRule& rule : cq.admission_checks) {
    const bool runs =
        rule.on_flavors.empty() ||
        std::any_of(flavors.begin(), flavors.end(), [&](const auto& f) {
          return std::find(rule.on_flavors.begin(), rule.on_flavors.end(), f) !=
                 rule.on_flavors.end();
        });
    if (runs) names.push_back(rule.name);
  }
  return names;  // cq.admission_checks is sorted by name
}

std::vector<WorkloadCheck> StartChecks(const std::vector<WorkloadCheck>& had,
                                       const std::vector<std::string>& names) {
  std::vector<WorkloadCheck> checks;
  for (const std::string& name : names) {
    WorkloadCheck check{.name = name};
    auto it = std::find_if(had.begin(), had.end(),
                           [&](const auto& c) { return c.name == name; });
    if (it != had.end() && it->state != CheckState::kReady) {
      check.retry_count = it->retry_count;
    }
    checks.push_back(std::move(check));
  }
  return checks;
}

bool AllChecksReady(const std::vector<WorkloadCheck>& checks) {
  return std::all_of(checks.begin(), checks.end(), [](const auto& c) {
    return c.state == CheckState::kReady;
  });
}

const ProvisioningRequestConfig* ConfigOfCheck(const Policy& policy,
                                               const std::string& check) {
  for (const AdmissionCheck& ac : policy.admission_checks) {
    if (ac.name != check) continue;
    for (const ProvisioningRequestConfig& config :
         policy.provisioning_request_configs) {
      if (config.name == ac.provisioning_request_config) return &config;
    }
  }
  return nullptr;
}

bool CheckNeedsRequest(const Policy& policy, const std::string& check,
                       const std::vector<std::string>& resources) {
  const ProvisioningRequestConfig* config = ConfigOfCheck(policy, check);
  if (config == nullptr || config->managed_resources.empty()) return true;
  return std::any_of(resources.begin(), resources.end(), [&](const auto& r) {
    return std::find(config->managed_resources.begin(),
                     config->managed_resources.end(),
                     r) != config->managed_resources.end();
  });
}

ProvisioningRetryStrategy RetryStrategyOf(const Policy& policy,
                                          const std::string& check) {
  const ProvisioningRequestConfig* config = ConfigOfCheck(policy, check);
  return config == nullptr ? ProvisioningRetryStrategy{}
                           : config->retry_strategy;
}

bool RetryAllowed(const ProvisioningRetryStrategy& strategy, int retry_count) {
  return retry_count + 1 <= strategy.backoff_limit_count;
}

int64_t CheckRetryBackoffMs(const ProvisioningRetryStrategy& strategy, int n) {
  const int64_t max_ms = int64_t{strategy.backoff_max_seconds} * 1000;
  int64_t wait_ms = int64_t{strategy.backoff_base_seconds} * 1000;
  for (int i = 1; i < n; ++i) {
    if (max_ms > 0 && wait_ms >= max_ms) break;
    if (wait_ms > std::numeric_limits<int64_t>::max() / 2) break;
    wait_ms *= 2;
  }
  return max_ms > 0 ? std::min(wait_ms, max_ms) : wait_ms;
}

std::string ChecksInStateMessage(const std::vector<WorkloadCheck>& checks,
                                 CheckState state) {
  std::vector<std::string> parts;
  for (const WorkloadCheck& c : checks) {
    if (c.state != state) continue;
    parts.push_back(c.message.empty()
                        ? absl::StrCat("\"", c.name, "\"")
                        : absl::StrCat("\"", c.name, "\" (", c.message, ")"));
  }
  return absl::StrCat(parts.size() > 1 ? "AdmissionChecks" : "AdmissionCheck",
                      " in ", Sv(CheckStateName(state)),
                      " state: ", absl::StrJoin(parts, "; "));
}

std::optional<CheckVerdict> CheckVerdictOfRequest(const RequestConditions& c,
                                                  bool admitted) {
  if (c.failed) {
    return CheckVerdict{
        CheckState::kRetry,
        absl::StrCat("Retrying after failure: ", c.failed_message)};
  }
  if (c.capacity_revoked) {
    return CheckVerdict{CheckState::kRejected, c.capacity_revoked_message};
  }
  if (c.booking_expired) {
    if (admitted) return std::nullopt;
    return CheckVerdict{CheckState::kRetry,
                        absl::StrCat("Retrying after booking expired: ",
                                     c.booking_expired_message)};
  }
  if (c.provisioned) {
    return CheckVerdict{CheckState::kReady, c.provisioned_message};
  }
  return CheckVerdict{CheckState::kPending, ""};
}

PodSetUpdate MergedPodSetUpdate(const std::vector<WorkloadCheck>& checks) {
  PodSetUpdate merged;
  for (const WorkloadCheck& c : checks) {
    merged.annotations.insert(c.update.annotations.begin(),
                              c.update.annotations.end());
    merged.node_selector.insert(c.update.node_selector.begin(),
                                c.update.node_selector.end());
  }
  return merged;
}

PodSetUpdate ProvisionedPodSetUpdate(
    const std::string& request, const ProvisioningRequestConfig& config,
    const std::map<std::string, std::string>& class_details) {
  PodSetUpdate update{
      .annotations = {
          {kConsumeProvisioningRequestAnnotation, request},
          {kProvisioningClassNameAnnotation, config.provisioning_class_name}}};
  for (const ProvisioningNodeSelectorUpdate& s : config.node_selector_updates) {
    auto detail = class_details.find(s.value_from_provisioning_class_detail);
    if (detail != class_details.end()) {
      update.node_selector[s.key] = detail->second;
    }
  }
  return update;
}

}  // namespace gpusched
