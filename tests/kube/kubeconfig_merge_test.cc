// kubectl's loading rules: which kubeconfig files are read and how they
// merge (LoadKubeconfigs).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "api/kube/kube_config.h"
#include "tests/kube/exec_plugin_util.h"

namespace gpusched::kube {
namespace {

using ::testing::HasSubstr;

// A directory of kubeconfig files, removed at the end of the test.
using Files = testing::PluginDir;

// File A: current-context "a", cluster "shared" at a.example, user "alice".
constexpr char kFileA[] = R"(apiVersion: v1
kind: Config
current-context: a
contexts:
- name: a
  context: {cluster: shared, user: alice, namespace: team-a}
- name: b
  context: {cluster: only-b, user: alice}
- name: no-namespace
  context: {cluster: shared, user: alice}
clusters:
- name: shared
  cluster: {server: "https://a.example"}
users:
- name: alice
  user: {token: from-a}
)";

// File B: current-context "b", redefines "shared" and "alice", adds "only-b".
constexpr char kFileB[] = R"(apiVersion: v1
kind: Config
current-context: b
contexts:
- name: a
  context: {cluster: only-b, user: bob}
clusters:
- name: shared
  cluster: {server: "https://b.example"}
- name: only-b
  cluster: {server: "https://only-b.example:8443"}
users:
- name: alice
  user: {token: from-b}
- name: bob
  user: {token: bob}
)";

TEST(KubeconfigMergeTest, FirstFileWinsForEveryName) {
  Files files;
  const std::string a = files.Write("a", kFileA);
  const std::string b = files.Write("b", kFileB);
  absl::StatusOr<KubeConfig> config =
      LoadKubeconfigs({.kubeconfig_env = a + ":" + b});
  ASSERT_TRUE(config.ok()) << config.status();
  // current-context "a" (A's), whose context, cluster and user are A's.
  EXPECT_EQ(config->host, "a.example");
  EXPECT_EQ(config->token, "from-a");
  EXPECT_EQ(config->namespace_name, "team-a");
  EXPECT_EQ(config->source, "kubeconfig " + a + ":" + b + ", context a");
}

TEST(KubeconfigMergeTest, OrderOfTheListDecides) {
  Files files;
  const std::string a = files.Write("a", kFileA);
  const std::string b = files.Write("b", kFileB);
  absl::StatusOr<KubeConfig> config =
      LoadKubeconfigs({.kubeconfig_env = b + ":" + a});
  ASSERT_TRUE(config.ok()) << config.status();
  // current-context "b" (B's); B has no context "b", A's is used, and it
  // names cluster "only-b" (B's) and user "alice" (B's, B coming first).
  EXPECT_EQ(config->host, "only-b.example");
  EXPECT_EQ(config->port, 8443);
  EXPECT_EQ(config->token, "from-b");
}

TEST(KubeconfigMergeTest, CurrentContextComesFromTheFirstFileThatSetsIt) {
  Files files;
  const std::string none = files.Write("none", "apiVersion: v1\n");
  const std::string b = files.Write("b", kFileB);
  const std::string a = files.Write("a", kFileA);
  absl::StatusOr<KubeConfig> config =
      LoadKubeconfigs({.kubeconfig_env = none + ":" + b + ":" + a});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->host, "only-b.example");  // context "b"
}

TEST(KubeconfigMergeTest, ContextFlagSelectsAnotherContext) {
  Files files;
  const std::string a = files.Write("a", kFileA);
  const std::string b = files.Write("b", kFileB);
  absl::StatusOr<KubeConfig> config =
      LoadKubeconfigs({.kubeconfig_env = a + ":" + b, .context = "b"});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->host, "only-b.example");
  EXPECT_EQ(config->token, "from-a");
  EXPECT_EQ(config->source, "kubeconfig " + a + ":" + b + ", context b");
}

TEST(KubeconfigMergeTest, NamespaceIsTheFlagElseTheContextsElseDefault) {
  Files files;
  const std::string a = files.Write("a", kFileA);
  auto namespace_of = [&](std::string context, std::string flag) {
    absl::StatusOr<KubeConfig> config = LoadKubeconfigs(
        {.kubeconfig_env = a, .context = context, .namespace_name = flag});
    EXPECT_TRUE(config.ok()) << config.status();
    return config.ok() ? config->namespace_name : "";
  };
  EXPECT_EQ(namespace_of("a", "ml-team"), "ml-team");
  EXPECT_EQ(namespace_of("a", ""), "team-a");
  EXPECT_EQ(namespace_of("no-namespace", ""), "default");
}

