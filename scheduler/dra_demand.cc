#include "scheduler/dra_demand.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace {

// Parses every expression into `out`; the first one outside the subset
// makes the alternative undecided, naming it.
std::string AddSelectors(const std::vector<std::string>& expressions,
                         std::string_view owner,
                         std::vector<DeviceSelector>& out) {
  for (size_t i = 0; i < expressions.size(); ++i) {
    absl::StatusOr<DeviceSelector> selector =
        DeviceSelector::Parse(expressions[i]);
    if (!selector.ok()) {
      return absl::StrCat(Sv(owner), " selector #", i, " \"", expressions[i],
                          "\" is ", selector.status().message());
    }
    out.push_back(*std::move(selector));
  }
  return "";
}

void AppendKeyPart(std::string_view part, std::string& key) {
  absl::StrAppend(&key, part.size(), ":", Sv(part));
}

DraAlternativeDemand AlternativeDemand(const DraRequestAlternative& alt,
                                       const DraCatalog& catalog,
                                       std::vector<std::string>& missing) {
  DraAlternativeDemand demand{alt.name, alt.device_class, alt.count,
                              {},       alt.tolerations,  ""};
  auto device_class = catalog.classes.find(alt.device_class);
  if (device_class == catalog.classes.end()) {
    missing.push_back(absl::StrCat("DeviceClass ", alt.device_class));
    demand.undecided = "its DeviceClass is not known";
    return demand;
  }
  demand.undecided = AddSelectors(
      device_class->second.selectors,
      absl::StrCat("DeviceClass ", alt.device_class), demand.selectors);
  if (demand.undecided.empty()) {
    demand.undecided = AddSelectors(alt.selectors, "its", demand.selectors);
  }
  demand.own_selectors = !alt.selectors.empty();
  std::string match_key;
  for (const DeviceSelector& selector : demand.selectors) {
    AppendKeyPart(selector.expression(), match_key);
  }
  for (const DeviceToleration& t : demand.tolerations) {
    for (const std::string& part : {t.key, t.op, t.value, t.effect}) {
      AppendKeyPart(part, match_key);
    }
  }
  demand.match_key = DraMemoKey(std::move(match_key));
  if (alt.mode == DraRequestAlternative::Mode::kAll) {
    demand.undecided = "allocationMode All takes every matching device";
  } else if (alt.admin_access) {
    demand.undecided = "admin access does not take devices";
  }
  return demand;
}

void AddClaimSpec(std::string_view owner, const DraClaimSpec& spec,
                  const DraCatalog& catalog, DraDemand& demand) {
  for (const DraDeviceRequest& request : spec.requests) {
    DraRequestDemand out{std::string(owner), request.name, {}};
    for (const DraRequestAlternative& alt : request.alternatives) {
      out.alternatives.push_back(
          AlternativeDemand(alt, catalog, demand.missing));
    }
    demand.requests.push_back(std::move(out));
  }
}

// The claim a pod's entry stands for, its template when the claim is not
// made yet, or a note in `missing`.
void AddPodClaim(const Pod& pod, const PodClaimRef& ref,
                 const DraCatalog& catalog, DraDemand& demand) {
  const std::string& ns = pod.meta.namespace_name;
  const std::string& name = ref.ResolvedClaimName();
  if (!name.empty()) {
    const std::string key = absl::StrCat(ns, "/", name);
    auto claim = catalog.claims.find(key);
    if (claim == catalog.claims.end()) {
      demand.missing.push_back(absl::StrCat("ResourceClaim ", key));
    } else if (claim->second.allocated) {
      demand.allocated_claims.push_back(key);
      if (!claim->second.allocated_node.empty()) {
        demand.allocated_node = claim->second.allocated_node;
      }
    } else {
      AddClaimSpec(key, claim->second.spec, catalog, demand);
    }
    return;
  }
  const std::string key = absl::StrCat(ns, "/", ref.template_name);
  auto found = catalog.templates.find(key);
  if (ref.template_name.empty() || found == catalog.templates.end()) {
    demand.missing.push_back(absl::StrCat("ResourceClaimTemplate ", key));
    return;
  }
  AddClaimSpec(absl::StrCat("template ", key), found->second.spec, catalog,
               demand);
}

}  // namespace

