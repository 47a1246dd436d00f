// `gpusched serve` as an operator runs it: the printed URL and curl work,
// HTTPS with client certificates, and SIGTERM exits 0.
#include <signal.h>

#include <cstdio>
#include <regex>

#include "tests/http/test_certs.h"
#include "tests/integration/harness.h"
#include "tests/integration/subprocess.h"

namespace gpusched::testing {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

uint16_t PortOf(const std::string& line) {
  std::smatch match;
  if (!std::regex_search(line, match,
                         std::regex(R"(https?://127\.0\.0\.1:(\d+))"))) {
    return 0;
  }
  return static_cast<uint16_t>(std::stoi(match[1]));
}

std::string RunShell(const std::string& command) {
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return output;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0)
    output.append(buffer, n);
  pclose(pipe);
  return output;
}

TEST(ServeProcessTest, PrintedCurlCallsFilterOnTheDemoCluster) {
  Subprocess serve({GPUSCHED_BINARY, "serve", "--listen", "127.0.0.1:0"});
  std::string url_line =
      serve.ReadLineContaining("is serving", milliseconds(20000));
  ASSERT_NE(PortOf(url_line), 0) << serve.stdout_text();
  std::string curl =
      serve.ReadLineContaining("curl -s -X POST", milliseconds(5000));
  ASSERT_FALSE(curl.empty());
  json result = json::parse(RunShell(curl), nullptr, false);
  ASSERT_TRUE(result.is_object()) << curl;
  EXPECT_EQ(result["Error"], "");
  EXPECT_FALSE(result["NodeNames"].empty());
  EXPECT_EQ(result["FailedAndUnresolvableNodes"]["l4-2"],
            "node is cordoned (spec.unschedulable)");
  serve.Signal(SIGTERM);
  EXPECT_EQ(serve.Wait(milliseconds(10000)), 0) << serve.stdout_text();
  EXPECT_NE(serve.stdout_text().find("stopped"), std::string::npos);
}

TEST(ServeProcessTest, SigtermWhileClientsAreBusyExitsZero) {
  Subprocess serve({GPUSCHED_BINARY, "serve", "--listen", "127.0.0.1:0",
                    "--log-format", "json"});
  uint16_t port =
      PortOf(serve.ReadLineContaining("is serving", milliseconds(20000)));
  ASSERT_NE(port, 0);
  std::atomic<bool> stop{false};
  std::atomic<int> ok{0};
  std::thread load([&] {
    auto client = http::Client::Connect("127.0.0.1", port);
    if (!client.ok()) return;
    while (!stop) {
      auto r =
          (*client)->Send("POST", "/filter",
                          FilterArgs(GpuPod("busy", 1), {"dgx-h100-1"}).dump());
      if (!r.ok()) break;
      if (r->status == 200) ++ok;
    }
  });
  std::this_thread::sleep_for(milliseconds(300));
  serve.Signal(SIGTERM);
  EXPECT_EQ(serve.Wait(milliseconds(10000)), 0);
  stop = true;
  load.join();
  EXPECT_GT(ok.load(), 0);
  // JSON logs: every line of stderr is one JSON object.
  std::string text = serve.stdout_text();
  size_t json_lines = 0;
  for (size_t start = 0, end;
       (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    std::string line = text.substr(start, end - start);
    if (line.empty() || line[0] != '{') continue;
    EXPECT_TRUE(json::accept(line)) << line;
    ++json_lines;
  }
  EXPECT_GE(json_lines, 2u);
}

TEST(ServeProcessTest, HttpsWithRequiredClientCertificates) {
  http::testing::TestPki pki = http::testing::CreateTestPki();
  Subprocess serve({GPUSCHED_BINARY, "serve", "--listen", "127.0.0.1:0",
                    "--tls-cert", pki.server_cert, "--tls-key", pki.server_key,
                    "--client-ca", pki.ca_cert});
  std::string url_line =
      serve.ReadLineContaining("is serving", milliseconds(20000));
  ASSERT_NE(url_line.find("https://"), std::string::npos)
      << serve.stdout_text();
  uint16_t port = PortOf(url_line);
  http::ClientOptions with_cert{.tls = true,
                                .ca_file = pki.ca_cert,
                                .cert_file = pki.client_cert,
                                .key_file = pki.client_key};
  auto client = http::Client::Connect("127.0.0.1", port, with_cert);
  ASSERT_TRUE(client.ok()) << client.status();
  json result = PostJson(**client, "/filter",
                         FilterArgs(GpuPod("tls", 2), {"dgx-h100-3"}).dump());
  EXPECT_EQ(result["NodeNames"], json::array({"dgx-h100-3"}));
  http::ClientOptions without_cert{.tls = true, .ca_file = pki.ca_cert};
  auto anonymous = http::Client::Connect("127.0.0.1", port, without_cert);
  bool refused =
      !anonymous.ok() || !(*anonymous)->Send("GET", "/healthz", "").ok();
  EXPECT_TRUE(refused);
  serve.Signal(SIGTERM);
  EXPECT_EQ(serve.Wait(milliseconds(10000)), 0);
  http::testing::RemoveTestPki(pki);
}

TEST(ServeProcessTest, BadFlagsExitTwoWithUsage) {
  Subprocess serve({GPUSCHED_BINARY, "serve", "--no-such-flag"});
  EXPECT_EQ(serve.Wait(milliseconds(10000)), 2);
  EXPECT_NE(serve.stdout_text().find("unknown flag --no-such-flag"),
            std::string::npos);
}

TEST(ServeProcessTest, BadClusterFileExitsOneNamingTheProblem) {
  std::string path = ::testing::TempDir() + "/bad-cluster.yaml";
  FILE* f = fopen(path.c_str(), "w");
  fputs(
      "apiVersion: v1\nkind: List\nitems:\n- kind: Node\n  metadata: {name: "
      "n}\n"
      "  status:\n    allocatable: {cpu: 12x}\n",
      f);
  fclose(f);
  Subprocess serve({GPUSCHED_BINARY, "serve", "--cluster", path});
  EXPECT_EQ(serve.Wait(milliseconds(10000)), 1);
  EXPECT_NE(serve.stdout_text().find("12x"), std::string::npos)
      << serve.stdout_text();
  EXPECT_NE(serve.stdout_text().find("line 7"), std::string::npos)
      << serve.stdout_text();
}

}  // namespace
}  // namespace gpusched::testing
