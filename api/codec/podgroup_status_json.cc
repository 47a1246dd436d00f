#include "api/codec/podgroup_status_json.h"

#include "api/codec/json_writer.h"

namespace gpusched {
namespace {

std::string_view PhaseName(VolcanoPhase phase) {
  switch (phase) {
    case VolcanoPhase::kPending:
      return "Pending";
    case VolcanoPhase::kInqueue:
      return "Inqueue";
    case VolcanoPhase::kRunning:
      return "Running";
    case VolcanoPhase::kUnknown:
      return "Unknown";
    case VolcanoPhase::kCompleted:
      return "Completed";
  }
  return "Unknown";
}

std::string_view PhaseName(CoschedulingPhase phase) {
  constexpr std::string_view kNames[] = {
      "Pending", "PreScheduling", "Scheduling", "Scheduled",
      "Running", "Unknown",       "Finished",   "Failed"};
  return kNames[static_cast<int>(phase)];
}

// The fields Volcano's conditions share with metav1.Condition.
void WriteConditionFields(JsonWriter& w, std::string_view type, bool status,
                          std::string_view reason, std::string_view message,
                          std::chrono::system_clock::time_point transition) {
  w.Key("type").String(type);
  w.Raw(",").Key("status").String(status ? "True" : "False");
  w.Raw(",").Key("reason").String(reason);
  w.Raw(",").Key("message").String(message);
  w.Raw(",").Key("lastTransitionTime").String(Rfc3339(transition));
}

void WriteCondition(JsonWriter& w, const VolcanoCondition& c) {
  w.Raw("{");
  WriteConditionFields(w,
                       c.type == VolcanoCondition::Type::kScheduled
                           ? "Scheduled"
                           : "Unschedulable",
                       c.status, c.reason, c.message, c.last_transition);
  if (!c.transition_id.empty()) {
    w.Raw(",").Key("transitionID").String(c.transition_id);
  }
  w.Raw("}");
}

void WriteCounts(JsonWriter& w, int32_t running, int32_t succeeded,
                 int32_t failed) {
  w.Raw(",").Key("running").Int(running);
  w.Raw(",").Key("succeeded").Int(succeeded);
  w.Raw(",").Key("failed").Int(failed);
}

}  // namespace

std::string EncodeVolcanoStatusPatch(const VolcanoStatus& status) {
  JsonWriter w;
  w.Raw(R"({"status":{)").Key("phase").String(PhaseName(status.phase));
  w.Raw(",").Key("conditions").Raw("[");
  for (size_t i = 0; i < status.conditions.size(); ++i) {
    if (i > 0) w.Raw(",");
    WriteCondition(w, status.conditions[i]);
  }
  w.Raw("]");
  WriteCounts(w, status.running, status.succeeded, status.failed);
  w.Raw("}}");
  return w.Take();
}

std::string EncodeNativeStatusPatch(const NativeAdmissionCondition& c) {
  JsonWriter w;
  w.Raw(R"({"status":{"conditions":[{)");
  WriteConditionFields(w, kNativeAdmissionCondition, c.admitted, c.reason,
                       c.message, c.last_transition);
  w.Raw("}]}}");
  return w.Take();
}

std::string EncodeCoschedulingStatusPatch(const CoschedulingStatus& status) {
  JsonWriter w;
  w.Raw(R"({"status":{)").Key("phase").String(PhaseName(status.phase));
  if (status.scheduled) w.Raw(",").Key("scheduled").Int(*status.scheduled);
  WriteCounts(w, status.running, status.succeeded, status.failed);
  if (status.schedule_start_time) {
    w.Raw(",")
        .Key("scheduleStartTime")
        .String(Rfc3339(*status.schedule_start_time));
  }
  w.Raw("}}");
  return w.Take();
}

}  // namespace gpusched
