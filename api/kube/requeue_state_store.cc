#include "api/kube/requeue_state_store.h"

#include <optional>
#include <utility>

#include "api/codec/requeue_state_json.h"
#include "api/kube/sync_util.h"
#include "spdlog/spdlog.h"

namespace gpusched::kube {

RequeueStateStore::RequeueStateStore(KubeClient& client,
                                     RequeueStateStoreOptions options)
    : options_(std::move(options)),
      document_(client, {.namespace_name = options_.namespace_name,
                         .name = options_.name,
                         .key = kRequeueStateKey}) {}

RequeueStateStore::~RequeueStateStore() { Stop(); }

void RequeueStateStore::Start() {
  thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
}

void RequeueStateStore::Stop() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  thread_.join();
}

bool RequeueStateStore::Deciding() const {
  return !options_.deciding || options_.deciding();
}

absl::Status RequeueStateStore::Read(bool initial, std::stop_token stop) {
  absl::StatusOr<std::optional<std::string>> text = document_.Read(stop);
  // A ConfigMap that is not one (its data not an object, the entry not a
  // string) is no state, said once per read, not a reason to never start.
  if (!text.ok() && absl::IsInvalidArgument(text.status())) {
    spdlog::warn("requeue state {} ignored: {}", document_.Name(),
                 text.status().ToString());
    text = std::optional<std::string>();
  }
  if (!text.ok()) return text.status();
  std::vector<RequeueRecord> records;
  if (text->has_value()) {
    absl::StatusOr<std::vector<RequeueRecord>> decoded =
        DecodeRequeueState(**text);
    // A state that cannot be read is started afresh (and overwritten at
    // the next change), saying why: counts start at 0 again.
    if (decoded.ok()) {
      records = *std::move(decoded);
    } else {
      spdlog::warn("requeue state {} ignored: {}", document_.Name(),
                   decoded.status().ToString());
    }
  }
  saved_ = text->value_or("");
  if (options_.loaded) options_.loaded(std::move(records), initial);
  return absl::OkStatus();
}

absl::Status RequeueStateStore::SaveIfChanged(std::stop_token stop) {
  if (!Deciding() || !options_.current) return absl::OkStatus();
  std::shared_ptr<const std::vector<RequeueRecord>> records =
      options_.current();
  if (records == nullptr) return absl::OkStatus();  // no deciding pass yet
  std::string text = EncodeRequeueState(*records);
  if (text == saved_ || (saved_.empty() && records->empty())) {
    return absl::OkStatus();
  }
  if (absl::Status s = document_.Write(text, stop); !s.ok()) return s;
  saved_ = std::move(text);
  return absl::OkStatus();
}

// Reads until the first read succeeds. A replica not allowed to read it
// (its RBAC predates --requeue-state) decides without it, saying so, rather
// than never: the state only carries counts and backoffs over a restart.
void RequeueStateStore::ReadFirst(std::stop_token stop) {
  Backoff backoff(options_.initial_backoff, options_.max_backoff);
  while (!stop.stop_requested()) {
    absl::Status read = Read(/*initial=*/true, stop);
    if (read.ok()) return;
    if (absl::IsPermissionDenied(read)) {
      spdlog::error(
          "requeue state {} not kept (requeue counts, backoffs and "
          "deactivations start afresh): {}",
          document_.Name(), read.ToString());
      if (options_.loaded) options_.loaded({}, /*initial=*/true);
      return;
    }
    spdlog::warn("requeue state {}: {}", document_.Name(), read.ToString());
    if (!SleepFor(backoff.Next(), stop)) return;
  }
}

void RequeueStateStore::Run(std::stop_token stop) {
  ReadFirst(stop);
  Backoff failing(options_.save_interval, options_.max_backoff);
  auto next_try = std::chrono::steady_clock::now();
  auto last_read = next_try;
  while (SleepFor(options_.save_interval, stop)) {
    const auto now = std::chrono::steady_clock::now();
    if (now < next_try) continue;
    absl::Status s = absl::OkStatus();
    if (Deciding()) {
      s = SaveIfChanged(stop);
    } else if (now - last_read >= options_.read_interval) {
      last_read = now;
      s = Read(/*initial=*/false, stop);
    }
    if (s.ok()) {
      failing.Reset();
      continue;
    }
    spdlog::warn("requeue state {}: {}", document_.Name(), s.ToString());
    next_try = now + failing.Next();
  }
  // Stopping: what changed since the last save is kept too.
  if (absl::Status s = SaveIfChanged(); !s.ok()) {
    spdlog::warn("saving requeue state {}: {}", document_.Name(), s.ToString());
  }
}

}  // namespace gpusched::kube
