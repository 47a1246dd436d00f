#include "api/codec/kueue_status_json.h"

#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "api/codec/json_writer.h"
#include "scheduler/quantity.h"

namespace gpusched {
namespace {

// A quota amount as a Kubernetes quantity: the quota tree counts cpu in
// millicores and everything else in its own unit.
std::string Quantity(std::string_view resource, int64_t amount) {
  if (resource == "cpu") return FormatMilli(amount);
  return absl::StrCat(amount);
}

void WriteUsage(JsonWriter& w, const std::vector<KueueFlavorUsage>& usage,
                bool local) {
  w.Raw("[");
  for (size_t f = 0; f < usage.size(); ++f) {
    if (f > 0) w.Raw(",");
    w.Raw("{").Key("name").String(usage[f].flavor);
    w.Raw(",").Key("resources").Raw("[");
    const std::vector<KueueResourceUsage>& resources = usage[f].resources;
    for (size_t r = 0; r < resources.size(); ++r) {
      if (r > 0) w.Raw(",");
      const KueueResourceUsage& u = resources[r];
      w.Raw("{").Key("name").String(u.resource);
      w.Raw(",").Key("total").String(Quantity(u.resource, u.total));
      if (!local) {
        w.Raw(",").Key("borrowed").String(Quantity(u.resource, u.borrowed));
      }
      w.Raw("}");
    }
    w.Raw("]}");
  }
  w.Raw("]");
}

void WriteActive(JsonWriter& w, const KueueActiveCondition& c) {
  w.Raw("[{").Key("type").String("Active");
  w.Raw(",").Key("status").String(c.active ? "True" : "False");
  w.Raw(",").Key("reason").String(c.reason);
  w.Raw(",").Key("message").String(c.message);
  w.Raw(",")
      .Key("lastTransitionTime")
      .String(absl::FormatTime("%Y-%m-%dT%H:%M:%SZ",
                               absl::FromChrono(c.last_transition),
                               absl::UTCTimeZone()));
  w.Raw("}]");
}

}  // namespace

std::string EncodeKueueStatusPatch(const KueueQueueStatus& status, bool local) {
  JsonWriter w;
  w.Raw("{").Key("status").Raw("{");
  w.Key("pendingWorkloads").Int(status.pending);
  w.Raw(",").Key("reservingWorkloads").Int(status.reserving);
  w.Raw(",").Key("admittedWorkloads").Int(status.admitted);
  w.Raw(",").Key("flavorsReservation");
  WriteUsage(w, status.usage, local);
  w.Raw(",").Key("flavorsUsage");
  WriteUsage(w, status.usage, local);
  if (status.weighted_share) {
    w.Raw(",")
        .Key("fairSharing")
        .Raw("{")
        .Key("weightedShare")
        .Int(*status.weighted_share)
        .Raw("}");
  }
  w.Raw(",").Key("conditions");
  WriteActive(w, status.condition);
  w.Raw("}}");
  return w.Take();
}

}  // namespace gpusched
