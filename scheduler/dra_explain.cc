#include "scheduler/dra_explain.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "scheduler/dra_describe.h"

namespace gpusched {
namespace {

constexpr size_t kTaintedShown = 3;

// How the node's devices that match one alternative's selectors stand.
struct Tally {
  int64_t matching = 0;
  int64_t free = 0;
  int64_t allocated = 0;
  int64_t counters_spent = 0;
  std::vector<std::string> tainted;  // "gpu-7 xid=79:NoExecute"
  std::string error;                 // the first CEL runtime error
};

Tally TallyOf(const DraAlternativeDemand& alt, const DraNodeDevices& devices) {
  Tally tally;
  for (const DraDeviceState& state : devices.devices) {
    std::string* error = tally.error.empty() ? &tally.error : nullptr;
    if (MatchDevice(alt, state, error) != DeviceMatch::kYes) continue;
    ++tally.matching;
    if (!state.claim.empty()) {
      ++tally.allocated;
    } else if (TaintKeepsOff(alt, state)) {
      tally.tainted.push_back(
          absl::StrCat(state.device.name, " ", BlockingTaints(state.device)));
    } else if (state.counters_spent) {
      ++tally.counters_spent;
    } else {
      ++tally.free;
    }
  }
  return tally;
}

std::string TaintedText(const std::vector<std::string>& tainted) {
  const size_t shown = std::min(kTaintedShown, tainted.size());
  std::string out =
      absl::StrJoin(tainted.begin(), tainted.begin() + shown, ", ");
  if (tainted.size() > shown) {
    absl::StrAppend(&out, " and ", tainted.size() - shown, " more");
  }
  return out;
}

std::string ShortageText(const DraRequestDemand& request,
                         const DraAlternativeDemand& alt, const Tally& tally) {
  std::string out = absl::StrCat(request.claim, " request ", alt.name,
                                 " wants ", alt.count, " ", alt.device_class);
  if (!tally.error.empty()) return absl::StrCat(out, ": ", tally.error);
  if (tally.matching == 0) {
    return absl::StrCat(out, ": no device here matches its selectors");
  }
  absl::StrAppend(&out, ": ", tally.free, " free");
  if (tally.allocated > 0)
    absl::StrAppend(&out, ", ", tally.allocated, " allocated");
  if (!tally.tainted.empty()) {
    absl::StrAppend(&out, ", ", tally.tainted.size(), " tainted (",
                    TaintedText(tally.tainted), ")");
  }
  if (tally.counters_spent > 0) {
    absl::StrAppend(&out, ", ", tally.counters_spent,
                    " partitioned (counters spent)");
  }
  return absl::StrCat(out, " of ", tally.matching, " matching");
}

}  // namespace

bool HasDraClaims(const Pod& pod) {
  return !pod.resource_claims.empty() || !pod.extended_resource_claim.empty() ||
         pod.dra_demand != nullptr;
}

DraPodClaims ClaimsForExplain(const Pod& pod, const DraLookup& lookup,
                              const std::vector<DeviceClassMapping>& mappings) {
  if (lookup.claims) return lookup.claims(pod, mappings);
  return {.demand = pod.dra_demand != nullptr ? *pod.dra_demand : DraDemand{},
          .charge = {.requests = pod.claim_requests}};
}

DraExplanation ExplainDraDemand(const Pod& pod, const DraDemand& demand,
                                const ClaimCharge& charge) {
  DraExplanation out{.pod = pod.Key(),
                     .allocated_claims = demand.allocated_claims,
                     .allocated_node = demand.allocated_node,
                     .missing = demand.missing,
                     .charged = charge.requests,
                     .uncharged = charge.uncharged,
                     .held = charge.hold.reason};
  for (const DraRequestDemand& request : demand.requests) {
    for (const DraAlternativeDemand& alt : request.alternatives) {
      DraRequestLine line{.claim = request.claim,
                          .request = alt.name,
                          .device_class = alt.device_class,
                          .count = alt.count,
                          .left_to_kube_scheduler = alt.undecided};
      for (const DeviceSelector& selector : alt.selectors) {
        line.selectors.push_back(selector.expression());
      }
      out.requests.push_back(std::move(line));
    }
  }
  return out;
}

// Steps, per request: 1. an undecided alternative reached first leaves the
// request to kube-scheduler (as FitDraDemand does); 2. an alternative with
// enough free matching devices meets it; 3. otherwise each decided
// alternative says how the node's matching devices stand.
std::string DraNodeShortage(const DraDemand& demand,
                            const DraNodeDevices& devices) {
  std::vector<std::string> lines;
  for (const DraRequestDemand& request : demand.requests) {
    std::vector<std::string> tried;
    bool met = false;
    for (const DraAlternativeDemand& alt : request.alternatives) {
      if (!alt.undecided.empty()) {
        met = true;
        break;
      }
      const Tally tally = TallyOf(alt, devices);
      if (tally.error.empty() && tally.free >= alt.count) {
        met = true;
        break;
      }
      tried.push_back(ShortageText(request, alt, tally));
    }
    if (!met) lines.insert(lines.end(), tried.begin(), tried.end());
  }
  return absl::StrJoin(lines, "; ");
}

DraMemberDevices DraDevicesOfPod(const DraNodeDevices& devices,
                                 std::string_view uid) {
  DraMemberDevices out;
  std::set<std::string> claims;
  for (const DraDeviceState& state : devices.devices) {
    if (uid.empty() || state.reserved_for != uid) continue;
    out.allocated.push_back(state.device.name);
    claims.insert(state.claim);
  }
  out.claims.assign(claims.begin(), claims.end());
  return out;
}

}  // namespace gpusched