DraDemand DraDemandOf(const Pod& pod, const DraCatalog& catalog) {
  DraDemand demand;
  for (const PodClaimRef& ref : pod.resource_claims) {
    AddPodClaim(pod, ref, catalog, demand);
  }
  if (!pod.extended_resource_claim.empty()) {
    AddPodClaim(pod, PodClaimRef{"", pod.extended_resource_claim, "", ""},
                catalog, demand);
  }
  return demand;
}

bool CountSaysAll(const DraDemand& demand) {
  if (!demand.missing.empty() || !demand.allocated_node.empty()) return false;
  for (const DraRequestDemand& request : demand.requests) {
    if (request.alternatives.size() != 1) return false;
    const DraAlternativeDemand& alt = request.alternatives.front();
    if (!alt.undecided.empty() || alt.own_selectors ||
        !alt.tolerations.empty()) {
      return false;
    }
  }
  return true;
}

std::string DraDemandSignature(const DraDemand& demand) {
  std::string out =
      absl::StrCat("n", demand.allocated_node.size(), ":",
                   demand.allocated_node, "m", demand.missing.size());
  for (const std::string& missing : demand.missing) {
    absl::StrAppend(&out, missing.size(), ":", missing);
  }
  for (const DraRequestDemand& request : demand.requests) {
    absl::StrAppend(&out, "r", request.alternatives.size());
    for (const DraAlternativeDemand& alt : request.alternatives) {
      absl::StrAppend(&out, "c", alt.count, "u", alt.undecided.empty() ? 0 : 1,
                      "s", alt.selectors.size());
      for (const DeviceSelector& selector : alt.selectors) {
        absl::StrAppend(&out, selector.expression().size(), ":",
                        selector.expression());
      }
      absl::StrAppend(&out, "t", alt.tolerations.size());
      for (const DeviceToleration& t : alt.tolerations) {
        absl::StrAppend(&out, t.key.size(), ":", t.key, t.op.size(), ":", t.op,
                        t.value.size(), ":", t.value, t.effect.size(), ":",
                        t.effect);
      }
    }
  }
  return out;
}

namespace {

bool Tolerated(const std::vector<DeviceToleration>& tolerations,
               const DeviceTaint& taint) {
  return std::any_of(tolerations.begin(), tolerations.end(),
                     [&](const DeviceToleration& t) {
                       if (!t.effect.empty() && t.effect != taint.effect)
                         return false;
                       if (t.op == "Exists")
                         return t.key.empty() || t.key == taint.key;
                       return t.key == taint.key && t.value == taint.value;
                     });
}

}  // namespace

bool TaintKeepsOff(const DraAlternativeDemand& alt,
                   const DraDeviceState& state) {
  return std::any_of(state.device.taints.begin(), state.device.taints.end(),
                     [&](const DeviceTaint& taint) {
                       return taint.effect != "None" &&
                              !Tolerated(alt.tolerations, taint);
                     });
}

DeviceMatch MatchDevice(const DraAlternativeDemand& alt,
                        const DraDeviceState& state, std::string* error) {
  for (const DeviceSelector& selector : alt.selectors) {
    SelectorOutcome outcome = selector.Evaluate({state.driver, &state.device});
    if (outcome.result == SelectorResult::kNoMatch) return DeviceMatch::kNo;
    if (outcome.result == SelectorResult::kError) {
      if (error != nullptr) {
        *error = absl::StrCat("selector \"", selector.expression(), "\" on ",
                              state.device.name, ": ", outcome.error);
      }
      return DeviceMatch::kError;
    }
  }
  return DeviceMatch::kYes;
}

