#include "api/kube/exec_credential.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "tests/kube/exec_plugin_util.h"
#include "tests/kube/test_util.h"

namespace gpusched::kube::testing {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using namespace std::chrono_literals;
using SystemTime = std::chrono::system_clock::time_point;

std::string Msg(const absl::Status& status) {
  return std::string(status.message());
}

KubeConfig ConfigFor(ExecCredentialSpec spec) {
  KubeConfig config;
  config.server_url = "https://api.example.com:6443";
  config.tls_server_name = "api.internal";
  config.ca_pem = "CA PEM";
  config.exec = std::move(spec);
  return config;
}

SystemTime AtUnixSeconds(int64_t unix_seconds) {
  return std::chrono::system_clock::from_time_t(unix_seconds);
}

TEST(ExecPluginTest, ReturnsThePluginsToken) {
  PluginDir dir;
  const std::string plugin =
      dir.Script("plugin", PrintCredential(R"({"token":"abc.def"})"));
  absl::StatusOr<ExecCredential> credential =
      RunExecPlugin(PluginSpec(plugin), {});
  ASSERT_TRUE(credential.ok()) << credential.status();
  EXPECT_EQ(credential->token, "abc.def");
  EXPECT_FALSE(credential->expiry.has_value());
  EXPECT_EQ(dir.Runs(), 1);
}

TEST(ExecPluginTest, PassesArgsEnvAndExecInfo) {
  PluginDir dir;
  const std::string plugin = dir.Script(
      "plugin", "printf '%s' \"$KUBERNETES_EXEC_INFO\" > \"$OUT/info\"\n" +
                    PrintCredential(R"({"token":"$GREETING-$1-$2"})"));
  ExecCredentialSpec spec = PluginSpec(plugin);
  spec.args = {"one", "two"};
  spec.env = {{"GREETING", "hello"}, {"OUT", dir.path()}};
  absl::StatusOr<ExecCredential> credential = RunExecPlugin(spec, {});
  ASSERT_TRUE(credential.ok()) << credential.status();
  EXPECT_EQ(credential->token, "hello-one-two");
  EXPECT_EQ(dir.Read("info"),
            R"({"apiVersion":"client.authentication.k8s.io/v1",)"
            R"("kind":"ExecCredential","spec":{"interactive":false}})");
}

TEST(ExecPluginTest, KubeconfigEnvReplacesInheritedAndKeepsTheRest) {
  PluginDir dir;
  const std::string plugin = dir.Script(
      "plugin", PrintCredential(R"({"token":"$GPUSCHED_T1-$GPUSCHED_T2"})"));
  setenv("GPUSCHED_T1", "inherited", 1);
  setenv("GPUSCHED_T2", "outer", 1);
  ExecCredentialSpec spec = PluginSpec(plugin);
  spec.env = {{"GPUSCHED_T2", "first"}, {"GPUSCHED_T2", "inner"}};
  absl::StatusOr<ExecCredential> credential = RunExecPlugin(spec, {});
  unsetenv("GPUSCHED_T1");
  unsetenv("GPUSCHED_T2");
  ASSERT_TRUE(credential.ok()) << credential.status();
  EXPECT_EQ(credential->token, "inherited-inner");  // the last entry wins
}

TEST(ExecPluginTest, ProvideClusterInfoSendsTheCluster) {
  PluginDir dir;
  const std::string plugin = dir.Script(
      "plugin", "printf '%s' \"$KUBERNETES_EXEC_INFO\" > \"$OUT/info\"\n" +
                    PrintCredential(R"({"token":"t"})", kExecApiV1Beta1));
  ExecCredentialSpec spec = PluginSpec(plugin);
  spec.api_version = kExecApiV1Beta1;
  spec.provide_cluster_info = true;
  spec.env = {{"OUT", dir.path()}};
  ExecCredentialSource source(ConfigFor(spec));
  ASSERT_TRUE(source.Get().ok());
  EXPECT_EQ(dir.Read("info"),
            R"({"apiVersion":"client.authentication.k8s.io/v1beta1",)"
            R"("kind":"ExecCredential","spec":{"interactive":false,)"
            R"("cluster":{"server":"https://api.example.com:6443",)"
            R"("tls-server-name":"api.internal",)"
            R"("certificate-authority-data":")" +
                absl::Base64Escape("CA PEM") + R"("}}})");
}

TEST(ExecPluginTest, ReadsAClientCertificateAndExpiry) {
  PluginDir dir;
  const std::string plugin = dir.Script(
      "plugin",
      PrintCredential(R"({"clientCertificateData":"CERT\nPEM",)"
                      R"("clientKeyData":"KEY",)"
                      R"("expirationTimestamp":"2030-01-01T00:00:00Z"})"));
  absl::StatusOr<ExecCredential> credential =
      RunExecPlugin(PluginSpec(plugin), {});
  ASSERT_TRUE(credential.ok()) << credential.status();
  EXPECT_EQ(credential->client_cert_pem, "CERT\nPEM");
  EXPECT_EQ(credential->client_key_pem, "KEY");
  EXPECT_TRUE(credential->token.empty());
  EXPECT_EQ(credential->expiry, AtUnixSeconds(1893456000));
}

