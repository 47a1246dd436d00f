#include "api/kube/runtime_history_store.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/codec/runtime_history_json.h"
#include "api/kube/sync_util.h"
#include "spdlog/spdlog.h"

namespace gpusched::kube {

RuntimeHistoryStore::RuntimeHistoryStore(KubeClient& client, RuntimeLog& log,
                                         RuntimeHistoryStoreOptions options)
    : client_(client), log_(log), options_(std::move(options)) {}

RuntimeHistoryStore::~RuntimeHistoryStore() { Stop(); }

void RuntimeHistoryStore::Start() {
  thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
}

void RuntimeHistoryStore::Stop() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  thread_.join();
}

std::string RuntimeHistoryStore::Path() const {
  return absl::StrCat("/api/v1/namespaces/", options_.namespace_name,
                      "/configmaps/", options_.name);
}

absl::Status RuntimeHistoryStore::Load(std::stop_token stop) {
  absl::StatusOr<std::string> body = client_.Get(Path(), {.stop = stop});
  if (!body.ok() && absl::IsNotFound(body.status())) {
    saved_version_ = log_.version();
    return absl::OkStatus();  // none yet: the first save creates it
  }
  if (!body.ok()) return body.status();
  absl::StatusOr<std::optional<std::string>> text =
      RuntimeHistoryOfConfigMap(*body);
  if (!text.ok()) return text.status();
  exists_ = true;
  if (text->has_value()) {
    absl::StatusOr<std::vector<RuntimeLog::Entry>> entries =
        DecodeRuntimeHistory(**text);
    // A history that cannot be read is started afresh (and overwritten),
    // saying why: it only sharpens forecasts.
    if (!entries.ok()) {
      spdlog::warn("runtime history {}/{} ignored: {}", options_.namespace_name,
                   options_.name, entries.status().ToString());
    } else {
      log_.Load(*std::move(entries));
    }
  }
  saved_version_ = log_.version();
  return absl::OkStatus();
}

absl::Status RuntimeHistoryStore::SaveIfChanged(std::stop_token stop) {
  const uint64_t version = log_.version();
  if (version == saved_version_) return absl::OkStatus();
  if (options_.deciding && !options_.deciding()) return absl::OkStatus();
  const std::string history = EncodeRuntimeHistory(log_.Entries());
  absl::StatusOr<std::string> written =
      exists_
          ? client_.Patch(Path(), EncodeRuntimeHistoryPatch(history),
                          {.stop = stop})
          : client_.Post(absl::StrCat("/api/v1/namespaces/",
                                      options_.namespace_name, "/configmaps"),
                         EncodeRuntimeHistoryConfigMap(options_.namespace_name,
                                                       options_.name, history),
                         {.stop = stop});
  if (!written.ok()) {
    // Deleted meanwhile, or created by the other replica: ask again.
    if (absl::IsNotFound(written.status())) exists_ = false;
    // 409: the other replica created it first.
    if (written.status().code() == absl::StatusCode::kAborted) exists_ = true;
    return written.status();
  }
  exists_ = true;
  saved_version_ = version;
  return absl::OkStatus();
}

void RuntimeHistoryStore::Run(std::stop_token stop) {
  Backoff backoff(options_.initial_backoff, options_.max_backoff);
  while (!stop.stop_requested()) {
    absl::Status loaded = Load(stop);
    if (loaded.ok()) break;
    spdlog::warn("runtime history {}/{}: {}", options_.namespace_name,
                 options_.name, loaded.ToString());
    if (!SleepFor(backoff.Next(), stop)) return;
  }
  while (SleepFor(options_.interval, stop)) {
    if (absl::Status s = SaveIfChanged(stop); !s.ok()) {
      spdlog::warn("saving runtime history {}/{}: {}", options_.namespace_name,
                   options_.name, s.ToString());
    }
  }
  // Stopping: what was learnt since the last save is kept too.
  if (absl::Status s = SaveIfChanged(); !s.ok()) {
    spdlog::warn("saving runtime history {}/{}: {}", options_.namespace_name,
                 options_.name, s.ToString());
  }
}

}  // namespace gpusched::kube
