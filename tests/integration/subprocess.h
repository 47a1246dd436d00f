// Runs the gpusched binary as a child process, as an operator would.
#ifndef GPUSCHED_TESTS_INTEGRATION_SUBPROCESS_H_
#define GPUSCHED_TESTS_INTEGRATION_SUBPROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace gpusched::testing {

class Subprocess {
 public:
  // Starts `argv` with stdout and stderr piped.
  explicit Subprocess(const std::vector<std::string>& argv);
  ~Subprocess();  // kills the child if still running

  // Reads stdout until a line containing `needle` arrives (returns that
  // line) or the timeout passes (returns "").
  std::string ReadLineContaining(const std::string& needle,
                                 std::chrono::milliseconds timeout);
  const std::string& stdout_text() const { return out_; }
  void Signal(int signal);
  // Waits for exit; returns the exit code, or -1 on timeout / signal death.
  int Wait(std::chrono::milliseconds timeout);

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  std::string out_;
  size_t consumed_ = 0;
};

}  // namespace gpusched::testing

#endif  // GPUSCHED_TESTS_INTEGRATION_SUBPROCESS_H_