namespace {

// Free, not spent, and no taint keeps the alternative off it.
bool Usable(const DraDeviceState& state, const DraAlternativeDemand& alt) {
  if (!state.claim.empty() || state.counters_spent) return false;
  return !TaintKeepsOff(alt, state);
}

// Devices already picked for the pod's earlier requests. Inline, since
// filter builds one per candidate node and a node rarely has more than 32
// devices: no allocation on the hot path.
using Taken = absl::InlinedVector<bool, 32>;

struct Pick {
  std::vector<size_t> devices;  // indices into DraNodeDevices::devices
  std::string error;            // a CEL runtime error: kube-scheduler fails too
};

// Which devices the alternative can take, held or not by this pod's other
// requests: free, not spent, taints tolerated, selectors matched. The
// devices of a node never change once shared, so this is memoised with
// them and the next pod's filter reads one byte per device instead of
// each device's state (40,000 devices at 5,000 nodes: cache misses).
SelectorVerdicts VerdictsOf(const DraAlternativeDemand& alt,
                            const DraNodeDevices& node) {
  SelectorVerdicts verdicts;
  verdicts.reserve(node.devices.size());
  for (const DraDeviceState& state : node.devices) {
    if (!Usable(state, alt)) {
      verdicts.push_back(SelectorVerdict::kNoMatch);
      continue;
    }
    switch (MatchDevice(alt, state, nullptr)) {
      case DeviceMatch::kYes:
        verdicts.push_back(SelectorVerdict::kMatches);
        break;
      case DeviceMatch::kNo:
        verdicts.push_back(SelectorVerdict::kNoMatch);
        break;
      case DeviceMatch::kError:
        verdicts.push_back(SelectorVerdict::kError);
        break;
    }
  }
  return verdicts;
}

// Filter asks this of every candidate node, so it allocates nothing per
// device and reads the node's memo, not its devices.
Pick PickDevices(const DraAlternativeDemand& alt, const DraNodeDevices& node,
                 const Taken& taken) {
  Pick pick;
  std::shared_ptr<const SelectorVerdicts> verdicts = node.memo.VerdictsFor(
      alt.match_key, [&] { return VerdictsOf(alt, node); });
  pick.devices.reserve(static_cast<size_t>(
      std::clamp<int64_t>(alt.count, 0, std::ssize(*verdicts))));
  for (size_t d = 0; d < verdicts->size(); ++d) {
    if (static_cast<int64_t>(pick.devices.size()) >= alt.count) break;
    if (taken[d]) continue;
    if ((*verdicts)[d] == SelectorVerdict::kError) {
      MatchDevice(alt, node.devices[d], &pick.error);  // for CEL's message
      return pick;
    }
    if ((*verdicts)[d] == SelectorVerdict::kMatches) pick.devices.push_back(d);
  }
  return pick;
}

// Tries the request's alternatives in order; false with `reason` when
// none fits. An undecided alternative reached first ends the search: the
// node is not refused for it.
bool FitRequest(const DraRequestDemand& request, const DraNodeDevices& node,
                Taken& taken, std::vector<size_t>& picked,
                std::string& reason) {
  for (const DraAlternativeDemand& alt : request.alternatives) {
    if (!alt.undecided.empty()) return true;
    Pick pick = PickDevices(alt, node, taken);
    if (!pick.error.empty()) {
      reason =
          absl::StrCat(request.claim, " request ", alt.name, ": ", pick.error);
      return false;
    }
    if (static_cast<int64_t>(pick.devices.size()) < alt.count) {
      reason = absl::StrCat(request.claim, " request ", alt.name, " needs ",
                            alt.count, " ", alt.device_class, " device(s); ",
                            pick.devices.size(), " free match");
      continue;
    }
    for (size_t d : pick.devices) taken[d] = true;
    picked = std::move(pick.devices);
    return true;
  }
  return false;
}

}  // namespace

DraNodeFit FitDraDemand(const DraDemand& demand, std::string_view node,
                        const DraNodeDevices& devices) {
  DraNodeFit fit;
  if (!demand.missing.empty()) {
    fit.reason = absl::StrCat(demand.missing.front(), " does not exist");
    return fit;
  }
  if (!demand.allocated_node.empty() && demand.allocated_node != node) {
    fit.reason =
        absl::StrCat("its claim is allocated on node ", demand.allocated_node);
    return fit;
  }
  Taken taken(devices.devices.size());
  fit.picked.reserve(demand.requests.size());
  for (const DraRequestDemand& request : demand.requests) {
    fit.picked.emplace_back();
    if (!FitRequest(request, devices, taken, fit.picked.back(), fit.reason)) {
      return fit;
    }
  }
  fit.fits = true;
  fit.reason.clear();
  return fit;
}

std::vector<std::vector<std::string>> PickedDeviceKeys(
    const DraNodeFit& fit, const DraNodeDevices& devices) {
  std::vector<std::vector<std::string>> out;
  for (const std::vector<size_t>& request : fit.picked) {
    std::vector<std::string>& keys = out.emplace_back();
    for (size_t d : request) {
      const DraDeviceState& state = devices.devices[d];
      keys.push_back(DraDeviceKey(state.driver, state.pool, state.device.name));
    }
  }
  return out;
}

}  // namespace gpusched
