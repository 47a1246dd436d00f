#include "api/codec/requeue_state_json.h"

#include <cstdint>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/codec/json_fields.h"
#include "api/codec/json_writer.h"

namespace gpusched {
namespace {

namespace ci = codec_internal;
using ci::JsonValue;
using ci::PathSegment;

absl::Status ReadNonNegative(const JsonValue& object, const PathSegment& at,
                             std::string_view key, int64_t* out) {
  if (auto s = ci::OptionalInt64(object, at, key, out); !s.ok()) return s;
  if (*out >= 0) return absl::OkStatus();
  return ci::FieldError(ci::Member(object, key)->line(), at.Field(key),
                        "cannot be negative");
}

absl::Status ReadReason(const JsonValue& object, const PathSegment& at,
                        RequeueRecord* r) {
  std::string_view reason, message;
  if (auto s = ci::OptionalString(object, at, "reason", &reason); !s.ok()) {
    return s;
  }
  if (auto s = ci::OptionalString(object, at, "message", &message); !s.ok()) {
    return s;
  }
  r->code = RequeueCodeOfName(reason);
  if (!reason.empty() && r->code == ReasonCode::kNone) {
    return ci::FieldError(
        ci::Member(object, "reason")->line(), at.Field("reason"),
        absl::StrCat("\"", std::string(reason),
                     "\" is none of PodsReadyTimeout, "
                     "RequeuingLimitExceeded, AdmissionCheck"));
  }
  r->message.assign(message);
  return absl::OkStatus();
}

absl::StatusOr<RequeueRecord> ReadRecord(const JsonValue& element,
                                         const PathSegment& at) {
  if (auto s = ci::ExpectObject(element, at); !s.ok()) return s;
  RequeueRecord r;
  std::string_view workload;
  if (auto s = ci::RequiredString(element, at, "workload", &workload);
      !s.ok()) {
    return s;
  }
  r.workload.assign(workload);
  int64_t count = 0;
  if (auto s = ReadNonNegative(element, at, "count", &count); !s.ok()) return s;
  if (count > INT32_MAX) {
    return ci::FieldError(element.line(), at.Field("count"), "too large");
  }
  r.count = static_cast<int>(count);
  if (auto s = ReadNonNegative(element, at, "requeueAtMs", &r.requeue_at_ms);
      !s.ok()) {
    return s;
  }
  if (auto s = ReadNonNegative(element, at, "queuedFromMs", &r.queued_from_ms);
      !s.ok()) {
    return s;
  }
  if (ci::Member(element, "deactivated").has_value()) {
    if (auto s = ci::RequiredBool(element, at, "deactivated", &r.deactivated);
        !s.ok()) {
      return s;
    }
  }
  if (auto s = ReadReason(element, at, &r); !s.ok()) return s;
  return r;
}

}  // namespace

std::string EncodeRequeueState(const std::vector<RequeueRecord>& records) {
  JsonWriter w;
  w.Raw(R"({"workloads":[)");
  bool first = true;
  for (const RequeueRecord& r : records) {
    if (!first) w.Raw(",");
    first = false;
    w.Raw("{").Key("workload").String(r.workload);
    w.Raw(",").Key("count").Int(r.count);
    w.Raw(",").Key("requeueAtMs").Int(r.requeue_at_ms);
    w.Raw(",").Key("queuedFromMs").Int(r.queued_from_ms);
    w.Raw(",").Key("deactivated").Bool(r.deactivated);
    if (r.code != ReasonCode::kNone) {
      w.Raw(",").Key("reason").String(ReasonCodeName(r.code));
      w.Raw(",").Key("message").String(r.message);
    }
    w.Raw("}");
  }
  w.Raw("]}");
  return w.Take();
}

absl::StatusOr<std::vector<RequeueRecord>> DecodeRequeueState(
    std::string_view text) {
  return ci::DecodeListDocument<RequeueRecord>(text, kRequeueStateKey,
                                               "workloads", ReadRecord);
}

}  // namespace gpusched
