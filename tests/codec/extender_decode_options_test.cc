// nodeCacheCapable=false fast paths: items the model already knows are not
// decoded, and the filter steps (DecodeFilterRequest, FilterResultWriter)
// answer exactly what DecodeExtenderArgs +
// EncodeFilterResult answer, while serializing only the passing items.
#include <string>
#include <vector>

#include "api/codec/extender_json.h"
#include "api/codec/json_writer.h"
#include "gtest/gtest.h"

namespace gpusched {
namespace {

std::string NodeJson(const std::string& name, const std::string& version,
                     const std::string& cpu) {
  return R"({"metadata":{"name":")" + name + R"(","resourceVersion":")" +
         version +
         R"(","labels":{"zone":"a"}},"status":{"allocatable":{"cpu":")" + cpu +
         R"("},"images":[{"names":["x"],"sizeBytes":1}]}})";
}

std::string Body() {
  return R"({"Pod":{"metadata":{"name":"p","namespace":"ns"}},"Nodes":{"items":[)" +
         NodeJson("a", "1", "4") + "," + NodeJson("b", "7", "8") + "," +
         NodeJson("c", "3", "16") + R"(]},"NodeNames":null})";
}

TEST(ExtenderDecodeOptionsTest, KnownNodesAreNamedButNotDecoded) {
  DecodeOptions options{
      .known_node = [](std::string_view name, std::string_view version) {
        return name == "b" && version == "7";
      }};
  absl::StatusOr<ExtenderArgs> args = DecodeExtenderArgs(Body(), options);
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(args->item_names, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(args->node_names, (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_EQ(args->nodes.size(), 2u);
  EXPECT_EQ(args->nodes[0].meta.name, "a");
  EXPECT_EQ(args->nodes[1].meta.name, "c");
  EXPECT_EQ(args->nodes[1].allocatable.Get("cpu"), 16000);
  EXPECT_EQ(args->node_json.size(), 3u);
}

TEST(ExtenderDecodeOptionsTest, KnownNodeWithBadFieldsElsewhereIsNotRejected) {
  // Only name and resourceVersion of a known item are read: it was decoded
  // when the model took that version.
  const std::string body =
      R"({"Pod":{"metadata":{"name":"p"}},"Nodes":{"items":[{"metadata":)"
      R"({"name":"a","resourceVersion":"1"},"status":{"allocatable":{"cpu":"lots"}}}]}})";
  EXPECT_FALSE(DecodeExtenderArgs(body).ok());
  DecodeOptions options{
      .known_node = [](std::string_view, std::string_view) { return true; }};
  EXPECT_TRUE(DecodeExtenderArgs(body, options).ok());
}

TEST(ExtenderDecodeOptionsTest, EmptyResourceVersionIsAlwaysDecoded) {
  const std::string body =
      R"({"Pod":{"metadata":{"name":"p"}},"Nodes":{"items":[)" +
      NodeJson("a", "", "4") + "]}}";
  int asked = 0;
  DecodeOptions options{.known_node = [&](std::string_view, std::string_view) {
    ++asked;
    return true;
  }};
  absl::StatusOr<ExtenderArgs> args = DecodeExtenderArgs(body, options);
  ASSERT_TRUE(args.ok());
  EXPECT_EQ(asked, 0);
  EXPECT_EQ(args->nodes.size(), 1u);
}

// The filter verb's three steps: decode, the verdicts as the service would
// report them, encode.
struct Verdict {
  FitVerdict::Code code;
  std::string reason;
};
absl::StatusOr<std::string> Filter(std::string_view body,
                                   const std::vector<Verdict>& verdicts,
                                   std::vector<std::string>* names = nullptr) {
  absl::StatusOr<FilterRequest> request =
      DecodeFilterRequest(body, DecodeOptions{});
  if (!request.ok()) return request.status();
  EXPECT_TRUE(request->args.node_json.empty());
  if (names != nullptr) *names = request->args.node_names;
  FilterResultWriter result(*request);
  for (const Verdict& verdict : verdicts)
    result.Add(verdict.code, verdict.reason);
  return result.Finish();
}

TEST(ExtenderDecodeOptionsTest, FilterStepsMatchDecodeThenEncode) {
  FilterOutcome outcome;
  outcome.passed = {"a", "c"};
  outcome.failed = {{"b", "needs 4 \"GPUs\"\n"}};
  absl::StatusOr<ExtenderArgs> args = DecodeExtenderArgs(Body());
  ASSERT_TRUE(args.ok());
  const std::string expected = EncodeFilterResult(*args, outcome);
  std::vector<std::string> seen;
  // a passes, b fails as in `outcome`, c passes.
  absl::StatusOr<std::string> got =
      Filter(Body(),
             {{FitVerdict::Code::kFits, ""},
              {FitVerdict::Code::kUnavailable, outcome.failed[0].second},
              {FitVerdict::Code::kFits, ""}},
             &seen);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, expected);
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_NE(got->find(R"("name":"c")"), std::string::npos);
  EXPECT_EQ(got->find(R"("name":"b")"), std::string::npos);
}

// A fitting node filter leaves out (filter_keep_best) is in neither list,
// and its Nodes item is not echoed: kube-scheduler drops it.
TEST(ExtenderDecodeOptionsTest, FilterLeavesOutNotChosenNodes) {
  absl::StatusOr<std::string> got =
      Filter(Body(), {{FitVerdict::Code::kNotChosen, ""},
                      {FitVerdict::Code::kUnavailable, "busy"},
                      {FitVerdict::Code::kFits, ""}});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->find(R"("name":"a")"), std::string::npos) << *got;
  EXPECT_NE(got->find(R"("name":"c")"), std::string::npos) << *got;
  EXPECT_NE(got->find(R"("b":"busy")"), std::string::npos) << *got;
  EXPECT_EQ(got->find(R"("a":)"), std::string::npos) << *got;
}

// Both lists (kube-scheduler sends one): the names are the candidates, and
// Nodes items are matched to the passing names in item order, as
// EncodeFilterResult matches them.
TEST(ExtenderDecodeOptionsTest, FilterWithNamesAndItems) {
  std::string body = Body();
  body.replace(body.find(R"("NodeNames":null)"), 16,
               R"("NodeNames":["c","b","a"])");
  FilterOutcome outcome;
  outcome.passed = {"c", "a"};
  outcome.failed = {{"b", "busy"}};
  absl::StatusOr<ExtenderArgs> args = DecodeExtenderArgs(body);
  ASSERT_TRUE(args.ok()) << args.status();
  absl::StatusOr<std::string> got =
      Filter(body, {{FitVerdict::Code::kFits, ""},             // c
                    {FitVerdict::Code::kUnavailable, "busy"},  // b
                    {FitVerdict::Code::kFits, ""}});           // a
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, EncodeFilterResult(*args, outcome));
  EXPECT_NE(got->find(R"("NodeNames":["c","a"])"), std::string::npos);
  EXPECT_NE(got->find(R"("name":"c")"), std::string::npos);
}

