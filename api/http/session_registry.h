// Tracks a server's live connections so that Shutdown can close the idle ones
// and wait for the busy ones. Internal to the http library; no Asio here.
#ifndef GPUSCHED_API_HTTP_SESSION_REGISTRY_H_
#define GPUSCHED_API_HTTP_SESSION_REGISTRY_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace gpusched::http::internal {

class Session {
 public:
  virtual ~Session() = default;
  // Asks the session to close its connection unless a handler is running or
  // its response is being written. Thread-safe; acts asynchronously.
  virtual void StopIfIdle() = 0;
};

class SessionRegistry {
 public:
  // Returns false once StopAll has been called: the caller drops the
  // connection instead of serving it.
  bool Add(const std::shared_ptr<Session>& session);
  // Called by a session as its last act.
  void Remove(const Session* session);

  // Marks the server as stopping and asks every session to stop when idle.
  // Busy sessions notice `stopping()` after writing their response.
  void StopAll();
  void WaitUntilEmpty();

  bool stopping() const { return stopping_.load(std::memory_order_acquire); }
  size_t size() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable empty_;
  // weak_ptr: the registry must not keep a finished session alive.
  std::unordered_map<const Session*, std::weak_ptr<Session>> sessions_;
  std::atomic<bool> stopping_{false};
};

}  // namespace gpusched::http::internal

#endif  // GPUSCHED_API_HTTP_SESSION_REGISTRY_H_
