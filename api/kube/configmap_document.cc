#include "api/kube/configmap_document.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "api/codec/configmap_data_json.h"

namespace gpusched::kube {

ConfigMapDocument::ConfigMapDocument(KubeClient& client,
                                     ConfigMapDocumentOptions options)
    : client_(client), options_(std::move(options)) {}

std::string ConfigMapDocument::Name() const {
  return absl::StrCat(options_.namespace_name, "/", options_.name);
}

std::string ConfigMapDocument::Path() const {
  return absl::StrCat("/api/v1/namespaces/", options_.namespace_name,
                      "/configmaps/", options_.name);
}

absl::StatusOr<std::optional<std::string>> ConfigMapDocument::Read(
    std::stop_token stop) {
  absl::StatusOr<std::string> body = client_.Get(Path(), {.stop = stop});
  if (!body.ok() && absl::IsNotFound(body.status())) {
    exists_ = false;
    return std::optional<std::string>();  // none yet: a write creates it
  }
  if (!body.ok()) return body.status();
  exists_ = true;
  return ConfigMapDataOf(*body, options_.key);
}

absl::Status ConfigMapDocument::Write(std::string_view text,
                                      std::stop_token stop) {
  absl::StatusOr<std::string> written =
      exists_
          ? client_.Patch(Path(), EncodeConfigMapDataPatch(options_.key, text),
                          {.stop = stop})
          : client_.Post(
                absl::StrCat("/api/v1/namespaces/", options_.namespace_name,
                             "/configmaps"),
                EncodeConfigMapWithData(options_.namespace_name, options_.name,
                                        options_.key, text),
                {.stop = stop});
  if (!written.ok()) {
    // Deleted meanwhile, or created by the other replica: ask again.
    if (absl::IsNotFound(written.status())) exists_ = false;
    // 409: the other replica created it first.
    if (written.status().code() == absl::StatusCode::kAborted) exists_ = true;
    return written.status();
  }
  exists_ = true;
  return absl::OkStatus();
}

}  // namespace gpusched::kube
