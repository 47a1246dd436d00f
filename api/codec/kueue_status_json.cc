#include "api/codec/kueue_status_json.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string_view>

#include "absl/strings/str_cat.h"
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

// status.fairSharing: Kueue writes weightedShare (required) whenever it
// writes the section, 0 on a LocalQueue.
void WriteFairSharing(JsonWriter& w, const KueueQueueStatus& status) {
  w.Raw(",").Key("fairSharing").Raw("{");
  w.Key("weightedShare").Int(status.weighted_share.value_or(0));
  if (const auto& afs = status.admission_fair_sharing) {
    w.Raw(",").Key("admissionFairSharingStatus").Raw("{");
    w.Key("consumedResources").Raw("{");
    bool first = true;
    for (const auto& [resource, amount] : afs->consumed) {
      if (!first) w.Raw(",");
      first = false;
      w.Key(resource).String(KueueDecimalQuantity(amount));
    }
    w.Raw("},").Key("lastUpdate").String(Rfc3339(afs->last_update));
    w.Raw("}");
  }
  w.Raw("}");
}

void WriteActive(JsonWriter& w, const KueueActiveCondition& c) {
  w.Raw("[{").Key("type").String("Active");
  w.Raw(",").Key("status").String(c.active ? "True" : "False");
  w.Raw(",").Key("reason").String(c.reason);
  w.Raw(",").Key("message").String(c.message);
  w.Raw(",").Key("lastTransitionTime").String(Rfc3339(c.last_transition));
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
  WriteUsage(w, status.reservation, local);
  w.Raw(",").Key("flavorsUsage");
  WriteUsage(w, status.usage, local);
  if (status.weighted_share || status.admission_fair_sharing) {
    WriteFairSharing(w, status);
  }
  w.Raw(",").Key("conditions");
  WriteActive(w, status.condition);
  w.Raw("}}");
  return w.Take();
}

// Kueue's MulByFloat rounds down to 9 decimals; Kubernetes prints a
// decimal quantity with the largest SI suffix that keeps it whole.
std::string KueueDecimalQuantity(double amount) {
  if (!std::isfinite(amount) || amount <= 0) return "0";
  // Whole units and nano units apart, so that bytes stay exact; the
  // fraction goes down, but not below a nano unit the sum of doubles
  // missed by an ulp (1e-6 is 999.99999999999995 nano units as a double).
  const double whole = std::floor(amount);
  auto nanos = static_cast<int64_t>(std::floor((amount - whole) * 1e9 + 1e-3));
  __int128 mantissa = static_cast<__int128>(whole) * 1'000'000'000 +
                      std::min<int64_t>(nanos, 999'999'999);
  if (mantissa == 0) return "0";
  static constexpr std::string_view kSuffixes[] = {"n", "u", "m", "",  "k",
                                                   "M", "G", "T", "P", "E"};
  size_t suffix = 0;
  while (suffix + 1 < std::size(kSuffixes) && mantissa % 1000 == 0) {
    mantissa /= 1000;
    ++suffix;
  }
  std::string digits;
  for (; mantissa > 0; mantissa /= 10) {
    digits.insert(digits.begin(), static_cast<char>('0' + mantissa % 10));
  }
  return digits.append(kSuffixes[suffix]);
}

}  // namespace gpusched