TEST(KubeconfigMergeTest, MissingFilesAndEmptyEntriesAreSkipped) {
  Files files;
  const std::string a = files.Write("a", kFileA);
  absl::StatusOr<KubeConfig> config = LoadKubeconfigs(
      {.kubeconfig_env = ":" + files.path() + "/missing::" + a + ":"});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->host, "a.example");
  EXPECT_EQ(config->source, "kubeconfig " + a + ", context a");
}

TEST(KubeconfigMergeTest, ExplicitKubeconfigIsUsedAlone) {
  Files files;
  const std::string a = files.Write("a", kFileA);
  const std::string b = files.Write("b", kFileB);
  absl::StatusOr<KubeConfig> config = LoadKubeconfigs(
      {.kubeconfig = b, .kubeconfig_env = a, .home = files.path()});
  // B alone: its current-context "b" is defined only in A.
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(),
            "kubeconfig " + b + ": contexts[\"b\"]: no such entry");
  config = LoadKubeconfigs({.kubeconfig = b, .context = "a"});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->token, "bob");
}

TEST(KubeconfigMergeTest, MissingExplicitKubeconfigIsAnError) {
  Files files;
  absl::StatusOr<KubeConfig> config =
      LoadKubeconfigs({.kubeconfig = files.path() + "/missing"});
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(std::string(config.status().message()),
              HasSubstr(files.path() + "/missing"));
}

TEST(KubeconfigMergeTest, HomeConfigWhenNothingElseIsGiven) {
  Files files;
  files.Write(".kube/config", kFileA);
  absl::StatusOr<KubeConfig> config =
      LoadKubeconfigs({.home = files.path(), .context = "a"});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->host, "a.example");
}

TEST(KubeconfigMergeTest, NoFileAtAllSaysWhereItLooked) {
  Files files;
  absl::StatusOr<KubeConfig> config =
      LoadKubeconfigs({.kubeconfig_env = files.path() + "/x"});
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(std::string(config.status().message()),
              HasSubstr("no kubeconfig: none of [" + files.path() + "/x]"));
}

TEST(KubeconfigMergeTest, FileReferencesResolveAgainstTheirOwnFile) {
  Files files;
  files.Write("one/token", "t\n");
  files.Write("two/ca.crt", "CA");
  const std::string one = files.Write(
      "one/config",
      "current-context: c\ncontexts:\n- name: c\n  context: {cluster: k, "
      "user: u}\nusers:\n- name: u\n  user: {tokenFile: token}\n");
  const std::string two = files.Write(
      "two/config",
      "clusters:\n- name: k\n  cluster:\n    server: https://k.example\n"
      "    certificate-authority: ca.crt\n");
  absl::StatusOr<KubeConfig> config =
      LoadKubeconfigs({.kubeconfig_env = one + ":" + two});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->token_file, files.path() + "/one/token");
  EXPECT_EQ(config->ca_pem, "CA");
}

TEST(KubeconfigMergeTest, ErrorsNameTheFileThatDefinedTheEntry) {
  Files files;
  const std::string a = files.Write(
      "a",
      "current-context: c\ncontexts:\n- name: c\n  context: {cluster: "
      "k, user: alice}\nclusters:\n- name: k\n  cluster: {server: "
      "https://k}\n");
  const std::string b = files.Write(
      "b", "users:\n- name: alice\n  user:\n    exec: {command: aws}\n");
  absl::StatusOr<KubeConfig> config =
      LoadKubeconfigs({.kubeconfig_env = a + ":" + b});
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(std::string(config.status().message()),
              HasSubstr("kubeconfig " + b +
                        ": users[\"alice\"].user.exec.apiVersion: missing"));
}

TEST(KubeconfigMergeTest, MalformedFileInTheListIsAnError) {
  Files files;
  const std::string bad = files.Write("bad", "- just\n- a list\n");
  const std::string a = files.Write("a", kFileA);
  absl::StatusOr<KubeConfig> config =
      LoadKubeconfigs({.kubeconfig_env = bad + ":" + a});
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(),
            "kubeconfig " + bad + ": not a YAML mapping");
}

TEST(KubeconfigMergeTest, SelectionFromTheEnvironment) {
  const char* home = getenv("HOME");
  const std::string old_home = home != nullptr ? home : "";
  setenv("KUBECONFIG", "/x:/y", 1);
  setenv("HOME", "/home/someone", 1);
  KubeconfigSelection selection = KubeconfigSelection::FromEnvironment();
  unsetenv("KUBECONFIG");
  setenv("HOME", old_home.c_str(), 1);
  EXPECT_EQ(selection.kubeconfig_env, "/x:/y");
  EXPECT_EQ(selection.home, "/home/someone");
}

}  // namespace
}  // namespace gpusched::kube
