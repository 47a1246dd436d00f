#include "api/kube/exec_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace gpusched::kube::internal {
namespace {

using Clock = std::chrono::steady_clock;
using Millis = std::chrono::milliseconds;

// Owns a file descriptor; -1 when closed.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&&) = delete;
  ~Fd() { Reset(); }
  int get() const { return fd_; }
  void Reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

struct Pipe {
  Fd read, write;
};

// Close-on-exec, so that no other process spawned meanwhile holds a write
// end open (which would keep our reads from ever seeing the end).
absl::StatusOr<Pipe> MakePipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return absl::ErrnoToStatus(errno, "pipe");
  return Pipe{Fd(fds[0]), Fd(fds[1])};
}

// posix_spawn's settings, released when done.
struct SpawnSettings {
  SpawnSettings() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }
  ~SpawnSettings() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
};

// stdin from /dev/null (a plugin must not wait for input) unless a
// descriptor is lent, stdout and stderr to the pipes. A program inherits the
// signal mask and ignored signals across exec; a thread of ours may block
// SIGTERM or ignore SIGPIPE, so both go back to the defaults. Its own
// process group lets a timeout kill the whole of a plugin (a script and what
// it started); one lent a terminal stays in ours (ProcessSpec::stdin_fd).
absl::Status Configure(SpawnSettings& s, const ProcessSpec& spec, int out_fd,
                       int err_fd) {
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
    sigaddset(&defaults, sig);
  }
  const bool own_group = spec.stdin_fd < 0;
  int rc = own_group ? posix_spawn_file_actions_addopen(
                           &s.actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
                     : posix_spawn_file_actions_adddup2(
                           &s.actions, spec.stdin_fd, STDIN_FILENO);
  if (rc == 0) {
    rc = posix_spawn_file_actions_adddup2(&s.actions, out_fd, STDOUT_FILENO);
  }
  if (rc == 0) {
    rc = posix_spawn_file_actions_adddup2(&s.actions, err_fd, STDERR_FILENO);
  }
  if (rc == 0) {
    rc = posix_spawnattr_setflags(
        &s.attr, (own_group ? POSIX_SPAWN_SETPGROUP : 0) |
                     POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  }
  if (rc == 0 && own_group) rc = posix_spawnattr_setpgroup(&s.attr, 0);
  if (rc == 0) rc = posix_spawnattr_setsigmask(&s.attr, &none);
  if (rc == 0) rc = posix_spawnattr_setsigdefault(&s.attr, &defaults);
  if (rc != 0) return absl::ErrnoToStatus(rc, "posix_spawn settings");
  return absl::OkStatus();
}

std::vector<char*> CStrings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const std::string& s : strings)
    out.push_back(const_cast<char*>(s.data()));
  out.push_back(nullptr);
  return out;
}

absl::StatusOr<pid_t> Spawn(const ProcessSpec& spec, int out_fd, int err_fd) {
  SpawnSettings settings;
  if (absl::Status s = Configure(settings, spec, out_fd, err_fd); !s.ok()) {
    return s;
  }
  std::vector<char*> argv = CStrings(spec.argv);
  std::vector<char*> envp = CStrings(spec.env);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, spec.path.c_str(), &settings.actions,
                               &settings.attr, argv.data(), envp.data());
  if (rc != 0) return absl::ErrnoToStatus(rc, spec.path);
  return pid;
}

// One read of stdout into `out`; closes `fd` at the end of the stream.
absl::Status ReadStdout(Fd& fd, size_t limit, std::string& out) {
  char buffer[16384];
  const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return absl::OkStatus();
  if (n < 0) return absl::ErrnoToStatus(errno, "reading stdout");
  if (n == 0) {
    fd.Reset();
    return absl::OkStatus();
  }
  if (out.size() + static_cast<size_t>(n) > limit) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("wrote more than %d bytes on stdout: killed", limit));
  }
  out.append(buffer, static_cast<size_t>(n));
  return absl::OkStatus();
}