TEST(ExtenderDecodeOptionsTest, FilterReportsBadRequests) {
  absl::StatusOr<std::string> got = Filter(R"({"NodeNames":["a"]})", {});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(JsonWriterTest, EscapesLongAndShortTextAlike) {
  // Runs longer than the 8-byte fast path, with escapes at every offset.
  for (size_t at = 0; at < 20; ++at) {
    std::string text(20, 'x');
    text[at] = '"';
    std::string out;
    AppendJsonEscaped(out, text);
    std::string expected = text.substr(0, at) + "\\\"" + text.substr(at + 1);
    EXPECT_EQ(out, expected) << at;
  }
  // Every length up to two words, with a control character at every
  // offset: the padded tail check must see the last bytes too.
  for (size_t size = 1; size <= 16; ++size) {
    for (size_t at = 0; at < size; ++at) {
      std::string text(size, 'y');
      text[at] = '\n';
      std::string escaped;
      AppendJsonEscaped(escaped, text);
      EXPECT_EQ(escaped, text.substr(0, at) + "\\n" + text.substr(at + 1))
          << size << " " << at;
    }
  }
  std::string out;
  AppendJsonEscaped(out, std::string("a\x01\\\tb\x7f", 6));
  EXPECT_EQ(out, "a\\u0001\\\\\\tb\x7f");
}

}  // namespace
}  // namespace gpusched
