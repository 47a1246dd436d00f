#include "api/codec/event_json.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "api/codec/json_writer.h"

namespace gpusched {
namespace {

using SystemClock = std::chrono::system_clock;

// At most `limit` bytes, never cutting a UTF-8 sequence in two.
std::string_view CutUtf8(std::string_view text, size_t limit) {
  if (text.size() <= limit) return text;
  size_t end = limit;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) {
    --end;
  }
  return text.substr(0, end);
}

// metav1.MicroTime: RFC 3339 with microseconds, in UTC.
std::string MicroTime(SystemClock::time_point now) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", absl::FromChrono(now),
                          absl::UTCTimeZone());
}

void WriteRegarding(JsonWriter& w, const EventSubject& subject) {
  w.Key("regarding").Raw("{").Key("apiVersion").String(subject.api_version);
  w.Raw(",").Key("kind").String(subject.kind);
  if (!subject.namespace_name.empty()) {
    w.Raw(",").Key("namespace").String(subject.namespace_name);
  }
  w.Raw(",").Key("name").String(subject.name);
  if (!subject.uid.empty()) w.Raw(",").Key("uid").String(subject.uid);
  w.Raw("}");
}

}  // namespace

std::string_view EventNamespace(const EventSubject& subject) {
  return subject.namespace_name.empty() ? std::string_view("default")
                                        : subject.namespace_name;
}

std::string EncodeEvent(const EventRecord& event,
                        std::string_view reporting_instance,
                        SystemClock::time_point now) {
  JsonWriter w;
  w.Raw(R"({"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{)");
  // Named as client-go names Events, "<object>.<hex unix nanos>": a
  // generateName of "<object>." would be refused (a name must not end in a
  // dot, and the API server does not complete a prefix that does).
  const int64_t nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            now.time_since_epoch())
                            .count();
  w.Key("name").String(
      absl::StrCat(event.regarding.name, ".", absl::Hex(nanos)));
  w.Raw(",").Key("namespace").String(EventNamespace(event.regarding));
  w.Raw("},").Key("eventTime").String(MicroTime(now));
  w.Raw(",").Key("reportingController").String(kReportingController);
  w.Raw(",").Key("reportingInstance").String(reporting_instance);
  w.Raw(",").Key("action").String(event.action);
  w.Raw(",").Key("reason").String(event.reason);
  w.Raw(",").Key("note").String(CutUtf8(event.note, kEventNoteLimit));
  w.Raw(",").Key("type").String(event.type == EventType::kWarning ? "Warning"
                                                                  : "Normal");
  w.Raw(",");
  WriteRegarding(w, event.regarding);
  w.Raw("}");
  return w.Take();
}

}  // namespace gpusched
