#include "api/codec/visibility_json.h"

#include <array>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "api/codec/json_writer.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace {

// The group's one version, as APIGroup and APIGroupList list it.
constexpr std::string_view kGroupBody =
    R"("name":"visibility.gpusched.io","versions":[{"groupVersion":)"
    R"("visibility.gpusched.io/v1alpha1","version":"v1alpha1"}],)"
    R"("preferredVersion":{"groupVersion":"visibility.gpusched.io/v1alpha1",)"
    R"("version":"v1alpha1"})";

struct ResourceEntry {
  std::string_view name;
  std::string_view singular;
  bool namespaced;
  std::string_view kind;
  std::string_view verbs;  // a JSON array
};

// The parents are listed with a verb so that `kubectl api-resources` shows
// them (it skips resources without verbs, and subresources).
constexpr std::string_view kGetList = R"(["get","list"])";
constexpr std::string_view kGet = R"(["get"])";
constexpr std::array<ResourceEntry, 9> kResources{{
    {"clusterqueues", "clusterqueue", false, "ClusterQueue", kGetList},
    {"clusterqueues/pendingworkloads", "", false, "PendingWorkloadsSummary",
     kGet},
    {"cohorts", "cohort", false, "Cohort", R"(["list"])"},
    {"localqueues", "localqueue", true, "LocalQueue", kGetList},
    {"localqueues/pendingworkloads", "", true, "PendingWorkloadsSummary", kGet},
    {"workloads", "workload", true, "WorkloadExplanation", R"([])"},
    {"workloads/explain", "", true, "WorkloadExplanation", kGet},
    // The dashboard's data (dashboard_json.h); decisions are also listed
    // across namespaces, as pods are.
    {"gpunodes", "gpunode", false, "GPUNode", R"(["list"])"},
    {"decisions", "decision", true, "Decision", R"(["list"])"},
}};

void WriteMetadata(JsonWriter& w, const PendingWorkload& workload) {
  w.Key("metadata").Raw("{").Key("name").String(workload.name).Raw(",");
  w.Key("namespace").String(workload.namespace_name).Raw(",");
  w.Key("creationTimestamp").String(Rfc3339(workload.created_ms)).Raw("}");
}

const ForecastStart* StartOf(const StartForecast* forecast,
                             const PendingWorkload& workload) {
  if (forecast == nullptr) return nullptr;
  auto it = forecast->starts.find(workload.key);
  return it == forecast->starts.end() ? nullptr : &it->second;
}

void WriteStart(JsonWriter& w, const ForecastStart* start) {
  if (start == nullptr) return;
  if (start->expected_start_ms) {
    w.Raw(",").Key("expectedStart").String(Rfc3339(*start->expected_start_ms));
  }
  if (start->latest_start_ms) {
    w.Raw(",").Key("latestStart").String(Rfc3339(*start->latest_start_ms));
  }
  if (!start->expected_start_ms) {
    w.Raw(",").Key("startUnknownReason").String(start->why_unknown);
  }
}

void WriteItem(JsonWriter& w, const PendingWorkload& workload,
               const StartForecast* forecast) {
  w.Raw("{");
  WriteMetadata(w, workload);
  w.Raw(",").Key("priority").Int(workload.priority).Raw(",");
  w.Key("localQueueName").String(workload.local_queue).Raw(",");
  w.Key("positionInClusterQueue")
      .Int(static_cast<int64_t>(workload.position_in_cluster_queue))
      .Raw(",");
  w.Key("positionInLocalQueue")
      .Int(static_cast<int64_t>(workload.position_in_local_queue))
      .Raw(",");
  w.Key("reasonCode").String(ReasonCodeName(workload.code));
  // The sentence beside the code, for a person (the dashboard's list).
  if (!workload.message.empty()) {
    w.Raw(",").Key("message").String(workload.message);
  }
  WriteStart(w, StartOf(forecast, workload));
  w.Raw("}");
}

