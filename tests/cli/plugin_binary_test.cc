// The gpusched executable is the plugin when kubectl runs it by the name
// kubectl-gpusched (a symlink on PATH), and under `gpusched kubectl`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdio.h>
#include <sys/wait.h>

#include <array>
#include <filesystem>
#include <string>

#include "tests/kube/exec_plugin_util.h"

namespace gpusched::cli {
namespace {

using ::testing::HasSubstr;

struct Ran {
  int exit = -1;
  std::string out;  // stdout and stderr
};

Ran RunShell(const std::string& command) {
  Ran ran;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return ran;
  std::array<char, 4096> buffer;
  while (size_t n = ::fread(buffer.data(), 1, buffer.size(), pipe)) {
    ran.out.append(buffer.data(), n);
  }
  const int status = ::pclose(pipe);
  ran.exit = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return ran;
}

TEST(PluginBinaryTest, RunAsKubectlGpuschedItIsThePlugin) {
  kube::testing::PluginDir dir;
  const std::string link = dir.path() + "/kubectl-gpusched";
  std::filesystem::create_symlink(GPUSCHED_BINARY, link);
  Ran version = RunShell(link + " version");
  EXPECT_EQ(version.exit, 0) << version.out;
  EXPECT_THAT(version.out, ::testing::MatchesRegex("gpusched v[0-9.]+\n"));
  Ran bad = RunShell(link + " queue --bogus");
  EXPECT_EQ(bad.exit, 1);
  EXPECT_THAT(bad.out, HasSubstr("unknown flag: --bogus"));
}

TEST(PluginBinaryTest, GpuschedKubectlIsTheSamePlugin) {
  Ran help = RunShell(std::string(GPUSCHED_BINARY) + " kubectl --help");
  EXPECT_EQ(help.exit, 0) << help.out;
  EXPECT_THAT(help.out, HasSubstr("kubectl gpusched queue [-n NAMESPACE]"));
}

}  // namespace
}  // namespace gpusched::cli