TEST(ExecPluginTest, BareNameIsFoundOnPath) {
  PluginDir dir;
  dir.Script("gpusched-test-plugin", PrintCredential(R"({"token":"found"})"));
  const std::string old_path = getenv("PATH");
  setenv("PATH", (dir.path() + ":" + old_path).c_str(), 1);
  absl::StatusOr<ExecCredential> credential =
      RunExecPlugin(PluginSpec("gpusched-test-plugin"), {});
  setenv("PATH", old_path.c_str(), 1);
  ASSERT_TRUE(credential.ok()) << credential.status();
  EXPECT_EQ(credential->token, "found");
}

TEST(ExecPluginTest, NotFoundShowsTheInstallHintAsKubectlDoes) {
  ExecCredentialSpec spec = PluginSpec("gpusched-no-such-plugin");
  spec.install_hint = "Install it with: brew install no-such-plugin";
  absl::StatusOr<ExecCredential> credential = RunExecPlugin(spec, {});
  ASSERT_FALSE(credential.ok());
  EXPECT_EQ(credential.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Msg(credential.status()),
              HasSubstr("exec: executable gpusched-no-such-plugin not found\n\n"
                        "It looks like you are trying to use a client-go "
                        "credential plugin that is not installed."));
  EXPECT_THAT(Msg(credential.status()),
              EndsWith("\n\nInstall it with: brew install no-such-plugin"));
}

TEST(ExecPluginTest, FailingPluginReportsItsExitCodeAndStderr) {
  PluginDir dir;
  const std::string plugin = dir.Script(
      "plugin", "echo 'token expired: run aws sso login' >&2\nexit 3");
  absl::StatusOr<ExecCredential> credential =
      RunExecPlugin(PluginSpec(plugin), {});
  ASSERT_FALSE(credential.ok());
  EXPECT_EQ(credential.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(Msg(credential.status()),
            "exec: executable " + plugin +
                " failed with exit code 3; stderr: token expired: run aws "
                "sso login");
}

// Whether process `pid` is gone (or a zombie, dead but not reaped by the
// init process it was left to).
bool Dead(const std::string& pid) {
  std::ifstream stat("/proc/" + pid + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), {});
  const size_t paren = text.rfind(')');
  return paren == std::string::npos || text.substr(paren + 2, 1) == "Z";
}

TEST(ExecPluginTest, HangingPluginIsKilledAtTheTimeout) {
  PluginDir dir;
  // The sleep runs in the background, so killing only the shell would not
  // end it: the whole process group must go.
  const std::string plugin = dir.Script(
      "plugin", "sleep 30 &\necho $! > '" + dir.path() + "/child'\nwait");
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<ExecCredential> credential =
      RunExecPlugin(PluginSpec(plugin), {}, {.timeout = 300ms});
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(credential.ok());
  EXPECT_EQ(credential.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(Msg(credential.status()),
              HasSubstr("still running after 300 ms: killed"));
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 5s);
  const std::string child(absl::StripAsciiWhitespace(dir.Read("child")));
  ASSERT_FALSE(child.empty());
  EXPECT_TRUE(WaitUntil([&] { return Dead(child); })) << "sleep " << child;
}

