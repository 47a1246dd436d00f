#include "api/server/admission_review.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kReviewApiVersion = "admission.k8s.io/v1";
constexpr std::string_view kReviewKind = "AdmissionReview";

absl::Status Invalid(std::string_view field, std::string_view problem) {
  return absl::InvalidArgumentError(
      absl::StrCat("AdmissionReview ", Sv(field), ": ", Sv(problem)));
}

// The member `key` of `object` if it is a string, else "".
std::string StringField(const Json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// The review as JSON, with apiVersion, kind, request and request.uid checked.
absl::StatusOr<Json> ParseReview(std::string_view body, size_t limit) {
  if (body.size() > limit) {
    return Invalid("body", absl::StrCat(body.size(),
                                        " bytes, over the limit of ", limit));
  }
  Json review;
  try {
    review = Json::parse(body);
  } catch (const Json::parse_error& e) {
    return Invalid("body", absl::StrCat("not JSON (at byte ", e.byte, ")"));
  } catch (const Json::exception& e) {
    // Not only parse errors: a number like 1e999 is out_of_range (found by
    // tests/fuzz/admission_review_fuzz; it escaped and aborted the server).
    return Invalid("body", absl::StrCat("not JSON (", e.what(), ")"));
  }
  if (!review.is_object()) return Invalid("body", "not a JSON object");
  std::string api_version = StringField(review, "apiVersion");
  std::string kind = StringField(review, "kind");
  if (api_version != kReviewApiVersion || kind != kReviewKind) {
    return Invalid("apiVersion/kind",
                   absl::StrCat("want admission.k8s.io/v1 AdmissionReview, "
                                "got \"", api_version, "\" \"", kind, "\""));
  }
  auto request = review.find("request");
  if (request == review.end() || !request->is_object()) {
    return Invalid("request", "missing");
  }
  if (StringField(*request, "uid").empty()) {
    return Invalid("request.uid", "missing");
  }
  return review;
}

bool IsPodCreate(const Json& request) {
  const Json kind = request.value("kind", Json::object());
  return StringField(request, "operation") == "CREATE" && kind.is_object() &&
         StringField(kind, "group").empty() &&
         StringField(kind, "kind") == "Pod" &&
         StringField(request, "subResource").empty();
}

// "namespace/name", or "namespace/generateName*" for a name the API server
// has not made yet.
std::string PodForLogs(const Json& request, const Json& pod) {
  std::string name = StringField(request, "name");
  if (name.empty()) {
    const Json metadata = pod.value("metadata", Json::object());
    if (metadata.is_object()) {
      name = absl::StrCat(StringField(metadata, "generateName"), "*");
    }
  }
  return absl::StrCat(StringField(request, "namespace"), "/", name);
}

// What `manages` needs of the reviewed pod: where it is and its labels and
// annotations (non-string values, invalid in a pod, are skipped).
Pod PodMetaOf(const Json& request, const Json& pod) {
  Pod out;
  out.meta.namespace_name = StringField(request, "namespace");
  out.meta.name = StringField(request, "name");
  const Json metadata = pod.value("metadata", Json::object());
  if (!metadata.is_object()) return out;
  for (auto [field, into] : {std::pair{"labels", &out.meta.labels},
                             std::pair{"annotations", &out.meta.annotations}}) {
    const Json map = metadata.value(field, Json::object());
    if (!map.is_object()) continue;
    for (const auto& [key, value] : map.items()) {
      if (value.is_string()) (*into)[key] = value.get<std::string>();
    }
  }
  return out;
}

// The JSONPatch that adds the gate to `gates` (spec.schedulingGates), or ""
// when it is there already. An absent list is created whole: "add" to
// /spec/schedulingGates/- needs the list to exist.
absl::StatusOr<std::string> GatePatch(const Json& gates) {
  const Json gate = {{"name", kAdmissionGateName}};
  if (gates.is_null()) {
    return Json::array({{{"op", "add"},
                         {"path", "/spec/schedulingGates"},
                         {"value", Json::array({gate})}}})
        .dump();
  }
  if (!gates.is_array()) {
    return Invalid("request.object.spec.schedulingGates", "not a list");
  }
  const bool present = std::any_of(gates.begin(), gates.end(), [](auto& g) {
    return g.is_object() && StringField(g, "name") == kAdmissionGateName;
  });
  if (present) return std::string();
  return Json::array({{{"op", "add"},
                       {"path", "/spec/schedulingGates/-"},
                       {"value", gate}}})
      .dump();
}

}  // namespace

absl::StatusOr<AdmissionDecision> DecidePodGating(
    std::string_view body, const AdmissionWebhookOptions& options) {
  absl::StatusOr<Json> review = ParseReview(body, options.body_limit_bytes);
  if (!review.ok()) return review.status();
  const Json& request = (*review)["request"];
  AdmissionDecision decision{.uid = StringField(request, "uid")};
  if (!IsPodCreate(request)) return decision;
  auto pod = request.find("object");
  if (pod == request.end() || !pod->is_object()) {
    return Invalid("request.object", "missing for a Pod CREATE");
  }
  decision.pod = PodForLogs(request, *pod);
  const Json spec = pod->value("spec", Json::object());
  if (!spec.is_object()) return Invalid("request.object.spec", "not an object");
  if (StringField(spec, "schedulerName") != options.scheduler_name) {
    return decision;
  }
  if (options.manages && !options.manages(PodMetaOf(request, *pod))) {
    decision.gating = PodGating::kNotManaged;
    return decision;
  }
  absl::StatusOr<std::string> patch =
      GatePatch(spec.value("schedulingGates", Json()));
  if (!patch.ok()) return patch.status();
  decision.gating =
      patch->empty() ? PodGating::kAlreadyGated : PodGating::kGate;
  decision.patch = *std::move(patch);
  return decision;
}

std::string AdmissionResponseJson(const AdmissionDecision& decision) {
  Json response = {{"uid", decision.uid}, {"allowed", true}};
  if (decision.gating == PodGating::kGate) {
    response["patchType"] = "JSONPatch";
    response["patch"] = absl::Base64Escape(decision.patch);
  }
  return Json{{"apiVersion", kReviewApiVersion},
              {"kind", kReviewKind},
              {"response", std::move(response)}}
      .dump();
}

}  // namespace gpusched
