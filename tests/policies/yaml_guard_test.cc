// CheckYamlText: the texts yaml-cpp 0.7 never finishes, aliases and deep
// nesting are refused with their line and column; every YAML file this
// repository ships passes.
#include "policies/yaml_guard.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace gpusched {
namespace {

std::string Message(std::string_view text, const YamlLimits& limits = {}) {
  absl::Status status = CheckYamlText(text, limits);
  return status.ok() ? "ok" : std::string(status.message());
}

// Each of these made yaml-cpp 0.7's LoadAll loop, allocating, until the
// process ran out of memory (checked by hand against Debian's libyaml-cpp).
TEST(YamlGuardTest, RefusesACommaAfterAValueOutsideFlowCollections) {
  EXPECT_EQ(Message("{a: 1},"),
            "line 1, column 7: unexpected ',' after a complete value, "
            "outside any [ ] or { }");
  EXPECT_EQ(Message("[a] ,"),
            "line 1, column 5: unexpected ',' after a complete value, "
            "outside any [ ] or { }");
  EXPECT_EQ(Message("\"x\","),
            "line 1, column 4: unexpected ',' after a complete value, "
            "outside any [ ] or { }");
  EXPECT_EQ(Message(","),
            "line 1, column 1: unexpected ',' where a value starts, outside "
            "any [ ] or { }");
  EXPECT_EQ(Message("--- ,"),
            "line 1, column 5: unexpected ',' where a value starts, outside "
            "any [ ] or { }");
  EXPECT_EQ(Message("\"x\" # c\n,"),
            "line 2, column 1: unexpected ',' where a value starts, outside "
            "any [ ] or { }");
  // A bracket or quote right after a complete value opens a new token
  // (found by tests/fuzz/scenario_fuzz: yaml-cpp never returned).
  EXPECT_EQ(Message("'a' {}, t"),
            "line 1, column 7: unexpected ',' after a complete value, "
            "outside any [ ] or { }");
  EXPECT_EQ(Message("# ow}; mit 4) >\n' {team-a 4, }>\n' {}, teaeaus s"),
            "line 3, column 5: unexpected ',' after a complete value, "
            "outside any [ ] or { }");
  EXPECT_EQ(Message("\"a\"[],"),
            "line 1, column 6: unexpected ',' after a complete value, "
            "outside any [ ] or { }");
  EXPECT_EQ(Message("{} [],"),
            "line 1, column 6: unexpected ',' after a complete value, "
            "outside any [ ] or { }");
  EXPECT_EQ(Message("'a' 'b',"),
            "line 1, column 8: unexpected ',' after a complete value, "
            "outside any [ ] or { }");
  // A tag or an anchor ends at a ',' as at a blank (found by
  // tests/fuzz/k8s_yaml_fuzz: yaml-cpp never returned).
  EXPECT_EQ(Message("!bbbbbbb0, gpusched.-"),
            "line 1, column 10: unexpected ',' where a value starts, outside "
            "any [ ] or { }");
  EXPECT_EQ(Message("&a,"),
            "line 1, column 3: unexpected ',' where a value starts, outside "
            "any [ ] or { }");
  EXPECT_EQ(Message("!b ,"),
            "line 1, column 4: unexpected ',' where a value starts, outside "
            "any [ ] or { }");
  // A NUL where a value starts is an empty value to yaml-cpp (found by
  // tests/fuzz/k8s_yaml_fuzz): control characters are refused.
  EXPECT_EQ(Message(std::string("\0\0\0, gpusched.-", 16)),
            "line 1, column 1: control character 0x00 is not allowed in YAML");
  EXPECT_EQ(Message("a: b\n\x7f"),
            "line 2, column 1: control character 0x7f is not allowed in YAML");
  EXPECT_EQ(Message("a:\tb\r\nc: 'd\te'\r\n"), "ok");
  // yaml-cpp skips a byte order mark at the start, so what follows is read
  // as a value start (found by tests/fuzz/k8s_yaml_fuzz).
  EXPECT_EQ(Message("\xEF\xBB\xBF\"a\","),
            "line 1, column 4: unexpected ',' after a complete value, "
            "outside any [ ] or { }");
  EXPECT_EQ(Message("\xEF\xBB\xBF, b"),
            "line 1, column 1: unexpected ',' where a value starts, outside "
            "any [ ] or { }");
  EXPECT_EQ(Message("\xEF\xBB\xBF"
                    "a: b, c\n"),
            "ok");
  // An item of an indented JSON array, cut out with its separator.
  EXPECT_EQ(Message("  {\"kind\": \"ResourceFlavor\"},\n ],"),
            "line 1, column 29: unexpected ',' after a complete value, "
            "outside any [ ] or { }");
}

TEST(YamlGuardTest, CommasInsideScalarsAndFlowCollectionsAreText) {
  EXPECT_EQ(Message("a: b, c\nd: 'x,' # y,\ne: \"p,q\"\n"), "ok");
  EXPECT_EQ(Message("{\n \"a\": [1, 2],\n \"b\": {\"c\": \"d\"}\n}\n"), "ok");
  EXPECT_EQ(Message("a: |\n  {x: 1},\n  ,\nb: >-\n  [y],\n"), "ok");
  EXPECT_EQ(Message("a: 'it''s, ok',\n"),
            "line 1, column 15: unexpected "
            "',' after a complete value, "
            "outside any [ ] or { }");
}

TEST(YamlGuardTest, RefusesAliasesButNotAnchorsOrTags) {
  EXPECT_EQ(Message("a: &x [1, 2]\nb: !!str 3\n"), "ok");
  EXPECT_EQ(Message("a: [!!str, &y]\nc: {d: !e}\n"), "ok");
  EXPECT_EQ(Message("a: &x [1]\nb: *x\n"),
            "line 2, column 4: YAML aliases (*name) are not accepted: each "
            "one repeats its anchor's whole value");
  EXPECT_EQ(Message("l: [&a [1], [*a, *a]]"),
            "line 1, column 14: YAML aliases (*name) are not accepted: each "
            "one repeats its anchor's whole value");
  EXPECT_EQ(Message("a: b *c\nd: '*e'\n"), "ok");  // text, not aliases
}

TEST(YamlGuardTest, RefusesNestingPastTheLimit) {
  const YamlLimits limits{.max_depth = 4};
  EXPECT_EQ(Message("a:\n b:\n  c:\n   d: 1\n", limits), "ok");
  EXPECT_EQ(Message("a:\n b:\n  c:\n   d:\n    e: 1\n", limits),
            "line 5, column 5: nested more than 4 levels deep");
  EXPECT_EQ(Message("a: [[[[1]]]]", limits),
            "line 1, column 7: nested more than 4 levels deep");
  EXPECT_EQ(Message("- - - - - 1", limits),
            "line 1, column 1: nested more than 4 levels deep");
  EXPECT_EQ(Message(std::string(100'000, '['), {}),
            "line 1, column 100: nested more than 100 levels deep");
}

TEST(YamlGuardTest, RefusesTextsLargerThanTheLimit) {
  EXPECT_EQ(Message("a: 12345", {.max_bytes = 4}),
            "the text is 8 bytes, more than the 4 accepted");
}

// The guard must never refuse what we ship: every YAML file under deploy/
// and tests/ passes.
TEST(YamlGuardTest, AcceptsEveryYamlFileInTheRepository) {
  int files = 0;
  for (const char* dir : {"deploy", "tests"}) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(
             std::filesystem::path(GPUSCHED_SOURCE_DIR) / dir)) {
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() || (ext != ".yaml" && ext != ".yml")) {
        continue;
      }
      std::ifstream in(entry.path());
      std::stringstream text;
      text << in.rdbuf();
      EXPECT_EQ(Message(text.str()), "ok") << entry.path();
      ++files;
    }
  }
  EXPECT_GT(files, 20);
}

}  // namespace
}  // namespace gpusched
