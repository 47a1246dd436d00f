#include "policies/document_decoder.h"

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "policies/object_decoders.h"
#include "policies/value_parsers.h"
#include "policies/yaml_reader.h"
#include "scheduler/base/strings.h"

namespace gpusched::policy_internal {
namespace {

constexpr std::string_view kGpuschedApi = "gpusched.io/v1alpha1";
constexpr std::string_view kKueueV1beta1 = "kueue.x-k8s.io/v1beta1";
constexpr std::string_view kKueueV1beta2 = "kueue.x-k8s.io/v1beta2";
// Kueue served Cohort as v1alpha1 before it reached v1beta1.
constexpr std::string_view kKueueV1alpha1 = "kueue.x-k8s.io/v1alpha1";

constexpr std::array<std::string_view, 3> kKueueApis = {
    kGpuschedApi, kKueueV1beta1, kKueueV1beta2};
constexpr std::array<std::string_view, 4> kCohortApis = {
    kGpuschedApi, kKueueV1alpha1, kKueueV1beta1, kKueueV1beta2};
constexpr std::array<std::string_view, 1> kGpuschedApis = {kGpuschedApi};
// Kueue's manager configuration (controller_manager_config.yaml).
constexpr std::array<std::string_view, 2> kKueueConfigApis = {
    "config.kueue.x-k8s.io/v1beta1", "config.kueue.x-k8s.io/v1beta2"};

struct KindInfo {
  std::string_view name;
  Kind kind;
  bool namespaced;
  std::span<const std::string_view> api_versions;
  // Kueue's Configuration is a file, not an object: no metadata.name.
  bool named = true;
};

// Sorted by name: also the "supported values" list of `kind`.
constexpr std::array<KindInfo, 10> kKinds = {{
    {"AdmissionCheck", Kind::kAdmissionCheck, false, kKueueApis},
    {"ClusterQueue", Kind::kClusterQueue, false, kKueueApis},
    {"Cohort", Kind::kCohort, false, kCohortApis},
    {"Configuration", Kind::kConfiguration, false, kKueueConfigApis, false},
    {"LocalQueue", Kind::kLocalQueue, true, kKueueApis},
    {"ProvisioningRequestConfig", Kind::kProvisioningRequestConfig, false,
     kKueueApis},
    {"ResourceFlavor", Kind::kResourceFlavor, false, kKueueApis},
    {"SchedulerConfig", Kind::kSchedulerConfig, false, kGpuschedApis},
    {"Topology", Kind::kTopology, false, kKueueApis},
    {"WorkloadPriorityClass", Kind::kWorkloadPriorityClass, false, kKueueApis},
}};

// metadata fields Kubernetes tools write (kubectl get -o yaml, kustomize,
// Helm); accepted and dropped, as the API server would keep them apart from
// the spec.
constexpr std::string_view kIgnoredMetadata[] = {
    "labels",
    "annotations",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "finalizers",
    "ownerReferences",
    "managedFields",
    "generateName",
    "selfLink",
};

const KindInfo* ReadKind(DocContext& doc, MapReader& top) {
  const Value value = top.Get("kind");
  if (!RequirePresent(doc, value)) return nullptr;
  std::optional<std::string> text = ReadString(doc, value);
  if (!text) return nullptr;
  for (const KindInfo& info : kKinds) {
    if (info.name == *text) return &info;
  }
  std::array<std::string_view, kKinds.size()> names;
  for (size_t i = 0; i < kKinds.size(); ++i) names[i] = kKinds[i].name;
  doc.Error(value.line, value.path, UnsupportedValue(*text, names));
  return nullptr;
}

std::string Subject(const KindInfo& kind, std::string_view key, int number) {
  if (key.empty()) {
    return absl::StrCat(Sv(kind.name), " (document ", number, ")");
  }
  return absl::StrCat(Sv(kind.name), " ", Quoted(key));
}

// Checks a name already read as `text` against `rule`; false if reported.
bool CheckName(DocContext& doc, const Value& value,
               const std::optional<std::string>& text,
               std::string (*rule)(std::string_view), std::string_view why) {
  if (!RequirePresent(doc, value, why)) return false;
  if (!text) return false;  // not a string: already reported
  const std::string error = rule(*text);
  if (error.empty()) return true;
  doc.Error(value.line, value.path, InvalidValue(*text, error));
  return false;
}

// Reads metadata, names the document after it and fills origin's key.
// Returns the namespace ("" for cluster-scoped kinds).
std::string ReadMetadata(DocContext& doc, MapReader& top, const KindInfo& kind,
                         int number, Origin* origin) {
  if (!kind.named) {
    // Kueue reads its file without metadata; a ConfigMap's copy may have
    // some, which says nothing to the scheduler.
    top.Ignore("metadata");
    doc.set_subject(Subject(kind, "", number));
    return "";
  }
  MapReader meta(doc, top.Get("metadata"));
  const Value name = meta.Get("name");
  const std::optional<std::string> raw_name = ReadString(doc, name);
  Value ns;
  std::optional<std::string> namespace_name;
  if (kind.namespaced) {
    ns = meta.Get("namespace");
    namespace_name = ReadString(doc, ns);
  } else {
    // kustomize's namespace transformer sets it on custom kinds it does not
    // know to be cluster-scoped; the API server drops it, and so do we.
    meta.Ignore("namespace");
  }
  const std::string display =
      namespace_name ? absl::StrCat(*namespace_name, "/", raw_name.value_or(""))
                     : raw_name.value_or("");
  doc.set_subject(Subject(kind, raw_name ? display : "", number));
  origin->name_line = name.line;
  bool named = CheckName(doc, name, raw_name, DnsSubdomainError, {});
  if (kind.namespaced) {
    named = CheckName(doc, ns, namespace_name, DnsLabelError,
                      "a LocalQueue lives in a namespace") &&
            named;
  }
  if (named) origin->key = display;
  for (std::string_view key : kIgnoredMetadata) meta.Ignore(key);
  meta.Finish();
  return namespace_name.value_or("");
}

// The document's apiVersion, or "" when it is missing or not the kind's.
std::string ReadApiVersion(DocContext& doc, MapReader& top,
                           const KindInfo& kind) {
  const Value value = top.Get("apiVersion");
  if (!RequirePresent(doc, value)) return "";
  std::optional<std::string> text = ReadString(doc, value);
  if (!text) return "";
  for (std::string_view api : kind.api_versions) {
    if (api == *text) return *text;
  }
  doc.Error(value.line, value.path, UnsupportedValue(*text, kind.api_versions));
  return "";
}

void DecodeBody(DocContext& doc, MapReader& top, const KindInfo& kind,
                Origin origin, std::string namespace_name, PolicyDraft* draft) {
  switch (kind.kind) {
    case Kind::kResourceFlavor:
      return DecodeResourceFlavor(doc, top, std::move(origin), draft);
    case Kind::kClusterQueue:
      return DecodeClusterQueue(doc, top, std::move(origin), draft);
    case Kind::kLocalQueue:
      return DecodeLocalQueue(doc, top, std::move(origin),
                              std::move(namespace_name), draft);
    case Kind::kCohort:
      return DecodeCohort(doc, top, std::move(origin), draft);
    case Kind::kWorkloadPriorityClass:
      return DecodeWorkloadPriorityClass(doc, top, std::move(origin), draft);
    case Kind::kTopology:
      return DecodeTopology(doc, top, std::move(origin), draft);
    case Kind::kSchedulerConfig:
      return DecodeSchedulerConfig(doc, top, std::move(origin), draft);
    case Kind::kConfiguration:
      return DecodeKueueConfiguration(doc, top, std::move(origin), draft);
    case Kind::kAdmissionCheck:
      return DecodeAdmissionCheck(doc, top, std::move(origin), draft);
    case Kind::kProvisioningRequestConfig:
      return DecodeProvisioningRequestConfig(doc, top, std::move(origin),
                                             draft);
  }
}

}  // namespace

std::string_view KindName(Kind kind) {
  for (const KindInfo& info : kKinds) {
    if (info.kind == kind) return info.name;
  }
  return "";
}

void DecodeDocument(const YAML::Node& root, int number, const SourceFile& file,
                    Diagnostics* diagnostics, PolicyDraft* draft) {
  const Value value = RootValue(root);
  if (!value.present()) return;
  DocContext doc(file, diagnostics, absl::StrCat("document ", number));
  MapReader top(doc, value);
  if (!root.IsMap()) return;
  const KindInfo* kind = ReadKind(doc, top);
  // Without a kind the other fields cannot be judged; one error is enough.
  if (kind == nullptr) return;
  Origin origin{.file = file, .line = value.line};
  std::string namespace_name = ReadMetadata(doc, top, *kind, number, &origin);
  origin.subject = doc.subject();
  origin.api_version = ReadApiVersion(doc, top, *kind);
  DecodeBody(doc, top, *kind, std::move(origin), std::move(namespace_name),
             draft);
  top.Finish();
}

}  // namespace gpusched::policy_internal
