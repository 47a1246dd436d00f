// interactiveMode, as kubectl honours it: which standard input a credential
// plugin gets and what KUBERNETES_EXEC_INFO's spec.interactive says, with a
// pseudo-terminal standing in for a user's terminal.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "api/kube/exec_credential.h"
#include "tests/kube/exec_plugin_util.h"

namespace gpusched::kube::testing {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

// A pseudo-terminal: what a user types is written to `main`; `terminal` is
// the end a program reads, as it would read a real terminal.
class PseudoTerminal {
 public:
  PseudoTerminal() {
    main_ = ::posix_openpt(O_RDWR | O_NOCTTY);
    EXPECT_GE(main_, 0);
    EXPECT_EQ(::grantpt(main_), 0);
    EXPECT_EQ(::unlockpt(main_), 0);
    terminal_ = ::open(::ptsname(main_), O_RDWR | O_NOCTTY);
    EXPECT_GE(terminal_, 0);
  }
  ~PseudoTerminal() {
    ::close(terminal_);
    ::close(main_);
  }
  PseudoTerminal(const PseudoTerminal&) = delete;
  PseudoTerminal& operator=(const PseudoTerminal&) = delete;

  int terminal() const { return terminal_; }
  // Typed ahead: the terminal keeps the line until the plugin reads it.
  void Type(const std::string& line) const {
    const std::string text = line + "\n";
    EXPECT_EQ(::write(main_, text.data(), text.size()),
              static_cast<ssize_t>(text.size()));
  }

 private:
  int main_ = -1;
  int terminal_ = -1;
};

// A pipe holding `text`: standard input that is not a terminal.
class FilledPipe {
 public:
  explicit FilledPipe(const std::string& text) {
    EXPECT_EQ(::pipe(fds_), 0);
    EXPECT_EQ(::write(fds_[1], text.data(), text.size()),
              static_cast<ssize_t>(text.size()));
    ::close(fds_[1]);
  }
  ~FilledPipe() { ::close(fds_[0]); }
  FilledPipe(const FilledPipe&) = delete;
  FilledPipe& operator=(const FilledPipe&) = delete;
  int read_end() const { return fds_[0]; }

 private:
  int fds_[2] = {-1, -1};
};

// A plugin that notes whether its stdin is a terminal and what
// KUBERNETES_EXEC_INFO said, then reads one line from stdin (empty at its
// end) and answers it as the token: "typed:<line>".
std::string PromptingPlugin(const PluginDir& dir) {
  return dir.Script("plugin",
                    "if [ -t 0 ]; then echo terminal > \"$OUT/stdin\"; "
                    "else echo other > \"$OUT/stdin\"; fi\n"
                    "printf '%s' \"$KUBERNETES_EXEC_INFO\" > \"$OUT/info\"\n"
                    "read -r line || true\n" +
                        PrintCredential(R"({"token":"typed:$line"})"));
}

ExecCredentialSpec Spec(const PluginDir& dir, ExecInteractiveMode mode) {
  ExecCredentialSpec spec = PluginSpec(PromptingPlugin(dir));
  spec.interactive_mode = mode;
  spec.env = {{"OUT", dir.path()}};
  return spec;
}

ExecCredentialOptions WithStdin(int fd) {
  return {.timeout = 10s, .stdin_fd = fd};
}

// Our standard input in each case holds the line "s3cret": a terminal the
// user typed it on, or a pipe. What the plugin then saw: its stdin, the line
// it read (empty from /dev/null) and spec.interactive.
struct ModeCase {
  std::string name;
  ExecInteractiveMode mode;
  bool on_terminal;
  std::string plugin_stdin;  // "terminal" or "other"
  std::string read;
  bool interactive;
};

class ExecInteractiveModeTest : public ::testing::TestWithParam<ModeCase> {};

TEST_P(ExecInteractiveModeTest, PluginGetsStdinAsKubectlGivesIt) {
  const ModeCase& c = GetParam();
  PluginDir dir;
  PseudoTerminal pty;
  pty.Type("s3cret");
  FilledPipe pipe("s3cret\n");
  absl::StatusOr<ExecCredential> credential = RunExecPlugin(
      Spec(dir, c.mode), {},
      WithStdin(c.on_terminal ? pty.terminal() : pipe.read_end()));
  ASSERT_TRUE(credential.ok()) << credential.status();
  EXPECT_EQ(credential->token, "typed:" + c.read);
  EXPECT_EQ(dir.Read("stdin"), c.plugin_stdin + "\n");
  EXPECT_EQ(dir.Read("info"),
            std::string(R"({"apiVersion":"client.authentication.k8s.io/v1",)"
                        R"("kind":"ExecCredential","spec":{"interactive":)") +
                (c.interactive ? "true" : "false") + "}}");
}

INSTANTIATE_TEST_SUITE_P(
    Modes, ExecInteractiveModeTest,
    ::testing::Values(
        ModeCase{"IfAvailableOnATerminal", ExecInteractiveMode::kIfAvailable,
                 true, "terminal", "s3cret", true},
        ModeCase{"IfAvailableWithoutATerminal",
                 ExecInteractiveMode::kIfAvailable, false, "other", "", false},
        ModeCase{"NeverEvenOnATerminal", ExecInteractiveMode::kNever, true,
                 "other", "", false},
        ModeCase{"AlwaysOnATerminal", ExecInteractiveMode::kAlways, true,
                 "terminal", "s3cret", true}),
    [](const auto& info) { return info.param.name; });

TEST(ExecInteractiveTest, AlwaysWithoutATerminalFailsBeforeThePluginRuns) {
  PluginDir dir;
  FilledPipe input("");
  absl::StatusOr<ExecCredential> credential = RunExecPlugin(
      Spec(dir, ExecInteractiveMode::kAlways), {}, WithStdin(input.read_end()));
  ASSERT_FALSE(credential.ok());
  EXPECT_EQ(credential.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(credential.status().message()),
              HasSubstr("exec plugin cannot support interactive mode: "
                        "standard input is not a terminal"));
  EXPECT_EQ(dir.Runs(), 0);
}

// In a session whose controlling terminal is the pseudo-terminal (as a user
// runs kubectl gpusched), the plugin reads it without being stopped: it
// stays in the terminal's foreground process group. Runs in a child, which
// can have a session and a controlling terminal of its own.
TEST(ExecInteractiveTest, PluginReadsTheControllingTerminal) {
  PluginDir dir;
  PseudoTerminal pty;
  pty.Type("typed-at-the-prompt");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::setsid() < 0 || ::ioctl(pty.terminal(), TIOCSCTTY, 0) != 0) {
      ::_exit(2);
    }
    absl::StatusOr<ExecCredential> credential =
        RunExecPlugin(Spec(dir, ExecInteractiveMode::kAlways), {},
                      {.timeout = 5s, .stdin_fd = pty.terminal()});
    ::_exit(credential.ok() && credential->token == "typed:typed-at-the-prompt"
                ? 0
                : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: no controlling terminal; 1: the "
                                       "plugin failed or was stopped (5 s)";
}

}  // namespace
}  // namespace gpusched::kube::testing