TEST(ExecPluginTest, OversizedOutputIsRefused) {
  PluginDir dir;
  const std::string plugin = dir.Script("plugin", "exec yes");  // endless
  absl::StatusOr<ExecCredential> credential =
      RunExecPlugin(PluginSpec(plugin), {}, {.max_output = 64 * 1024});
  ASSERT_FALSE(credential.ok());
  EXPECT_EQ(credential.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(Msg(credential.status()),
              HasSubstr("wrote more than 65536 bytes on stdout: killed"));
}

struct AnswerCase {
  std::string name;
  std::string stdout_command;
  std::string expected;  // a substring of the message
};

class ExecAnswerTest : public ::testing::TestWithParam<AnswerCase> {};

TEST_P(ExecAnswerTest, IsRefusedWithItsReason) {
  PluginDir dir;
  const std::string plugin = dir.Script("plugin", GetParam().stdout_command);
  absl::StatusOr<ExecCredential> credential =
      RunExecPlugin(PluginSpec(plugin), {});
  ASSERT_FALSE(credential.ok());
  EXPECT_THAT(Msg(credential.status()),
              HasSubstr("exec: executable " + plugin +
                        " printed an unusable credential: "));
  EXPECT_THAT(Msg(credential.status()), HasSubstr(GetParam().expected));
}

INSTANTIATE_TEST_SUITE_P(
    Answers, ExecAnswerTest,
    ::testing::Values(
        AnswerCase{"WrongKind",
                   R"(echo '{"apiVersion":"client.authentication.k8s.io/v1",)"
                   R"("kind":"Secret","status":{"token":"t"}}')",
                   "ExecCredential.kind: \"Secret\", expected ExecCredential"},
        AnswerCase{"WrongApiVersion",
                   PrintCredential(R"({"token":"t"})", kExecApiV1Beta1),
                   "exec plugin is configured to use API version "
                   "client.authentication.k8s.io/v1, plugin returned version "
                   "client.authentication.k8s.io/v1beta1"},
        AnswerCase{"NoCredential", PrintCredential("{}"),
                   "ExecCredential.status: no token"},
        AnswerCase{"CertificateWithoutKey",
                   PrintCredential(R"({"clientCertificateData":"C"})"),
                   "ExecCredential.status.clientKeyData: missing"},
        AnswerCase{"BadExpiry",
                   PrintCredential(
                       R"({"token":"t","expirationTimestamp":"tomorrow"})"),
                   "ExecCredential.status.expirationTimestamp: invalid RFC "
                   "3339 time"},
        AnswerCase{"NotJson", "echo 'please log in'", "JSON"}),
    [](const auto& info) { return info.param.name; });

// A plugin whose token names its run: "run-1", "run-2", ...
std::string CountingPlugin(const PluginDir& dir, std::string_view status) {
  return dir.Script("plugin", "n=$(wc -l < '" + dir.path() +
                                  "/runs' | tr -d ' ')\n" +
                                  PrintCredential(status));
}

TEST(ExecCredentialSourceTest, ReusesACredentialUntilShortlyBeforeItExpires) {
  PluginDir dir;
  const std::string plugin = CountingPlugin(
      dir,
      R"({"token":"run-$n","expirationTimestamp":"2030-01-01T00:00:00Z"})");
  SystemTime now =
      AtUnixSeconds(1893456000 - 3600);  // an hour before the expiry
  ExecCredentialSource source(ConfigFor(PluginSpec(plugin)),
                              {.now = [&] { return now; }});
  ASSERT_EQ((*source.Get())->token, "run-1");
  ASSERT_EQ((*source.Get())->token, "run-1");
  now = AtUnixSeconds(1893456000 - 5);  // inside the 10 s margin
  EXPECT_EQ((*source.Get())->token, "run-2");
  EXPECT_EQ(dir.Runs(), 2);
}

TEST(ExecCredentialSourceTest, WithoutExpiryReusesUntilInvalidated) {
  PluginDir dir;
  const std::string plugin = CountingPlugin(dir, R"({"token":"run-$n"})");
  ExecCredentialSource source(ConfigFor(PluginSpec(plugin)));
  auto first = source.Get();
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ((*source.Get())->token, "run-1");
  source.Invalidate(*first);
  auto second = source.Get();
  EXPECT_EQ((*second)->token, "run-2");
  // A refusal of the credential already replaced costs no run.
  source.Invalidate(*first);
  EXPECT_EQ((*source.Get())->token, "run-2");
  EXPECT_EQ(dir.Runs(), 2);
}

TEST(ExecCredentialSourceTest, AFailedRunCachesNothing) {
  PluginDir dir;
  // Fails on its first run only.
  const std::string plugin = dir.Script(
      "plugin", "[ $(wc -l < '" + dir.path() + "/runs') -gt 1 ] || exit 1\n" +
                    PrintCredential(R"({"token":"t"})"));
  ExecCredentialSource source(ConfigFor(PluginSpec(plugin)));
  EXPECT_FALSE(source.Get().ok());
  auto credential = source.Get();
  ASSERT_TRUE(credential.ok()) << credential.status();
  EXPECT_EQ((*credential)->token, "t");
}

TEST(ExecCredentialSourceTest, ConcurrentCallersShareOneRun) {
  PluginDir dir;
  const std::string plugin =
      dir.Script("plugin", "sleep 0.2\n" + PrintCredential(R"({"token":"t"})"));
  ExecCredentialSource source(ConfigFor(PluginSpec(plugin)));
  std::vector<std::thread> callers;
  std::vector<std::string> tokens(4);
  for (size_t i = 0; i < tokens.size(); ++i) {
    callers.emplace_back([&, i] {
      auto credential = source.Get();
      if (credential.ok()) tokens[i] = (*credential)->token;
    });
  }
  for (std::thread& caller : callers) caller.join();
  EXPECT_THAT(tokens, ::testing::Each("t"));
  EXPECT_EQ(dir.Runs(), 1);
}

}  // namespace
}  // namespace gpusched::kube::testing
