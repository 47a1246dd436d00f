#include "api/kube/kube_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "absl/strings/escaping.h"

namespace gpusched::kube {
namespace {

using ::testing::HasSubstr;

constexpr char kCa[] =
    "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n";

// A kubeconfig whose current context "ctx" uses cluster "c" and user "u";
// `cluster` and `user` are the inner maps' lines (indented 4 spaces).
std::string Kubeconfig(const std::string& cluster, const std::string& user) {
  return "apiVersion: v1\nkind: Config\ncurrent-context: ctx\n"
         "contexts:\n- name: other\n  context: {cluster: x, user: y}\n"
         "- name: ctx\n  context:\n    cluster: c\n    user: u\n"
         "    namespace: team-a\n"
         "clusters:\n- name: c\n  cluster:\n" +
         cluster + "users:\n- name: u\n  user:\n" + user;
}

std::string WriteTemp(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(KubeconfigTest, ReadsTokenAndInlineBase64Ca) {
  absl::StatusOr<KubeConfig> config =
      ParseKubeconfig(Kubeconfig("    server: https://10.0.0.1:6443\n"
                                 "    certificate-authority-data: " +
                                     absl::Base64Escape(kCa) + "\n",
                                 "    token: abc.def\n"),
                      "/etc", "test");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->host, "10.0.0.1");
  EXPECT_EQ(config->port, 6443);
  EXPECT_TRUE(config->tls);
  EXPECT_EQ(config->ca_pem, kCa);
  EXPECT_EQ(config->token, "abc.def");
  EXPECT_EQ(config->namespace_name, "team-a");
  EXPECT_EQ(config->source, "kubeconfig test, context ctx");
}

TEST(KubeconfigTest, ReadsClientCertificateFilesRelativeToTheKubeconfig) {
  const std::string dir = ::testing::TempDir();
  WriteTemp("client.crt", "CERT");
  WriteTemp("client.key", "KEY");
  std::string path = WriteTemp(
      "kubeconfig-cert", Kubeconfig("    server: https://api.example.com\n",
                                    "    client-certificate: client.crt\n"
                                    "    client-key: " +
                                        dir + "/client.key\n"));
  absl::StatusOr<KubeConfig> config = LoadKubeconfig(path);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->host, "api.example.com");
  EXPECT_EQ(config->port, 443);
  EXPECT_EQ(config->client_cert_pem, "CERT");
  EXPECT_EQ(config->client_key_pem, "KEY");
  EXPECT_TRUE(config->ca_pem.empty());  // the system store then
}

TEST(KubeconfigTest, ReadsInlineClientCertificateData) {
  absl::StatusOr<KubeConfig> config = ParseKubeconfig(
      Kubeconfig("    server: https://[::1]:8443/k8s/clusters/c-1/\n",
                 "    client-certificate-data: " + absl::Base64Escape("C") +
                     "\n    client-key-data: " + absl::Base64Escape("K") +
                     "\n"),
      "/", "test");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->host, "::1");
  EXPECT_EQ(config->port, 8443);
  EXPECT_EQ(config->base_path, "/k8s/clusters/c-1");
  EXPECT_EQ(config->client_cert_pem, "C");
  EXPECT_EQ(config->client_key_pem, "K");
}

struct ErrorCase {
  std::string name;
  std::string cluster;
  std::string user;
  std::string expected;  // a substring of the message
};

class KubeconfigErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(KubeconfigErrorTest, NamesTheField) {
  absl::StatusOr<KubeConfig> config = ParseKubeconfig(
      Kubeconfig(GetParam().cluster, GetParam().user), "/", "cfg");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(std::string(config.status().message()),
              HasSubstr("kubeconfig cfg: "));
  EXPECT_THAT(std::string(config.status().message()),
              HasSubstr(GetParam().expected));
}

