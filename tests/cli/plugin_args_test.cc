// The plugin's command line reads as kubectl's (pflag's) does.
#include "api/cli/plugin_args.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpusched::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

PluginArgs Parsed(const std::vector<std::string>& args) {
  absl::StatusOr<PluginArgs> parsed = ParsePluginArgs(args);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  return parsed.ok() ? *std::move(parsed) : PluginArgs{};
}

std::string ErrorOf(const std::vector<std::string>& args) {
  absl::StatusOr<PluginArgs> parsed = ParsePluginArgs(args);
  EXPECT_FALSE(parsed.ok());
  return parsed.ok() ? "" : std::string(parsed.status().message());
}

TEST(PluginArgsTest, NamespaceInEveryFormKubectlAccepts) {
  const std::vector<std::vector<std::string>> forms = {
      {"queue", "-n", "team-a"},       {"queue", "-nteam-a"},
      {"queue", "-n=team-a"},          {"queue", "--namespace", "team-a"},
      {"queue", "--namespace=team-a"}, {"-n", "team-a", "queue"},
      {"--namespace=team-a", "queue"},
  };
  for (const auto& form : forms) {
    PluginArgs args = Parsed(form);
    EXPECT_EQ(args.command, "queue") << form[0];
    EXPECT_EQ(args.namespace_name, "team-a") << form[0] << " " << form[1];
    EXPECT_TRUE(args.positional.empty());
  }
}

TEST(PluginArgsTest, OutputJsonOrYaml) {
  EXPECT_EQ(Parsed({"status", "-o", "json"}).output, OutputFormat::kJson);
  EXPECT_EQ(Parsed({"status", "-ojson"}).output, OutputFormat::kJson);
  EXPECT_EQ(Parsed({"status", "--output=yaml"}).output, OutputFormat::kYaml);
  EXPECT_EQ(Parsed({"status"}).output, OutputFormat::kTable);
  EXPECT_EQ(ErrorOf({"status", "-o", "wide"}),
            "unable to match a printer suitable for the output format "
            "\"wide\", allowed formats are: json,yaml");
}

TEST(PluginArgsTest, KubeconfigContextAndArgumentsAroundFlags) {
  PluginArgs args = Parsed({"--kubeconfig", "/tmp/k", "explain", "--context",
                            "prod", "podgroup/llm", "-n", "ml"});
  EXPECT_EQ(args.kubeconfig, "/tmp/k");
  EXPECT_EQ(args.context, "prod");
  EXPECT_EQ(args.namespace_name, "ml");
  EXPECT_EQ(args.command, "explain");
  EXPECT_THAT(args.positional, ElementsAre("podgroup/llm"));
}

TEST(PluginArgsTest, DoubleDashEndsTheFlags) {
  PluginArgs args = Parsed({"queue", "--", "-odd-name"});
  EXPECT_THAT(args.positional, ElementsAre("-odd-name"));
  EXPECT_EQ(args.output, OutputFormat::kTable);
}

TEST(PluginArgsTest, HelpAnywhereSkipsTheArgumentChecks) {
  EXPECT_TRUE(Parsed({"-h"}).help);
  PluginArgs args = Parsed({"explain", "--help"});  // no workload given
  EXPECT_TRUE(args.help);
  EXPECT_EQ(args.command, "explain");
  EXPECT_THAT(PluginUsage("explain"), HasSubstr("POD|podgroup/NAME"));
  EXPECT_THAT(PluginUsage(""), HasSubstr("kubectl gpusched status"));
}

TEST(PluginArgsTest, ErrorsReadAsKubectls) {
  struct Case {
    std::vector<std::string> args;
    std::string error;
  } cases[] = {
      {{"queue", "--nmespace=x"}, "unknown flag: --nmespace"},
      {{"queue", "-x"}, "unknown shorthand flag: 'x' in -x"},
      {{"queue", "-n"}, "flag needs an argument: 'n' in -n"},
      {{"queue", "--context"}, "flag needs an argument: --context"},
      {{"describe"}, "unknown command \"describe\" for \"kubectl gpusched\""},
      {{"explain"}, "explain takes one workload: POD or podgroup/NAME"},
      {{"explain", "a", "b"},
       "explain takes one workload: POD or podgroup/NAME"},
      {{"queue", "a", "b"}, "queue takes at most one LocalQueue name"},
      {{"status", "gpu"}, "status takes no arguments, got \"gpu\""},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ErrorOf(c.args), c.error) << c.args[0];
  }
}

}  // namespace
}  // namespace gpusched::cli
