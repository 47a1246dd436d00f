// A document gpusched keeps in one entry of a ConfigMap it owns (the
// runtime history, the requeue state): read by name, written as a merge
// patch of that entry once the ConfigMap exists, else created. Which of the
// two a write takes follows what the last read or write found, so a
// ConfigMap deleted meanwhile, or created by another replica first, costs
// one failed write and the next one succeeds.
#ifndef GPUSCHED_API_KUBE_CONFIGMAP_DOCUMENT_H_
#define GPUSCHED_API_KUBE_CONFIGMAP_DOCUMENT_H_

#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/kube/kube_client.h"

namespace gpusched::kube {

struct ConfigMapDocumentOptions {
  std::string namespace_name;
  std::string name;
  std::string key;  // the data entry, e.g. "runtimes.json"
};

// The client must outlive it. Not thread-safe: one thread reads and writes.
class ConfigMapDocument {
 public:
  ConfigMapDocument(KubeClient& client, ConfigMapDocumentOptions options);

  // data[key]; none when the ConfigMap or the entry does not exist.
  absl::StatusOr<std::optional<std::string>> Read(std::stop_token stop = {});
  absl::Status Write(std::string_view text, std::stop_token stop = {});
  // "namespace/name", for logs.
  std::string Name() const;

 private:
  std::string Path() const;

  KubeClient& client_;
  const ConfigMapDocumentOptions options_;
  bool exists_ = false;  // the ConfigMap was read or created
};

}  // namespace gpusched::kube

#endif  // GPUSCHED_API_KUBE_CONFIGMAP_DOCUMENT_H_
