// `gpusched serve`'s flags have one list, ServeFlagDocs(): the parser
// accepts those and --help prints them. README.md's table under
// "## `gpusched serve`" is written by hand, to read well; these tests keep
// it listing the same flags with the same argument names.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "api/server/serve_flags.h"

namespace gpusched {
namespace {

using ::testing::HasSubstr;

constexpr char kServeHeading[] = "## `gpusched serve`";

// The first cell of each row of the first table under kServeHeading.
std::vector<std::string> ReadmeFlagCells() {
  std::ifstream in(std::string(GPUSCHED_SOURCE_DIR) + "/README.md");
  std::string line;
  while (std::getline(in, line) && line != kServeHeading) {
  }
  std::vector<std::string> cells;
  bool in_table = false;
  while (std::getline(in, line) && !line.starts_with("#")) {
    if (!line.starts_with("|")) {
      if (in_table) break;
      continue;
    }
    in_table = true;
    // A cell ends at the first '|' that is not escaped as "\|".
    size_t end = 1;
    while (end < line.size() && (line[end] != '|' || line[end - 1] == '\\')) {
      ++end;
    }
    cells.push_back(line.substr(1, end - 1));
  }
  // The header row and the |---| row.
  if (cells.size() >= 2) cells.erase(cells.begin(), cells.begin() + 2);
  return cells;
}

// "`--tls-cert FILE --tls-key FILE`, `--in-cluster`" -> "--tls-cert FILE",
// "--tls-key FILE", "--in-cluster": each flag with its argument, as
// FlagSet::Doc::Synopsis writes it.
std::vector<std::string> Synopses(const std::string& cell) {
  std::vector<std::string> out;
  std::vector<std::string> parts = absl::StrSplit(cell, '`');
  for (size_t i = 1; i < parts.size(); i += 2) {  // inside backquotes
    const std::string span = absl::StrReplaceAll(parts[i], {{"\\|", "|"}});
    for (absl::string_view word :
         absl::StrSplit(span, ' ', absl::SkipWhitespace())) {
      if (absl::StartsWith(word, "-") || out.empty()) {
        out.emplace_back(word);
      } else {
        absl::StrAppend(&out.back(), " ", word);
      }
    }
  }
  return out;
}

std::set<std::string> ReadmeSynopses() {
  std::set<std::string> out;
  for (const std::string& cell : ReadmeFlagCells()) {
    for (std::string& synopsis : Synopses(cell)) out.insert(synopsis);
  }
  return out;
}

TEST(ServeFlagsReadmeTest, EveryFlagTheParserAcceptsIsInTheReadmeTable) {
  const std::set<std::string> readme = ReadmeSynopses();
  ASSERT_FALSE(readme.empty()) << "no table under " << kServeHeading;
  for (const FlagSet::Doc& doc : ServeFlagDocs()) {
    EXPECT_TRUE(readme.contains(doc.Synopsis()))
        << "README.md's " << kServeHeading << " table lacks `" << doc.Synopsis()
        << "` (" << doc.help << ")";
  }
}

TEST(ServeFlagsReadmeTest, EveryFlagInTheReadmeTableIsAcceptedAsWritten) {
  std::set<std::string> parser;
  for (const FlagSet::Doc& doc : ServeFlagDocs()) {
    parser.insert(doc.Synopsis());
  }
  for (const std::string& synopsis : ReadmeSynopses()) {
    EXPECT_TRUE(parser.contains(synopsis))
        << "README.md's " << kServeHeading << " table lists `" << synopsis
        << "`, which gpusched serve does not accept with that argument";
  }
}

TEST(ServeFlagsReadmeTest, SynopsesSplitACellIntoFlags) {
  EXPECT_THAT(
      Synopses("`--tls-cert FILE --tls-key FILE`, `--in-cluster`, "
               "`--log-format json\\|text`, `-v N`"),
      ::testing::ElementsAre("--tls-cert FILE", "--tls-key FILE",
                             "--in-cluster", "--log-format json|text", "-v N"));
}

TEST(ServeUsageTest, ListsEachFlagWithItsArgument) {
  const std::string usage = ServeUsage();
  EXPECT_THAT(usage, HasSubstr("usage: gpusched serve [flags]\n"));
  EXPECT_THAT(usage, HasSubstr("\n  --listen ADDR:PORT  address to listen on"));
  EXPECT_THAT(usage, HasSubstr("\n  --in-cluster  follow the cluster"));
  EXPECT_THAT(usage, HasSubstr("\n  --webhook-secret NS/NAME  the Secret"));
  EXPECT_THAT(usage, HasSubstr("\n  -v N  verbosity"));
}

TEST(ServeUsageTest, HelpSkipsTheChecksBetweenFlags) {
  ServeConfig config;
  // --webhook-listen alone would need live mode.
  EXPECT_TRUE(
      ParseServeFlags({"--webhook-listen=0.0.0.0:9443", "--help"}, config)
          .ok());
  EXPECT_TRUE(config.help);
}

}  // namespace
}  // namespace gpusched
