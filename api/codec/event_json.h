#ifndef GPUSCHED_API_CODEC_EVENT_JSON_H_
#define GPUSCHED_API_CODEC_EVENT_JSON_H_

// The events.k8s.io/v1 Events gpusched reports (api/kube/event_recorder.h
// queues and posts them).

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

namespace gpusched {

inline constexpr char kReportingController[] = "gpusched.io/scheduler";
// events.k8s.io/v1 rejects a longer note.
inline constexpr size_t kEventNoteLimit = 1024;

// The object an Event is about.
struct EventSubject {
  std::string api_version = "v1";
  std::string kind = "Pod";
  std::string namespace_name;  // empty for cluster-scoped objects
  std::string name;
  std::string uid;
};

enum class EventType { kNormal, kWarning };

struct EventRecord {
  EventSubject regarding;
  EventType type = EventType::kNormal;
  std::string reason;  // the reason code, e.g. WaitingForQuota
  std::string action;  // what gpusched did, e.g. Admission
  std::string note;    // the sentence; cut to kEventNoteLimit bytes
};

// Events of cluster-scoped objects (nodes) live in "default", as
// kube-scheduler's and kubelet's do.
std::string_view EventNamespace(const EventSubject& subject);

// The Event, named "<object>.<hex unix nanos>" at `now`, its note cut to
// kEventNoteLimit bytes on a UTF-8 boundary.
std::string EncodeEvent(const EventRecord& event,
                        std::string_view reporting_instance,
                        std::chrono::system_clock::time_point now);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_EVENT_JSON_H_
