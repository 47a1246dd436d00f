#include "api/codec/admission_review_json.h"

#include <optional>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "api/codec/json_fields.h"
#include "api/codec/json_writer.h"
#include "api/codec/pod_admission_state.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace {

using simdjson::dom::element;

constexpr std::string_view kReviewApiVersion = "admission.k8s.io/v1";
constexpr std::string_view kReviewKind = "AdmissionReview";

absl::Status Invalid(std::string_view field, std::string_view problem) {
  return absl::InvalidArgumentError(
      absl::StrCat("AdmissionReview ", Sv(field), ": ", Sv(problem)));
}

// The member `key` of `object` if it is a string, else "": the review's
// optional fields are read leniently, as the API server writes them.
std::string_view StringOf(element object, std::string_view key) {
  std::string_view text;
  if (object[key].get_string().get(text)) return {};
  return text;
}

// The member `key` of `object` if it is an object.
std::optional<element> ObjectOf(element object, std::string_view key) {
  element child;
  if (object[key].get(child) || !child.is_object()) return std::nullopt;
  return child;
}

// The review, with apiVersion, kind, request and request.uid checked.
absl::StatusOr<element> ParseReview(simdjson::dom::parser& parser,
                                    std::string_view body, size_t limit) {
  if (body.size() > limit) {
    return Invalid(
        "body", absl::StrCat(body.size(), " bytes, over the limit of ", limit));
  }
  absl::StatusOr<element> review = codec_internal::ParseJson(parser, body);
  if (!review.ok()) {
    return Invalid("body",
                   absl::StrCat("not JSON (", review.status().message(), ")"));
  }
  if (!review->is_object()) return Invalid("body", "not a JSON object");
  const std::string_view api_version = StringOf(*review, "apiVersion");
  const std::string_view kind = StringOf(*review, "kind");
  if (api_version != kReviewApiVersion || kind != kReviewKind) {
    return Invalid("apiVersion/kind",
                   absl::StrCat("want admission.k8s.io/v1 AdmissionReview, "
                                "got \"",
                                Sv(api_version), "\" \"", Sv(kind), "\""));
  }
  std::optional<element> request = ObjectOf(*review, "request");
  if (!request.has_value()) return Invalid("request", "missing");
  if (StringOf(*request, "uid").empty()) {
    return Invalid("request.uid", "missing");
  }
  return *request;
}

bool IsPodCreate(element request) {
  std::optional<element> kind = ObjectOf(request, "kind");
  return StringOf(request, "operation") == "CREATE" && kind.has_value() &&
         StringOf(*kind, "group").empty() && StringOf(*kind, "kind") == "Pod" &&
         StringOf(request, "subResource").empty();
}

// Namespace, name, labels and annotations of the reviewed pod, and its
// name for logs ("namespace/generateName*" before the API server names it).
void ReadPodMeta(element request, element pod, AdmissionReviewRequest& out) {
  out.pod.meta.namespace_name = std::string(StringOf(request, "namespace"));
  out.pod.meta.name = std::string(StringOf(request, "name"));
  std::optional<element> metadata = ObjectOf(pod, "metadata");
  std::string name = out.pod.meta.name;
  if (name.empty() && metadata.has_value()) {
    name = absl::StrCat(Sv(StringOf(*metadata, "generateName")), "*");
  }
  out.pod_for_logs = absl::StrCat(out.pod.meta.namespace_name, "/", name);
  if (!metadata.has_value()) return;
  for (auto [field, into] :
       {std::pair{"labels", &out.pod.meta.labels},
        std::pair{"annotations", &out.pod.meta.annotations}}) {
    std::optional<element> map = ObjectOf(*metadata, field);
    if (!map.has_value()) continue;
    for (auto [key, value] : simdjson::dom::object(*map)) {
      std::string_view text;
      if (!value.get_string().get(text)) {
        (*into)[std::string(key)] = std::string(text);
      }
    }
  }
}

absl::StatusOr<GateListing> ReadGates(element spec, std::string_view gate) {
  element gates;
  if (spec["schedulingGates"].get(gates) || gates.is_null()) {
    return GateListing::kNoList;
  }
  if (!gates.is_array()) {
    return Invalid("request.object.spec.schedulingGates", "not a list");
  }
  for (element entry : gates.get_array()) {
    if (entry.is_object() && StringOf(entry, "name") == gate) {
      return GateListing::kWithGate;
    }
  }
  return GateListing::kWithoutGate;
}

