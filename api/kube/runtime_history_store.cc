#include "api/kube/runtime_history_store.h"

#include <optional>
#include <utility>

#include "api/codec/runtime_history_json.h"
#include "api/kube/sync_util.h"
#include "spdlog/spdlog.h"

namespace gpusched::kube {

RuntimeHistoryStore::RuntimeHistoryStore(KubeClient& client, RuntimeLog& log,
                                         RuntimeHistoryStoreOptions options)
    : log_(log),
      options_(std::move(options)),
      document_(client, {.namespace_name = options_.namespace_name,
                         .name = options_.name,
                         .key = kRuntimeHistoryKey}) {}

RuntimeHistoryStore::~RuntimeHistoryStore() { Stop(); }

void RuntimeHistoryStore::Start() {
  thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
}

void RuntimeHistoryStore::Stop() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  thread_.join();
}

absl::Status RuntimeHistoryStore::Load(std::stop_token stop) {
  absl::StatusOr<std::optional<std::string>> text = document_.Read(stop);
  if (!text.ok()) return text.status();
  if (text->has_value()) {
    absl::StatusOr<std::vector<RuntimeLog::Entry>> entries =
        DecodeRuntimeHistory(**text);
    // A history that cannot be read is started afresh (and overwritten),
    // saying why: it only sharpens forecasts.
    if (!entries.ok()) {
      spdlog::warn("runtime history {} ignored: {}", document_.Name(),
                   entries.status().ToString());
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
  absl::Status written =
      document_.Write(EncodeRuntimeHistory(log_.Entries()), stop);
  if (!written.ok()) return written;
  saved_version_ = version;
  return absl::OkStatus();
}

void RuntimeHistoryStore::Run(std::stop_token stop) {
  Backoff backoff(options_.initial_backoff, options_.max_backoff);
  while (!stop.stop_requested()) {
    absl::Status loaded = Load(stop);
    if (loaded.ok()) break;
    spdlog::warn("runtime history {}: {}", document_.Name(), loaded.ToString());
    if (!SleepFor(backoff.Next(), stop)) return;
  }
  while (SleepFor(options_.interval, stop)) {
    if (absl::Status s = SaveIfChanged(stop); !s.ok()) {
      spdlog::warn("saving runtime history {}: {}", document_.Name(),
                   s.ToString());
    }
  }
  // Stopping: what was learnt since the last save is kept too.
  if (absl::Status s = SaveIfChanged(); !s.ok()) {
    spdlog::warn("saving runtime history {}: {}", document_.Name(),
                 s.ToString());
  }
}

}  // namespace gpusched::kube
