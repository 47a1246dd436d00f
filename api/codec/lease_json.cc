#include "api/codec/lease_json.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "api/codec/json_fields.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace {

using codec_internal::JsonValue;
using codec_internal::PathSegment;

// RFC 3339 with the fraction kept: expiry is checked to the millisecond,
// where the Pod decoder's timestamps floor to seconds.
absl::Status DecodeRenewTime(const JsonValue& spec, const PathSegment& at,
                             LeaseState* state) {
  std::optional<JsonValue> value = codec_internal::Member(spec, "renewTime");
  if (!value.has_value()) return absl::OkStatus();
  const PathSegment field = at.Field("renewTime");
  std::string_view text;
  if (!value->GetString(&text)) {
    return codec_internal::TypeError(*value, field, "string");
  }
  absl::Time renewed;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, Sv(text), &renewed, &error)) {
    return codec_internal::FieldError(
        0, field,
        absl::StrCat("invalid RFC 3339 time \"", Sv(text), "\": ", error));
  }
  state->renewed = renewed;
  return absl::OkStatus();
}

absl::Status DecodeSpec(const JsonValue& spec, const PathSegment& at,
                        LeaseState* state) {
  absl::Status status = codec_internal::ExpectObject(spec, at);
  std::string_view holder;
  if (status.ok()) {
    status =
        codec_internal::OptionalString(spec, at, "holderIdentity", &holder);
  }
  if (status.ok()) status = DecodeRenewTime(spec, at, state);
  if (status.ok()) {
    status = codec_internal::OptionalInt64(spec, at, "leaseDurationSeconds",
                                           &state->duration_seconds);
  }
  state->holder = std::string(holder);
  return status;
}

}  // namespace

absl::StatusOr<LeaseState> DecodeLease(simdjson::dom::element lease,
                                       std::string_view path) {
  const PathSegment root = PathSegment::Root(path);
  const JsonValue value(lease);
  if (absl::Status status = codec_internal::ExpectObject(value, root);
      !status.ok()) {
    return status;
  }
  LeaseState state;
  // No spec: nobody holds it.
  std::optional<JsonValue> spec = codec_internal::Member(value, "spec");
  if (!spec.has_value()) return state;
  absl::Status status = DecodeSpec(*spec, root.Field("spec"), &state);
  if (!status.ok()) return status;
  return state;
}

absl::StatusOr<std::optional<LeaseState>> DecodeLeaseList(
    std::string_view body) {
  simdjson::dom::parser parser;
  absl::StatusOr<simdjson::dom::element> root =
      codec_internal::ParseJson(parser, body);
  if (!root.ok()) return root.status();
  absl::StatusOr<std::optional<simdjson::dom::array>> items =
      codec_internal::ListItems(*root, PathSegment::Root("LeaseList"));
  if (!items.ok()) return items.status();
  std::optional<LeaseState> last;
  if (!items->has_value()) return last;
  size_t index = 0;
  for (simdjson::dom::element item : **items) {
    const std::string path = absl::StrCat("LeaseList.items[", index++, "]");
    absl::StatusOr<LeaseState> state = DecodeLease(item, path);
    if (!state.ok()) return state.status();
    last = *std::move(state);
  }
  return last;
}

}  // namespace gpusched