void WriteItems(JsonWriter& w, PendingPage page,
                const StartForecast* forecast) {
  w.Key("items").Raw("[");
  for (size_t i = 0; i < page.size(); ++i) {
    if (i > 0) w.Raw(",");
    WriteItem(w, *page[i], forecast);
  }
  w.Raw("]");
}

void WriteTypeMeta(JsonWriter& w, std::string_view kind,
                   std::string_view api_version) {
  w.Key("kind").String(kind).Raw(",").Key("apiVersion").String(api_version);
}

constexpr std::string_view kColumns =
    R"([{"name":"Name","type":"string","format":"name","description":)"
    R"("The workload's name.","priority":0},)"
    R"({"name":"Namespace","type":"string","format":"","description":)"
    R"("The workload's namespace.","priority":0},)"
    R"({"name":"Position in CQ","type":"integer","format":"","description":)"
    R"("Place in its ClusterQueue's admission order, from 0.","priority":0},)"
    R"({"name":"Position in LQ","type":"integer","format":"","description":)"
    R"("Place in its LocalQueue's admission order, from 0.","priority":0},)"
    R"({"name":"Priority","type":"integer","format":"","description":)"
    R"("The workload's priority.","priority":0},)"
    R"({"name":"Reason","type":"string","format":"","description":)"
    R"("Why it waits (gpusched's reason code).","priority":0},)"
    R"({"name":"Expected Start","type":"string","format":"","description":)"
    R"("When the forecast expects it to start.","priority":0},)"
    R"({"name":"Age","type":"string","format":"","description":)"
    R"("Time since the workload was created.","priority":0}])";

void WriteRow(JsonWriter& w, const PendingWorkload& workload, int64_t now_ms,
              const StartForecast* forecast) {
  w.Raw(R"({"cells":[)").String(workload.name).Raw(",");
  w.String(workload.namespace_name).Raw(",");
  w.Int(static_cast<int64_t>(workload.position_in_cluster_queue)).Raw(",");
  w.Int(static_cast<int64_t>(workload.position_in_local_queue)).Raw(",");
  w.Int(workload.priority).Raw(",").String(ReasonCodeName(workload.code));
  const ForecastStart* start = StartOf(forecast, workload);
  w.Raw(",").String(start == nullptr ? "" : HumanStart(*start, now_ms));
  w.Raw(",").String(HumanAge(now_ms - workload.created_ms)).Raw("],");
  // kubectl reads the row's namespace and name from its object.
  w.Key("object").Raw("{");
  WriteTypeMeta(w, "PartialObjectMetadata", "meta.k8s.io/v1");
  w.Raw(",");
  WriteMetadata(w, workload);
  w.Raw("}}");
}

}  // namespace

std::string EncodeVisibilityGroupList() {
  return absl::StrCat(R"({"kind":"APIGroupList","apiVersion":"v1",)",
                      R"("groups":[{)", Sv(kGroupBody), "}]}");
}

std::string EncodeVisibilityGroup() {
  return absl::StrCat(R"({"kind":"APIGroup","apiVersion":"v1",)",
                      Sv(kGroupBody), "}");
}

std::string EncodeVisibilityResourceList() {
  JsonWriter w;
  w.Raw("{");
  WriteTypeMeta(w, "APIResourceList", "v1");
  w.Raw(",").Key("groupVersion").String(kVisibilityGroupVersion).Raw(",");
  w.Key("resources").Raw("[");
  for (size_t i = 0; i < kResources.size(); ++i) {
    const ResourceEntry& r = kResources[i];
    w.Raw(i > 0 ? ",{" : "{").Key("name").String(r.name).Raw(",");
    w.Key("singularName").String(r.singular).Raw(",");
    w.Key("namespaced").Bool(r.namespaced).Raw(",");
    w.Key("kind").String(r.kind).Raw(",").Key("verbs").Raw(r.verbs).Raw("}");
  }
  w.Raw("]}");
  return w.Take();
}