INSTANTIATE_TEST_SUITE_P(
    Fields, KubeconfigErrorTest,
    ::testing::Values(
        ErrorCase{"MissingServer", "    certificate-authority-data: eA==\n",
                  "    token: t\n", "clusters[\"c\"].cluster.server: missing"},
        ErrorCase{"BadScheme", "    server: ftp://x\n", "    token: t\n",
                  "clusters[\"c\"].cluster.server: server \"ftp://x\""},
        ErrorCase{"BadBase64",
                  "    server: https://x\n"
                  "    certificate-authority-data: '***'\n",
                  "    token: t\n",
                  "clusters[\"c\"].cluster.certificate-authority-data: "
                  "invalid base64"},
        ErrorCase{"MissingCaFile",
                  "    server: https://x\n"
                  "    certificate-authority: /nonexistent/ca.crt\n",
                  "    token: t\n",
                  "clusters[\"c\"].cluster.certificate-authority: cannot "
                  "read /nonexistent/ca.crt"},
        ErrorCase{"AuthProvider", "    server: https://x\n",
                  "    auth-provider: {name: oidc}\n",
                  "users[\"u\"].user.auth-provider: not supported: use exec"},
        ErrorCase{"BasicAuth", "    server: https://x\n",
                  "    username: admin\n    password: secret\n",
                  "users[\"u\"].user.username: not supported"},
        ErrorCase{"KeyWithoutCert", "    server: https://x\n",
                  "    client-key-data: eA==\n",
                  "users[\"u\"].user.client-certificate-data: missing"},
        ErrorCase{"InsecureSkipVerify",
                  "    server: https://x\n    insecure-skip-tls-verify: true\n",
                  "    token: t\n",
                  "clusters[\"c\"].cluster.insecure-skip-tls-verify: not "
                  "supported"}),
    [](const auto& info) { return info.param.name; });

TEST(KubeconfigTest, ReadsAnExecPluginWithoutRunningIt) {
  absl::StatusOr<KubeConfig> config = ParseKubeconfig(
      Kubeconfig("    server: https://api.example.com\n",
                 "    exec:\n"
                 "      apiVersion: client.authentication.k8s.io/v1\n"
                 "      command: bin/get-token\n"
                 "      args: [token, --cluster, prod]\n"
                 "      env:\n"
                 "      - {name: AWS_PROFILE, value: prod}\n"
                 "      - {name: EMPTY}\n"
                 "      interactiveMode: Never\n"
                 "      provideClusterInfo: true\n"
                 "      installHint: brew install get-token\n"),
      "/home/me/.kube", "test");
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_TRUE(config->exec.has_value());
  const ExecCredentialSpec& exec = *config->exec;
  // Relative with a '/': against the kubeconfig's directory, as kubectl.
  EXPECT_EQ(exec.command, "/home/me/.kube/bin/get-token");
  EXPECT_THAT(exec.args, ::testing::ElementsAre("token", "--cluster", "prod"));
  EXPECT_THAT(exec.env,
              ::testing::ElementsAre(
                  std::pair<std::string, std::string>("AWS_PROFILE", "prod"),
                  std::pair<std::string, std::string>("EMPTY", "")));
  EXPECT_EQ(exec.api_version, kExecApiV1);
  EXPECT_EQ(exec.interactive_mode, ExecInteractiveMode::kNever);
  EXPECT_TRUE(exec.provide_cluster_info);
  EXPECT_EQ(exec.install_hint, "brew install get-token");
  EXPECT_EQ(config->server_url, "https://api.example.com");
  EXPECT_TRUE(config->token.empty());
}

TEST(KubeconfigTest, ExecBareCommandStaysForPathLookupAndV1beta1Defaults) {
  absl::StatusOr<KubeConfig> config = ParseKubeconfig(
      Kubeconfig("    server: https://x\n",
                 "    exec:\n"
                 "      apiVersion: client.authentication.k8s.io/v1beta1\n"
                 "      command: aws\n"),
      "/etc", "test");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->exec->command, "aws");
  EXPECT_EQ(config->exec->interactive_mode, ExecInteractiveMode::kIfAvailable);
  EXPECT_FALSE(config->exec->provide_cluster_info);
}

// Always is valid in the file, as for kubectl: whether a terminal is there
// is asked when the plugin runs.
TEST(KubeconfigTest, ExecInteractiveModeAlwaysIsRead) {
  absl::StatusOr<KubeConfig> config = ParseKubeconfig(
      Kubeconfig("    server: https://x\n",
                 "    exec:\n"
                 "      apiVersion: client.authentication.k8s.io/v1\n"
                 "      command: aws\n"
                 "      interactiveMode: Always\n"),
      "/etc", "test");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->exec->interactive_mode, ExecInteractiveMode::kAlways);
}

// The user's lines for an exec block with `fields` (indented 6 spaces).
std::string ExecUser(const std::string& fields) {
  return "    exec:\n" + fields;
}

class KubeconfigExecErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(KubeconfigExecErrorTest, NamesTheField) {
  absl::StatusOr<KubeConfig> config = ParseKubeconfig(
      Kubeconfig("    server: https://x\n", ExecUser(GetParam().user)), "/",
      "cfg");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(std::string(config.status().message()),
              HasSubstr("kubeconfig cfg: users[\"u\"].user.exec." +
                        GetParam().expected));
}

