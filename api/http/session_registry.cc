#include "api/http/session_registry.h"

#include <vector>

namespace gpusched::http::internal {

bool SessionRegistry::Add(const std::shared_ptr<Session>& session) {
  std::lock_guard lock(mu_);
  // Checked under the lock so that StopAll sees every session it admits.
  if (stopping()) return false;
  sessions_.emplace(session.get(), session);
  return true;
}

void SessionRegistry::Remove(const Session* session) {
  std::lock_guard lock(mu_);
  sessions_.erase(session);
  if (sessions_.empty()) empty_.notify_all();
}

void SessionRegistry::StopAll() {
  std::vector<std::shared_ptr<Session>> live;
  {
    std::lock_guard lock(mu_);
    stopping_.store(true, std::memory_order_release);
    for (const auto& [key, weak] : sessions_) {
      if (auto session = weak.lock()) live.push_back(std::move(session));
    }
  }
  // Outside the lock: StopIfIdle posts work that may call Remove.
  for (const auto& session : live) session->StopIfIdle();
}

void SessionRegistry::WaitUntilEmpty() {
  std::unique_lock lock(mu_);
  empty_.wait(lock, [this] { return sessions_.empty(); });
}

size_t SessionRegistry::size() const {
  std::lock_guard lock(mu_);
  return sessions_.size();
}

}  // namespace gpusched::http::internal