// One read of stderr: copied to ours at once (a plugin may print what the
// user must do, such as a device code to enter), and its end kept in `tail`.
void ReadStderr(Fd& fd, size_t keep, std::string& tail) {
  char buffer[4096];
  const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    fd.Reset();
    return;
  }
  for (ssize_t done = 0; done < n;) {
    const ssize_t w = ::write(STDERR_FILENO, buffer + done, n - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;  // our stderr is gone; the tail is still kept
    done += w;
  }
  tail.append(buffer, static_cast<size_t>(n));
  if (tail.size() > keep) tail.erase(0, tail.size() - keep);
}

// Reads both pipes until the process closes them, or the deadline.
absl::Status Pump(Fd& out, Fd& err, const ProcessSpec& spec,
                  Clock::time_point deadline, ProcessResult& result) {
  while (out.get() >= 0 || err.get() >= 0) {
    const auto left =
        std::chrono::ceil<Millis>(deadline - Clock::now()).count();
    if (left <= 0) {
      return absl::DeadlineExceededError(absl::StrFormat(
          "still running after %d ms: killed", spec.timeout.count()));
    }
    // poll skips negative descriptors: a closed pipe stays in place.
    pollfd fds[2] = {{out.get(), POLLIN, 0}, {err.get(), POLLIN, 0}};
    const int timeout = static_cast<int>(std::min<int64_t>(left, 1 << 30));
    if (::poll(fds, 2, timeout) < 0) {
      if (errno == EINTR) continue;
      return absl::ErrnoToStatus(errno, "poll");
    }
    if (fds[0].revents != 0) {
      absl::Status s = ReadStdout(out, spec.max_stdout, result.stdout_text);
      if (!s.ok()) return s;
    }
    if (fds[1].revents != 0) {
      ReadStderr(err, spec.stderr_tail, result.stderr_tail);
    }
  }
  return absl::OkStatus();
}

// The wait status once the process exits, or DeadlineExceeded. The pipes
// are closed by now, so the exit is normally a matter of microseconds; a
// short sleep between checks keeps this simple and cheap.
absl::StatusOr<int> Reap(pid_t pid, const ProcessSpec& spec,
                         Clock::time_point deadline) {
  while (true) {
    int status = 0;
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) return status;
    if (done < 0 && errno != EINTR) return absl::ErrnoToStatus(errno, "wait");
    if (Clock::now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrFormat(
          "still running after %d ms: killed", spec.timeout.count()));
    }
    std::this_thread::sleep_for(Millis(2));
  }
}

// The group first (what a script started; none when it shares ours), then
// the process itself in case it left the group; then it is reaped, which
// SIGKILL makes prompt.
void KillAndReap(pid_t pid, bool own_group) {
  if (own_group) ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

absl::StatusOr<ProcessResult> RunProcess(const ProcessSpec& spec) {
  const Clock::time_point deadline = Clock::now() + spec.timeout;
  absl::StatusOr<Pipe> out = MakePipe();
  if (!out.ok()) return out.status();
  absl::StatusOr<Pipe> err = MakePipe();
  if (!err.ok()) return err.status();
  absl::StatusOr<pid_t> pid = Spawn(spec, out->write.get(), err->write.get());
  if (!pid.ok()) return pid.status();
  // The child has its copies; ours would keep the reads from ending.
  out->write.Reset();
  err->write.Reset();
  ProcessResult result;
  absl::Status pumped = Pump(out->read, err->read, spec, deadline, result);
  absl::StatusOr<int> status =
      pumped.ok() ? Reap(*pid, spec, deadline) : absl::StatusOr<int>(pumped);
  if (!status.ok()) {
    KillAndReap(*pid, spec.stdin_fd < 0);
    return status.status();
  }
  if (WIFEXITED(*status)) result.exit_code = WEXITSTATUS(*status);
  if (WIFSIGNALED(*status)) result.signal = WTERMSIG(*status);
  return result;
}

}  // namespace gpusched::kube::internal