constexpr char kExecV1Line[] =
    "      apiVersion: client.authentication.k8s.io/v1\n";

INSTANTIATE_TEST_SUITE_P(
    Fields, KubeconfigExecErrorTest,
    ::testing::Values(
        ErrorCase{"MissingApiVersion", "",
                  "      command: aws\n      interactiveMode: Never\n",
                  "apiVersion: missing: client.authentication.k8s.io/v1 or "
                  "client.authentication.k8s.io/v1beta1"},
        ErrorCase{"OldApiVersion", "",
                  "      command: aws\n"
                  "      apiVersion: client.authentication.k8s.io/v1alpha1\n",
                  "apiVersion: \"client.authentication.k8s.io/v1alpha1\" is "
                  "not supported"},
        ErrorCase{"MissingCommand", "",
                  std::string(kExecV1Line) + "      interactiveMode: Never\n",
                  "command: missing"},
        ErrorCase{"UnknownInteractiveMode", "",
                  std::string(kExecV1Line) +
                      "      command: aws\n      interactiveMode: always\n",
                  "interactiveMode: \"always\" is not one of Never, "
                  "IfAvailable, Always"},
        ErrorCase{"V1NeedsInteractiveMode", "",
                  std::string(kExecV1Line) + "      command: aws\n",
                  "interactiveMode: missing"},
        ErrorCase{"EnvWithoutName", "",
                  std::string(kExecV1Line) +
                      "      command: aws\n      interactiveMode: Never\n"
                      "      env: [{value: x}]\n",
                  "env[0].name: missing"},
        ErrorCase{"ArgsNotAList", "",
                  std::string(kExecV1Line) +
                      "      command: aws\n      interactiveMode: Never\n"
                      "      args: token\n",
                  "args: expected a list of strings"},
        ErrorCase{"ProvideClusterInfoNotBool", "",
                  std::string(kExecV1Line) +
                      "      command: aws\n      interactiveMode: Never\n"
                      "      provideClusterInfo: maybe\n",
                  "provideClusterInfo: expected true or false"}),
    [](const auto& info) { return info.param.name; });

TEST(KubeconfigTest, MissingCurrentContextIsNamed) {
  absl::StatusOr<KubeConfig> config =
      ParseKubeconfig("apiVersion: v1\nclusters: []\n", "/", "cfg");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(std::string(config.status().message()),
              HasSubstr("current-context: missing"));
}

TEST(KubeconfigTest, UnknownContextIsNamed) {
  absl::StatusOr<KubeConfig> config =
      ParseKubeconfig("current-context: nope\ncontexts: []\n", "/", "cfg");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(std::string(config.status().message()),
              HasSubstr("contexts[\"nope\"]: no such entry"));
}

TEST(KubeconfigTest, MissingFileIsNamed) {
  absl::StatusOr<KubeConfig> config = LoadKubeconfig("/nonexistent/config");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(std::string(config.status().message()),
              HasSubstr("/nonexistent/config"));
}

TEST(InClusterTest, ReadsServiceAccountAndEnvironment) {
  const std::string dir = ::testing::TempDir() + "/sa";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/token") << "sa-token\n";
  std::ofstream(dir + "/ca.crt") << kCa;
  std::ofstream(dir + "/namespace") << "gpusched-system";
  setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  EXPECT_TRUE(InClusterAvailable());
  absl::StatusOr<KubeConfig> config = LoadInClusterConfig(dir);
  unsetenv("KUBERNETES_SERVICE_HOST");
  unsetenv("KUBERNETES_SERVICE_PORT");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->host, "10.96.0.1");
  EXPECT_EQ(config->port, 443);
  EXPECT_EQ(config->token_file, dir + "/token");  // re-read as it rotates
  EXPECT_EQ(config->ca_pem, kCa);
  EXPECT_EQ(config->namespace_name, "gpusched-system");
  EXPECT_FALSE(InClusterAvailable());
}

TEST(InClusterTest, OutsideAPodSaysWhatToUseInstead) {
  unsetenv("KUBERNETES_SERVICE_HOST");
  absl::StatusOr<KubeConfig> config = LoadInClusterConfig("/nonexistent");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(std::string(config.status().message()),
              HasSubstr("--kubeconfig"));
}

TEST(ServerUrlTest, AcceptsPlainHttpForTests) {
  KubeConfig config;
  ASSERT_TRUE(ParseServerUrl("http://127.0.0.1:8001", config).ok());
  EXPECT_FALSE(config.tls);
  EXPECT_EQ(config.port, 8001);
}

}  // namespace
}  // namespace gpusched::kube
