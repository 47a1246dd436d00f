// Runs a program to completion, bounded in time and in output, without a
// shell: what a credential plugin needs (exec_credential.h). Kept apart so
// the process plumbing (posix_spawn, pipes, poll, kill) is in one place.
//
// Thread-safety: RunProcess may be called from several threads at once.
// Every descriptor it opens is close-on-exec, so a process another thread
// spawns meanwhile inherits none of them.
#ifndef GPUSCHED_API_KUBE_EXEC_PROCESS_H_
#define GPUSCHED_API_KUBE_EXEC_PROCESS_H_

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gpusched::kube::internal {

struct ProcessSpec {
  std::string path;               // the executable, with a '/'
  std::vector<std::string> argv;  // argv[0] included
  std::vector<std::string> env;   // "NAME=value", the whole environment
  // The process (and its process group) is killed when it has not exited
  // and closed its output by then.
  std::chrono::milliseconds timeout{60000};
  // More stdout than this kills the process: a credential is small, and a
  // runaway plugin must not grow this process without bound.
  size_t max_stdout = size_t{1} << 20;
  // How much of the end of stderr is kept for error messages (all of it is
  // also copied to this process's stderr as it arrives).
  size_t stderr_tail = 2048;
  // The program's standard input: -1 for /dev/null, else this descriptor
  // (a terminal lent to an interactive credential plugin). A program given
  // one stays in our process group, as kubectl's plugins do: one in a group
  // of its own is not in the terminal's foreground group, and reading its
  // controlling terminal would stop it (SIGTTIN).
  int stdin_fd = -1;
};

struct ProcessResult {
  std::string stdout_text;
  std::string stderr_tail;  // the last ProcessSpec::stderr_tail bytes
  int exit_code = -1;       // -1 when killed by a signal
  int signal = 0;           // the signal that ended it, or 0
};

// Starts `spec.path` with stdin on /dev/null (or spec.stdin_fd), stdout
// captured and stderr passed through; without a stdin_fd, in a process group
// of its own (so that a timeout also kills what a shell-script plugin
// started). A non-zero exit is a result,
// not an error. Errors: the program cannot be started (NotFound,
// PermissionDenied, Internal), DeadlineExceeded at the timeout,
// ResourceExhausted past max_stdout.
absl::StatusOr<ProcessResult> RunProcess(const ProcessSpec& spec);

}  // namespace gpusched::kube::internal

#endif  // GPUSCHED_API_KUBE_EXEC_PROCESS_H_