// The scheduler, the native PodGroup (a gang key like the labels) and the
// gates of the pod's spec.
absl::Status ReadSpec(element spec, std::string_view gate,
                      AdmissionReviewRequest& out) {
  if (!spec.is_object()) return Invalid("request.object.spec", "not an object");
  out.scheduler_name = std::string(StringOf(spec, "schedulerName"));
  if (std::optional<element> group = ObjectOf(spec, "schedulingGroup")) {
    out.pod.pod_group_name = std::string(StringOf(*group, "podGroupName"));
  }
  absl::StatusOr<GateListing> gates = ReadGates(spec, gate);
  if (!gates.ok()) return gates.status();
  out.gates = *gates;
  return absl::OkStatus();
}

// The pod's part of a Pod CREATE review: request.object.
absl::Status ReadPod(element request, std::string_view gate,
                     AdmissionReviewRequest& out) {
  std::optional<element> pod = ObjectOf(request, "object");
  if (!pod.has_value()) {
    return Invalid("request.object", "missing for a Pod CREATE");
  }
  ReadPodMeta(request, *pod, out);
  element spec;
  if (!(*pod)["spec"].get(spec) && !spec.is_null()) {
    if (absl::Status read = ReadSpec(spec, gate, out); !read.ok()) return read;
  }
  // What decides whether the queueing core holds it (its queue, its gang).
  ReadPodAdmissionState(out.pod);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<AdmissionReviewRequest> DecodeAdmissionReview(
    std::string_view body, size_t limit_bytes, std::string_view gate) {
  simdjson::dom::parser parser;
  absl::StatusOr<element> request = ParseReview(parser, body, limit_bytes);
  if (!request.ok()) return request.status();
  AdmissionReviewRequest review{.uid = std::string(StringOf(*request, "uid"))};
  review.pod_create = IsPodCreate(*request);
  if (!review.pod_create) return review;
  absl::Status read = ReadPod(*request, gate, review);
  if (!read.ok()) return read;
  return review;
}

namespace {

// One "add" of `gate`: the list whole when there is none ("add" to
// /spec/schedulingGates/- needs the list to exist), else appended. Keys in
// the order nlohmann::json wrote them (sorted), so that the bytes on the
// wire did not change when the writer did.
void WriteAddGateOp(JsonWriter& w, GateListing listing, std::string_view gate) {
  w.Raw(R"({"op":"add","path":)");
  if (listing == GateListing::kNoList) {
    w.String("/spec/schedulingGates").Raw(R"(,"value":[{"name":)");
    w.String(gate).Raw("}]}");
  } else {
    w.String("/spec/schedulingGates/-").Raw(R"(,"value":{"name":)");
    w.String(gate).Raw("}}");
  }
}

}  // namespace

std::string EncodeAddGatePatch(GateListing listing, std::string_view gate) {
  JsonWriter w;
  w.Raw("[");
  WriteAddGateOp(w, listing, gate);
  w.Raw("]");
  return w.Take();
}

std::string EncodeAdoptPatch(GateListing listing, std::string_view gate,
                             std::string_view scheduler_name) {
  JsonWriter w;
  // "add" sets a member that exists as well as one that does not.
  w.Raw(R"([{"op":"add","path":"/spec/schedulerName","value":)");
  w.String(scheduler_name).Raw("}");
  if (listing != GateListing::kWithGate) {
    w.Raw(",");
    WriteAddGateOp(w, listing, gate);
  }
  w.Raw("]");
  return w.Take();
}

std::string EncodeAdmissionResponse(std::string_view uid,
                                    std::string_view json_patch) {
  JsonWriter w;
  w.Raw("{").Key("apiVersion").String(kReviewApiVersion);
  w.Raw(",").Key("kind").String(kReviewKind);
  w.Raw(",").Key("response").Raw("{").Key("allowed").Bool(true);
  if (!json_patch.empty()) {
    w.Raw(",").Key("patch").String(absl::Base64Escape(Sv(json_patch)));
    w.Raw(",").Key("patchType").String("JSONPatch");
  }
  w.Raw(",").Key("uid").String(uid).Raw("}}");
  return w.Take();
}

}  // namespace gpusched
