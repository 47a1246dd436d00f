#include "api/kube/event_recorder.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "scheduler/base/strings.h"
#include "spdlog/spdlog.h"

namespace gpusched::kube {
namespace {

using SystemClock = std::chrono::system_clock;

// The dedupe key: the uid, or the object's name when a caller has none.
std::string KeyOf(const EventSubject& subject) {
  if (!subject.uid.empty()) return subject.uid;
  return absl::StrCat(subject.kind, "/", subject.namespace_name, "/",
                      subject.name);
}

}  // namespace

EventRecorder::EventRecorder(KubeClient& client, EventRecorderOptions options)
    : client_(client), options_(std::move(options)) {
  worker_ = std::jthread([this](std::stop_token stop) { Run(stop); });
}

EventRecorder::~EventRecorder() { Stop(); }

void EventRecorder::Record(EventRecord event) {
  const std::string key = KeyOf(event.regarding);
  std::lock_guard lock(mu_);
  if (stopped_) {
    ++counters_.dropped;
  } else if (IsRepeatLocked(key, event.reason)) {
    ++counters_.deduplicated;
  } else if (queue_.size() >= options_.queue_capacity) {
    // Not remembered: the next report of this code gets another chance.
    ++counters_.dropped;
  } else {
    RememberLocked(key, event.reason);
    queue_.push_back(std::move(event));
    wake_.notify_one();
  }
}

void EventRecorder::Forget(std::string_view uid) {
  std::lock_guard lock(mu_);
  auto it = last_.find(std::string(uid));
  if (it == last_.end()) return;
  order_.erase(it->second.position);
  last_.erase(it);
}

void EventRecorder::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    counters_.dropped += queue_.size();
    queue_.clear();
  }
  // Wakes the worker's wait and cancels its write in flight (the client
  // closes the socket on stop), so the join takes milliseconds.
  worker_.request_stop();
  if (worker_.joinable()) worker_.join();
}

EventRecorderCounters EventRecorder::counters() const {
  std::lock_guard lock(mu_);
  return counters_;
}

bool EventRecorder::IsRepeatLocked(const std::string& key,
                                   const std::string& reason) {
  auto it = last_.find(key);
  return it != last_.end() && it->second.reason == reason;
}

void EventRecorder::RememberLocked(const std::string& key,
                                   const std::string& reason) {
  auto it = last_.find(key);
  if (it != last_.end()) order_.erase(it->second.position);
  order_.push_back(key);
  last_[key] = Last{reason, std::prev(order_.end())};
  if (last_.size() > options_.dedupe_capacity) {
    last_.erase(order_.front());
    order_.pop_front();
  }
}

// Undoes RememberLocked for a write that failed, unless a newer code has
// replaced it meanwhile: the next report of the code is written again.
void EventRecorder::ForgetLocked(const std::string& key,
                                 const std::string& reason) {
  auto it = last_.find(key);
  if (it == last_.end() || it->second.reason != reason) return;
  order_.erase(it->second.position);
  last_.erase(it);
}

void EventRecorder::Run(std::stop_token stop) {
  while (true) {
    EventRecord event;
    {
      std::unique_lock lock(mu_);
      if (!wake_.wait(lock, stop, [this] { return !queue_.empty(); })) {
        return;  // stop requested
      }
      event = std::move(queue_.front());
      queue_.pop_front();
    }
    Write(event, stop);
  }
}

void EventRecorder::Write(const EventRecord& event, std::stop_token stop) {
  const std::string path =
      absl::StrFormat("/apis/events.k8s.io/v1/namespaces/%s/events",
                      EventNamespace(event.regarding));
  const SystemClock::time_point now =
      options_.now ? options_.now() : SystemClock::now();
  const CallOptions call{
      .stop = stop,
      .deadline = std::chrono::steady_clock::now() + options_.write_timeout};
  absl::StatusOr<std::string> posted = client_.Post(
      path, EncodeEvent(event, options_.reporting_instance, now), call);
  std::lock_guard lock(mu_);
  if (posted.ok()) {
    ++counters_.written;
  } else if (stop.stop_requested()) {
    ++counters_.dropped;
  } else {
    ++counters_.failed;
    ForgetLocked(KeyOf(event.regarding), event.reason);
    spdlog::warn("kube: event reason={} object={}/{} not written: {}",
                 event.reason, event.regarding.namespace_name,
                 event.regarding.name, Message(posted.status()));
  }
}

}  // namespace gpusched::kube