std::string HumanStart(const ForecastStart& start, int64_t now_ms) {
  if (!start.expected_start_ms) return "unknown";
  if (*start.expected_start_ms <= now_ms) return "now";
  return absl::StrCat("in ", HumanAge(*start.expected_start_ms - now_ms));
}

std::string EncodePendingWorkloadsSummary(PendingPage page,
                                          const StartForecast* forecast) {
  JsonWriter w;
  w.Raw("{");
  WriteTypeMeta(w, "PendingWorkloadsSummary", kVisibilityGroupVersion);
  w.Raw(",").Key("metadata").Raw("{},");
  WriteItems(w, page, forecast);
  w.Raw("}");
  return w.Take();
}

std::string EncodeVisibilityQueue(const VisibilityQueueRef& queue,
                                  PendingPage page,
                                  const StartForecast* forecast,
                                  std::string_view status) {
  JsonWriter w;
  w.Raw("{");
  WriteTypeMeta(w, queue.kind, kVisibilityGroupVersion);
  w.Raw(",").Key("metadata").Raw("{").Key("name").String(queue.name);
  if (!queue.namespace_name.empty()) {
    w.Raw(",").Key("namespace").String(queue.namespace_name);
  }
  w.Raw("},");
  if (!status.empty()) w.Key("status").Raw(status).Raw(",");
  w.Key("pendingWorkloadsSummary").Raw("{");
  WriteItems(w, page, forecast);
  w.Raw("}}");
  return w.Take();
}

std::string EncodePendingWorkloadsTable(PendingPage page, int64_t now_ms,
                                        const StartForecast* forecast) {
  JsonWriter w;
  w.Raw("{");
  WriteTypeMeta(w, "Table", "meta.k8s.io/v1");
  w.Raw(",").Key("metadata").Raw("{},").Key("columnDefinitions");
  w.Raw(kColumns).Raw(",").Key("rows").Raw("[");
  for (size_t i = 0; i < page.size(); ++i) {
    if (i > 0) w.Raw(",");
    WriteRow(w, *page[i], now_ms, forecast);
  }
  w.Raw("]}");
  return w.Take();
}

// The steps of kubectl's ages: the unit grows with the age, and the
// second unit is dropped once it stops mattering.
std::string HumanAge(int64_t millis) {
  const int64_t seconds = millis < 0 ? 0 : millis / 1000;
  const int64_t minutes = seconds / 60, hours = minutes / 60;
  const int64_t days = hours / 24, years = days / 365;
  if (seconds < 120) return absl::StrCat(seconds, "s");
  if (minutes < 10) {
    return seconds % 60 == 0 ? absl::StrCat(minutes, "m")
                             : absl::StrCat(minutes, "m", seconds % 60, "s");
  }
  if (minutes < 180) return absl::StrCat(minutes, "m");
  if (hours < 8) {
    return minutes % 60 == 0 ? absl::StrCat(hours, "h")
                             : absl::StrCat(hours, "h", minutes % 60, "m");
  }
  if (hours < 48) return absl::StrCat(hours, "h");
  if (hours < 24 * 8) {
    return hours % 24 == 0 ? absl::StrCat(days, "d")
                           : absl::StrCat(days, "d", hours % 24, "h");
  }
  if (days < 365 * 2) return absl::StrCat(days, "d");
  if (years < 8) {
    return days % 365 == 0 ? absl::StrCat(years, "y")
                           : absl::StrCat(years, "y", days % 365, "d");
  }
  return absl::StrCat(years, "y");
}

std::string EncodeFailureStatus(int code, std::string_view reason,
                                std::string_view message) {
  JsonWriter w;
  w.Raw("{");
  WriteTypeMeta(w, "Status", "v1");
  w.Raw(",").Key("metadata").Raw("{},").Key("status").String("Failure");
  w.Raw(",").Key("message").String(message).Raw(",");
  w.Key("reason").String(reason).Raw(",").Key("code").Int(code).Raw("}");
  return w.Take();
}

}  // namespace gpusched
