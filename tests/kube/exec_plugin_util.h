// Real credential plugins for the exec tests: small /bin/sh scripts in a
// directory of their own, which record their runs and what they were given
// in files the test reads back.
#ifndef GPUSCHED_TESTS_KUBE_EXEC_PLUGIN_UTIL_H_
#define GPUSCHED_TESTS_KUBE_EXEC_PLUGIN_UTIL_H_

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "api/kube/kube_config.h"

namespace gpusched::kube::testing {

// A fresh directory, removed with everything in it at the end of the test.
class PluginDir {
 public:
  PluginDir() {
    std::string pattern = ::testing::TempDir() + "/exec-plugin-XXXXXX";
    EXPECT_NE(::mkdtemp(pattern.data()), nullptr);
    path_ = pattern;
  }
  ~PluginDir() { std::filesystem::remove_all(path_); }
  PluginDir(const PluginDir&) = delete;
  PluginDir& operator=(const PluginDir&) = delete;

  const std::string& path() const { return path_; }

  // An executable script `name` running `body` under /bin/sh; each run
  // first appends a line to the file "runs". Returns its path.
  std::string Script(std::string_view name, std::string_view body) const {
    const std::string file = path_ + "/" + std::string(name);
    std::ofstream(file) << "#!/bin/sh\necho run >> '" << path_ << "/runs'\n"
                        << body << "\n";
    std::filesystem::permissions(file, std::filesystem::perms::owner_all);
    return file;
  }

  // Writes `text` to `name` (which may have a directory); returns its path.
  std::string Write(std::string_view name, std::string_view text) const {
    const std::string file = path_ + "/" + std::string(name);
    std::filesystem::create_directories(
        std::filesystem::path(file).parent_path());
    std::ofstream(file) << text;
    return file;
  }

  // The text of `name` in the directory; empty when it does not exist.
  std::string Read(std::string_view name) const {
    std::ifstream in(path_ + "/" + std::string(name));
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }

  // How many times the scripts have run.
  int Runs() const {
    const std::string runs = Read("runs");
    int lines = 0;
    for (char c : runs) lines += c == '\n';
    return lines;
  }

 private:
  std::string path_;
};

// A shell command printing an ExecCredential of `api_version` whose status
// is `status_json` (shell variables in it are expanded).
inline std::string PrintCredential(std::string_view status_json,
                                   std::string_view api_version = kExecApiV1) {
  return "cat <<EOF\n{\"apiVersion\":\"" + std::string(api_version) +
         "\",\"kind\":\"ExecCredential\",\"status\":" +
         std::string(status_json) + "}\nEOF";
}

// The exec settings for `command`: v1, never interactive.
inline ExecCredentialSpec PluginSpec(std::string command) {
  ExecCredentialSpec spec;
  spec.command = std::move(command);
  spec.api_version = kExecApiV1;
  spec.interactive_mode = ExecInteractiveMode::kNever;
  return spec;
}

}  // namespace gpusched::kube::testing

#endif  // GPUSCHED_TESTS_KUBE_EXEC_PLUGIN_UTIL_H_
